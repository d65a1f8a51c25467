// How the page shows the fair deal's checks: a hand's verdict once it ends, and a
// table's rebuild of every shuffle once it closes and reveals its seed. A failure is
// loud; a hand this page saw no tile of is not called verified.

import { h, counted } from "./dom.js";

/** @param {import("./state.js").Result} result */
export function verdictView(result) {
  if (result.verifying) return h("div", { class: "verify pending", text: "Checking the deal…" });
  const verdict = result.verdict;
  if (!verdict) return null;
  // A hand this page saw no tile of is not a verified one: nothing was checked yet.
  const unseen = verdict.ok && !verdict.tilesChecked;
  return h(
    "div",
    { class: `verify ${unseen ? "unseen" : verdict.ok ? "ok" : "bad"}`, role: verdict.ok ? "status" : "alert" },
    h("strong", { text: unseen ? "Nothing to check yet" : verdict.ok ? "✔ Deal verified" : "✖ DEAL CHECK FAILED" }),
    h("span", { class: "verify-detail", text: verdict.ok ? ` ${verdict.detail}` : ` ${verdict.detail} Do not trust this server.` }),
    h("details", {}, h("summary", { text: "Details" }), h("dl", {}, h("dt", { text: "Commitment" }), h("dd", { class: "mono", text: result.commitment }))),
  );
}

/**
 * A table's full rebuild: waiting for its seed, done, or failed (loud).
 * @param {import("./deals.js").DealLedger} ledger
 */
export function auditView(ledger) {
  const n = ledger.hands.size;
  const table = { tableId: ledger.tableId };
  // A table already broken fails its rebuild whatever seed it reveals: said at once.
  const audit = ledger.audit ?? (ledger.broken ? { ok: false, detail: ledger.broken } : null);
  if (!audit) {
    if (!n) return null;
    return h("div", { class: "audit pending", dataset: table, text: `${counted(n, "hand")} kept: the whole shuffle of each is rebuilt when the table closes and reveals its seed.` });
  }
  const { ok, detail } = audit;
  return h(
    "div",
    { class: `audit verify ${ok ? "ok" : "bad"}`, role: ok ? "status" : "alert", dataset: table },
    h("strong", { text: ok ? `✔ Table ${ledger.tableId}: shuffle rebuilt` : `✖ SHUFFLE CHECK FAILED at table ${ledger.tableId}` }),
    h("span", { class: "verify-detail", text: ok ? ` ${detail}` : ` ${detail} Do not trust this server.` }),
  );
}

/** @param {string} seed */
export const short = (seed) => (seed.length > 16 ? `${seed.slice(0, 16)}…` : seed);
