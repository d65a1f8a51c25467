// The shuffles of the tables this page sat or watched at, checked once each table's
// seed is out: every hand kept is rebuilt from it (deals.js), and at a table this
// page sat at, every hand of the table's history too. A table left is asked for its
// seed until it closes; the lobby shows what each check found.

import { Refused } from "./connection.js";
import { HISTORY_LIMIT } from "./deals.js";

/** @typedef {import("./deals.js").DealLedger} DealLedger */

/** How long to wait between asks for a left table's seed: it comes once the table has closed. */
const SEED_POLL_MS = [250, 500, 1000, 2000, 4000, 8000, 15000, 30000, 60000];

/**
 * A table this page left: ask for its hands until they carry its seed, which the
 * server gives once the table has closed, and rebuild every hand seen there.
 * @param {any} page @param {string} tableId
 */
export async function awaitSeed(page, tableId) {
  const ledger = page.ledgers.get(tableId);
  if (!ledger || (!ledger.hands.size && !ledger.hadSeat) || ledger.audit) return;
  page.audits.set(tableId, ledger);
  page.drawLobby();
  for (let attempt = 0; !ledger.audit; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, SEED_POLL_MS[Math.min(attempt, SEED_POLL_MS.length - 1)]));
    // Back at the table meanwhile: its own events will carry the seed.
    if (page.tables.has(tableId) || page.audits.get(tableId) !== ledger) return;
    if (await askSeed(page, tableId, ledger)) return;
  }
}

/**
 * Ask once for the seed of a table this page left: its hands are rebuilt if it came.
 * True once there is nothing more to ask: the seed came, or the server refused (a
 * table it no longer knows is said to be forgotten).
 * @param {any} page @param {string} tableId @param {any} ledger
 */
export async function askSeed(page, tableId, ledger) {
  let reply;
  try {
    reply = await page.conn.request({ type: "list_hands", table_id: tableId, limit: 1 });
  } catch (error) {
    if (!(error instanceof Refused)) return false;
    // Its server restarted and forgot the table, but told this page the seed as it stopped.
    if (error.code === "unknown_table" && ledger.revealedSeed) return rebuild(page, tableId, ledger, ledger.revealedSeed);
    ledger.forgotten = error.code === "unknown_table";
    page.drawLobby();
    return true;
  }
  const seed = reply.hands.find((/** @type {any} */ x) => x.table_seed)?.table_seed;
  if (!seed) return false;
  return rebuild(page, tableId, ledger, seed);
}

/**
 * A table this page left closed and revealed its seed: a stopping server stands every
 * seat up, then closes its tables (PROTOCOL.md, "A server stops"). Rebuilt now if the
 * history still comes, else once the server is back, which may no longer know the table.
 * @param {any} page @param {string} tableId @param {string} seed
 */
export function revealedAfterLeaving(page, tableId, seed) {
  const ledger = page.audits.get(tableId);
  if (!ledger || ledger.audit) return;
  ledger.revealedSeed = seed;
  rebuild(page, tableId, ledger, seed);
}

/**
 * A table's seed is out: rebuild every hand this page kept and, at a table it sat
 * at, every hand of the table's history, which holds those it never saw or forgot
 * in a reload. False if the history did not come: it is asked for again (see
 * awaitSeed, welcome).
 * @param {any} page @param {string} tableId @param {DealLedger} ledger @param {string} seed
 */
export async function rebuild(page, tableId, ledger, seed) {
  let history = null;
  if (ledger.hadSeat) {
    try {
      history = (await page.conn.request({ type: "list_hands", table_id: tableId, limit: HISTORY_LIMIT })).hands;
    } catch (error) {
      // A server that no longer knows the table keeps no history of it: the audit says what that leaves unchecked.
      if (!(error instanceof Refused && error.code === "unknown_table")) return false;
      history = [];
    }
  }
  // Asked twice at once (see welcome), the first answer rebuilds the hands.
  if (!ledger.audit) {
    if (history) await ledger.revealWithHistory(seed, history);
    else ledger.reveal(seed);
    audited(page, tableId);
  }
  return true;
}

/** A table's seed came out: say what its rebuild found. @param {any} page @param {string} tableId */
export function audited(page, tableId) {
  const ledger = page.ledgers.get(tableId);
  if (!ledger?.audit) return;
  page.ledgers.delete(tableId);
  if (ledger.hands.size || ledger.hadSeat) page.audits.set(tableId, ledger);
  const { ok, detail } = ledger.audit;
  page.toast(ok ? `Table ${tableId}: ${detail}` : `SHUFFLE CHECK FAILED at table ${tableId}: ${detail}`, ok ? "" : "bad");
  page.drawLobby();
  page.redraw();
}
