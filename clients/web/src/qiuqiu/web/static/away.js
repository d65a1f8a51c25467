// What the server did with this page's seats while its connection was down. Its timer
// played their turns (PROTOCOL.md, "The session"): the ends of those hands come again
// after the reconnect, as events after a gap, which say nothing of what the seat had
// before them; a seat away past its grace period was stood up, and no `table_left`
// reached the page. The table's history (`list_hands`) says how each hand went for the
// seat, as the terminal client and the SDK read it, so the evening's figure stays what
// the balance says.

import { chips, counted } from "./dom.js";
import { HISTORY_LIMIT } from "./deals.js";
import { awaitSeed } from "./shuffles.js";

/**
 * @typedef {{handId: number, net: number, potWon: number}} PlayedFor
 */

/**
 * The hands of a `hand_list` that `accountId` was dealt into, numbered from `from` up to
 * (not including) `to`, with what each made it: a voided hand moved no chip and is none.
 * `potWon` is the hand's whole pot when the seat won a share of it, as the page counts
 * the hands it sees end.
 * @param {any[]} hands @param {string} accountId @param {number} from @param {number} to
 * @returns {PlayedFor[]}
 */
function playedFor(hands, accountId, from, to) {
  const played = [];
  for (const hand of hands) {
    if (hand.voided || hand.hand_id < from || hand.hand_id >= to) continue;
    const seat = hand.seats.find((/** @type {any} */ s) => s.account_id === accountId);
    if (!seat) continue;
    const awards = hand.events.filter((/** @type {any} */ e) => e.type === "pot_awarded");
    const won = awards.some((/** @type {any} */ a) => a.shares.some((/** @type {any} */ x) => x.seat === seat.seat && x.amount > 0));
    const pot = awards.reduce((/** @type {number} */ sum, /** @type {any} */ a) => sum + a.amount, 0);
    played.push({ handId: hand.hand_id, net: seat.after - seat.before, potWon: won ? pot : 0 });
  }
  return played;
}

/**
 * The first hand whose end the page may not have seen at a table where it sits: the one
 * in play (or just over) when the connection dropped, or the first of the table.
 * @param {import("./state.js").TableState} state
 */
const awayFrom = (state) => state.hand?.handId ?? 0;

/**
 * Back after the connection dropped (`page` is app.js's App): at each table where the
 * page sat, the hands the server played for the seat meanwhile are told and counted
 * once its snapshot comes (`tellAway`); a seat the welcome no longer lists stood up
 * meanwhile, and the lobby says so, as it says a table left. The tables whose seat is gone.
 * @param {any} page @param {any} welcome
 * @returns {Set<string>}
 */
export function cameBack(page, welcome) {
  const gone = new Set();
  for (const state of /** @type {Map<string, import("./state.js").TableState>} */ (page.tables).values()) {
    if (state.you === null) continue;
    const id = state.tableId;
    if (welcome.tables.includes(id) || welcome.moving.includes(id)) {
      page.away.set(id, awayFrom(state));
      continue;
    }
    gone.add(id);
    awaitSeed(page, id);
    const tally = page.tableTally(id);
    page.forgetTally(id);
    const farewell = { tableId: id, tally, balance: welcome.balance, why: goneWhy(page.leaving.has(id)) };
    page.farewell = farewell;
    countInto(page, id, awayFrom(state), Infinity, tally).then((played) => {
      farewell.why += goneHands(played);
      page.drawLobby();
    });
  }
  return gone;
}

/**
 * The snapshot of a table the page sat at before the connection dropped: say in its log
 * how each hand played for the seat meanwhile went, as the ends it saw are said.
 * @param {any} page @param {import("./state.js").TableState} state
 */
export async function tellAway(page, state) {
  const from = page.away.get(state.tableId);
  page.away.delete(state.tableId);
  if (from === undefined || state.you === null) return;
  // The hand the snapshot shows is over only if its phase says so; its end came replayed.
  const to = state.hand ? state.hand.handId + (state.hand.phase === "ended" ? 1 : 0) : Infinity;
  const played = await countInto(page, state.tableId, from, to, page.tableTally(state.tableId));
  const lines = (played ?? []).map(({ handId, net }) => `Hand #${handId} was played out while you were away: ${signed(net)} net for you.`);
  if (played === null) lines.push("The hands played for you while you were away could not be listed: they are not in this evening's figure.");
  // Said where the page came back, before the hand it came back into and what followed.
  const now = page.tables.get(state.tableId) ?? state;
  const back = now.log.findLastIndex((/** @type {any} */ line) => line.text === "Back online.");
  now.log.splice(back < 0 ? now.log.length : back + 1, 0, ...lines.map((text) => ({ text, kind: "warn" })));
  page.redraw();
}

/**
 * Count the hands the server played for the page's seat at `tableId` while it was away,
 * from hand `from` up to `to`, into `tally` and the evening's, both kept: those not
 * counted yet. Them, or null if the server could not list them.
 * @param {any} page @param {string} tableId @param {number} from @param {number} to
 * @param {import("./tally.js").Tally} tally
 * @returns {Promise<PlayedFor[] | null>}
 */
async function countInto(page, tableId, from, to, tally) {
  let reply;
  try {
    reply = await page.conn.request({ type: "list_hands", table_id: tableId, limit: HISTORY_LIMIT });
  } catch {
    return null;
  }
  const key = (/** @type {number} */ handId) => `${tableId}:${handId}`;
  const played = playedFor(reply.hands, page.accountId, from, to).filter((p) => !tally.seen.includes(key(p.handId)));
  for (const { handId, net, potWon } of played) for (const t of [tally, page.session]) t.add(key(handId), net, potWon);
  if (page.tallies.get(tableId) === tally) tally.save(sessionStorage, `qiuqiu.table.${tableId}`);
  page.session.save(sessionStorage, "qiuqiu.session");
  page.drawAccount();
  return played;
}

/**
 * Why a seat the page sat at is gone when it comes back, in the farewell's words.
 * @param {boolean} asked whether the page had asked it to stand up
 */
const goneWhy = (asked) =>
  asked
    ? "You left while the connection was down: your chips went back to your balance."
    : "Your seat was given up while the connection was down (you were away past the grace period): your chips went back to your balance.";

/** What the hands played for a seat gone meanwhile came to. @param {PlayedFor[] | null} played */
function goneHands(played) {
  if (played === null) return " The hands played for you meanwhile could not be listed: they are not in these figures.";
  if (!played.length) return "";
  return ` Meanwhile ${counted(played.length, "hand")} ${played.length > 1 ? "were" : "was"} played for you: ${signed(played.reduce((sum, p) => sum + p.net, 0))} net.`;
}

/** The event that says the server played each action the page sends, and its name in a sentence. */
const ANSWERS = new Map([["check", ["checked", "check"]], ["call", ["called", "call"]], ["bet", ["bet_placed", "bet"]], ["raise", ["raised", "raise"]], ["fold", ["folded", "fold"]], ["declare_cut", ["cut_declared", "cut"]]]);

/**
 * @typedef {{tableId: string, handId: number, type: string, seq: number}} Acted
 * An action the page sent, its table's `seq` then, until an event answers it.
 */

/**
 * Whether the action the page sent as the connection dropped was played, read from the
 * events of the hand in the snapshot that came back (those after it, in order): said,
 * so the player knows it went once, or not at all. Null where it cannot say.
 * @param {Acted} acted @param {any} snapshot @param {import("./state.js").TableState} state
 */
export function actedAway(acted, snapshot, state) {
  const hand = snapshot.table.hand;
  const [answer, word] = ANSWERS.get(acted.type) ?? [];
  if (!hand?.events || hand.hand_id !== acted.handId || !answer) return null;
  // The timer's own check or fold follows its turn_timed_out: whichever comes first tells.
  const first = hand.events.find((/** @type {any} */ e) => e.seq > acted.seq && e.seat === state.you && (e.type === answer || e.type === "turn_timed_out"));
  if (first?.type === answer) return `Your ${word} reached the server before the connection dropped, and was played.`;
  if (first) return `Your ${word} did not reach the server before the connection dropped: your turn ran out.`;
  if (state.legal) return `Your ${word} did not reach the server before the connection dropped: it is still your turn.`;
  return null;
}

/** @param {number} n */
export const signed = (n) => (n > 0 ? `+${chips(n)}` : n < 0 ? `−${chips(-n)}` : "±0");
