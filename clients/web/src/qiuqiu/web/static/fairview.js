// How the page shows the fair deal's checks: a hand's verdict once it ends (its deal,
// and its payouts), and a table's rebuild of every shuffle once it closes and reveals
// its seed. A failure is loud; a hand this page saw no tile of is not called verified.

import { h, counted } from "./dom.js";

/**
 * A hand's checks: its deal (the tiles against the commitment) and, for a hand this
 * page knows from its start, its payouts (the chips against the rules). A failed deal
 * check is what shows, else a failed payout check, at once (it hashes nothing, so it
 * does not wait for the deal's); a hand that passes both says so in one line.
 * @param {import("./state.js").Result} result
 */
export function verdictView(result) {
  const { verdict, payout } = result;
  const dealFailed = verdict && !verdict.ok;
  if (payout && !payout.ok && !dealFailed) return failure("✖ PAYOUT CHECK FAILED", payout.detail, result);
  if (result.verifying) return h("div", { class: "verify pending", text: "Checking the deal…" });
  if (!verdict) return null;
  if (!verdict.ok) return failure("✖ DEAL CHECK FAILED", verdict.detail, result);
  // A hand this page saw no tile of is not a verified one: nothing was checked yet.
  const unseen = !verdict.tilesChecked;
  const paid = payout ? ` ${payout.detail}` : "";
  return h(
    "div",
    { class: `verify ${unseen ? "unseen" : "ok"}`, role: "status" },
    h("strong", { text: unseen ? "Nothing to check yet" : "✔ Deal verified" }),
    h("span", { class: "verify-detail", text: ` ${verdict.detail}${paid}` }),
    commitment(result),
  );
}

/** @param {string} title @param {string} detail @param {import("./state.js").Result} result */
const failure = (title, detail, result) =>
  h("div", { class: "verify bad", role: "alert" }, h("strong", { text: title }), h("span", { class: "verify-detail", text: ` ${detail} Do not trust this server.` }), commitment(result));

/** @param {import("./state.js").Result} result */
const commitment = (result) => h("details", {}, h("summary", { text: "Details" }), h("dl", {}, h("dt", { text: "Commitment" }), h("dd", { class: "mono", text: result.commitment })));

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
    if (ledger.forgotten) return h("div", { class: "audit pending", dataset: table, text: `Table ${ledger.tableId}: ${counted(n, "hand")} kept, whose shuffle cannot be rebuilt: the server no longer knows the table (it restarted without keeping its tables), so its seed will not be revealed.` });
    const history = ledger.hadSeat ? ", and of every hand of the table's history," : "";
    return h("div", { class: "audit pending", dataset: table, text: `Table ${ledger.tableId}: ${counted(n, "hand")} kept; the whole shuffle of each${history} is rebuilt when the table closes and reveals its seed.` });
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
