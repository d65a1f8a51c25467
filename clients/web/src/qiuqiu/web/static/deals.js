// What this page saw of each hand at one table: the leaves, commitment and client
// seeds of `hand_started`, and every opening it was sent (its own tiles, and the
// hands shown down). Each hand is checked when it ends; all of them are kept
// until the table's seed comes out (`table_closed`, or `list_hands` once the
// table has closed), and then every one of them is rebuilt from it. At a table
// this page sat at, so are the hands of the table's history (`list_hands`): those
// it never saw, or forgot in a reload.

import { counted } from "./dom.js";
import { verifyHand, verifyReveal } from "./verify.js";

/** The most hands `list_hands` gives of a table: the last ones, as many as the server keeps. */
export const HISTORY_LIMIT = 100;

/**
 * @typedef {import("./verify.js").HandSeen} HandSeen
 * @typedef {import("./verify.js").Opening} Opening
 * @typedef {import("./verify.js").Verdict} Verdict
 * @typedef {{ok: boolean, detail: string}} Audit the full rebuild of a table's hands
 */

export class DealLedger {
  /**
   * @param {string} tableId
   * @param {string} seedCommitment the table's `seed_commitment`, published before any seat could send a seed
   * @param {() => string[] | null} mySeeds the client seeds this page may have sat with, when it knows
   * @param {(listed: string | undefined) => string | null} [dealtWithout] told the seed a hand
   *   lists for this page's seat: why it is one hand too many dealt without the seed this
   *   page sent and the server has not confirmed (SeedBook.dealt), or null
   */
  constructor(tableId, seedCommitment, mySeeds, dealtWithout = () => null) {
    this.tableId = tableId;
    this.seedCommitment = seedCommitment;
    this.mySeeds = mySeeds;
    this.dealtWithout = dealtWithout;
    /** @type {Map<number, HandSeen>} */
    this.hands = new Map();
    /** @type {Audit | null} */
    this.audit = null;
    /** Set once the server knows neither the table nor any hand of it (an in-memory one restarted): its seed never comes. */
    this.forgotten = false;
    /** The seed a closing table revealed to this page after standing its seat up (a server stopping), kept until it is rebuilt from. @type {string | null} */
    this.revealedSeed = null;
    /** Why no revealed seed can vindicate this table, once something showed it. @type {string | null} */
    this.broken = null;
    /** The dealer bot's seat: the button of every hand, with the empty seed. @type {number | null} */
    this.botSeat = null;
    /** Set once this page sat here: its rebuild then covers the table's history too. */
    this.hadSeat = false;
    /**
     * The last hand seen start, or in a snapshot, which the next one must follow (see
     * outOfTurn). @type {{handId: number, button: number} | null}
     */
    this.lastHand = null;
    /**
     * Who sat where in each hand this page saw, for the replay of a hand whose record
     * has no names (recorded before names were kept): a seat may have changed hands since.
     * @type {Map<number, Map<number, {name: string, isBot: boolean}>>}
     */
    this.seated = new Map();
  }

  /** The players at `seats` as hand `handId` is played. @param {number} handId @param {Iterable<{seat: number, name: string, isBot: boolean}>} seats */
  sat(handId, seats) {
    if (!this.seated.has(handId)) this.seated.set(handId, new Map([...seats].map((s) => [s.seat, { name: s.name, isBot: s.isBot }])));
  }

  /**
   * The table's `seed_commitment` as a snapshot shows it. It must be the one this
   * ledger opened with: a server that drew its seed again once a player's seed was in
   * could have picked the decks, and its new seed would rebuild every one of them.
   * Returns whether this is what first broke the table.
   * @param {string | null | undefined} seedCommitment
   */
  committed(seedCommitment) {
    if (!seedCommitment || seedCommitment === this.seedCommitment || this.broken) return false;
    this.broken = this.seedCommitment
      ? `The table's seed commitment changed while it was open, from ${this.seedCommitment.slice(0, 12)}… to ${seedCommitment.slice(0, 12)}…: its seed was drawn again after the players' seeds were in.`
      : "The table published no seed commitment before this page sent its seed: the server could have drawn its seed to suit that one.";
    return true;
  }

  /**
   * A hand began. `mySeat` is this page's seat if it was dealt in.
   * @param {{hand_id: number, button: number, commitment: string, leaves: string[],
   *          stacks: {seat: number}[], client_seeds: {seat: number, client_seed: string}[]}} started
   * @param {number | null} mySeat
   */
  start(started, mySeat) {
    const last = this.lastHand;
    this.lastHand = { handId: started.hand_id, button: started.button };
    if (this.hands.has(started.hand_id)) return;
    const wrong = last && this.outOfTurn(last, started);
    const dealt = started.client_seeds.some((x) => x.seat === mySeat);
    const hand = handSeen(this.tableId, started, this.botSeat);
    if (dealt) Object.assign(hand, { mySeat, mySeeds: this.mySeeds() });
    if (wrong) hand.conflicts.push(wrong);
    const unconfirmed = dealt && this.dealtWithout(started.client_seeds.find((x) => x.seat === mySeat)?.client_seed);
    if (unconfirmed) hand.conflicts.push(unconfirmed);
    this.hands.set(started.hand_id, hand);
  }

  /**
   * Why `started` cannot come after `last`. A deck is fixed by its hand's number, and
   * the button says which seat gets which positions of it: a server free to choose
   * either could choose the hands.
   * @param {{handId: number, button: number}} last
   * @param {{hand_id: number, button: number, stacks: {seat: number}[]}} started
   * @returns {string | null}
   */
  outOfTurn(last, started) {
    if (started.hand_id !== last.handId + 1) {
      return `The server skipped from hand #${last.handId} to hand #${started.hand_id}: it could deal whichever hand's deck suited it.`;
    }
    if (this.botSeat !== null) return null; // the bot's seat is always the button (verifyHand)
    const seats = started.stacks.map((x) => x.seat).sort((a, b) => a - b);
    const moved = seats.find((x) => x > last.button) ?? seats[0];
    if (started.button === moved) return null;
    return `The button moved from seat ${last.button + 1} to seat ${started.button + 1}, not to seat ${moved + 1}: the server chose which seat got which tiles.`;
  }

  /**
   * The hand in a snapshot, and the openings it shows (this page's own seat, and
   * any hand shown down).
   * @param {any} view a snapshot's `table`
   */
  fromSnapshot(view) {
    this.botSeat = view.options.dealer_bot ? view.options.seats - 1 : null;
    this.lastHand = null; // a snapshot may come after hands this page missed
    if (!view.hand) return;
    this.start(view.hand, view.you ?? null);
    for (const seat of view.seats) if (seat.tiles) this.open(view.hand.hand_id, seat.seat, seat.openings ?? [], seat.tiles);
  }

  /**
   * The tiles shown for `seat` in hand `handId` and their openings. They must be
   * the same tiles, and a position opened twice must open the same way both times.
   * @param {number} handId @param {number} seat @param {Opening[]} openings @param {string[]} tiles
   */
  open(handId, seat, openings, tiles) {
    const hand = this.hands.get(handId);
    if (!hand) return;
    const opened = openings.map((x) => x.tile).sort();
    if (opened.join(" ") !== [...tiles].sort().join(" ")) {
      hand.conflicts.push(`Seat ${seat + 1} was shown ${tiles.join(" ") || "no tile"}, but the openings sent are of ${opened.join(" ") || "no tile"}.`);
    }
    const known = hand.openings.get(seat) ?? [];
    for (const { position, tile, salt } of openings) {
      const before = known.find((x) => x.position === position);
      if (!before) known.push({ position, tile, salt });
      else if (before.tile !== tile) {
        hand.conflicts.push(`Position ${position} of seat ${seat + 1} was opened as ${before.tile} and later as ${tile}.`);
      } else if (before.salt !== salt) {
        hand.conflicts.push(`Position ${position} of seat ${seat + 1} was opened as ${tile} twice, with two different salts.`);
      }
    }
    hand.openings.set(seat, known);
  }

  /**
   * Check hand `handId` against its commitment, or null if this page never saw it start.
   * @param {number} handId
   * @returns {Promise<Verdict> | null}
   */
  check(handId) {
    const hand = this.hands.get(handId);
    return hand ? verifyHand(hand) : null;
  }

  /**
   * The table's seed is out: rebuild every hand kept. The first hand that does not
   * rebuild is named.
   * @param {string} tableSeed
   * @returns {Audit}
   */
  reveal(tableSeed) {
    if (this.audit) return this.audit;
    if (this.broken) {
      this.audit = { ok: false, detail: this.broken };
      return this.audit;
    }
    const hands = [...this.hands.values()].sort((a, b) => a.handId - b.handId);
    for (const hand of hands) {
      const verdict = verifyReveal(hand, tableSeed, this.seedCommitment);
      if (!verdict.ok) {
        this.audit = { ok: false, detail: verdict.detail };
        return this.audit;
      }
    }
    const n = hands.length;
    // "All" would be untrue after a reload, which forgets the hands before it.
    this.audit = { ok: true, detail: `${counted(n, "hand")} kept, the shuffle of each rebuilt from the revealed seed.` };
    return this.audit;
  }

  /**
   * The table's seed is out, and `history` is its `hand_list` (its last hands, as a
   * spectator saw them): rebuild every hand kept and every hand of it, and say how
   * many hands the table dealt that neither holds. A hand of the history this page
   * kept must be the hand it saw dealt; one it did not keep is checked as it ends
   * first (its leaves, and the tiles shown down). The first hand that fails is named.
   * @param {string} tableSeed
   * @param {any[]} history
   * @returns {Promise<Audit>}
   */
  async revealWithHistory(tableSeed, history) {
    if (this.audit) return this.audit;
    const fail = (/** @type {string} */ detail) => (this.audit ??= { ok: false, detail });
    if (this.broken) return fail(this.broken);
    /** @type {Map<number, HandSeen>} */
    const hands = new Map(this.hands);
    /** Hands the history lists without their deal: called off when their server stopped. */
    const undealt = new Set();
    for (const played of [...history].sort((a, b) => a.hand_id - b.hand_id)) {
      if (played.table_seed && played.table_seed !== tableSeed) return fail("The server revealed two different seeds for this table.");
      let seen;
      try {
        seen = seenInHistory(this.tableId, played, this.botSeat);
      } catch {
        return fail(`Hand #${played.hand_id}'s record in the table's history does not say how it was dealt.`);
      }
      const kept = this.hands.get(played.hand_id);
      if (!seen && !played.voided) return fail(`Hand #${played.hand_id}'s record in the table's history does not say how it was dealt.`);
      if (!seen) {
        if (!kept) undealt.add(played.hand_id);
      } else if (kept) {
        const seeds = (/** @type {HandSeen} */ x) => JSON.stringify([...x.clientSeeds].sort((a, b) => a.seat - b.seat));
        if (kept.commitment !== seen.commitment || seeds(kept) !== seeds(seen)) return fail(`Hand #${seen.handId}: the table's history is not the hand this page saw dealt.`);
      } else {
        const verdict = await verifyHand(seen);
        if (!verdict.ok) return fail(`Hand #${seen.handId}, in the table's history: ${verdict.detail}`);
        hands.set(seen.handId, seen);
      }
    }
    for (const hand of [...hands.values()].sort((a, b) => a.handId - b.handId)) {
      const verdict = verifyReveal(hand, tableSeed, this.seedCommitment);
      if (!verdict.ok) return fail(verdict.detail);
    }
    // Hands are numbered from 1, one after another: a number neither holds is a hand unchecked.
    const last = Math.max(0, ...hands.keys(), ...undealt);
    // Before the oldest of a full history: past what the server keeps.
    const oldest = history.length < HISTORY_LIMIT ? 1 : Math.min(...history.map((x) => x.hand_id));
    let older = 0, unlisted = 0;
    for (let id = 1; id <= last; id++) {
      if (hands.has(id) || undealt.has(id)) continue;
      if (id < oldest) older += 1;
      else unlisted += 1;
    }
    const n = hands.size;
    const said = [
      older + unlisted + undealt.size
        ? `${counted(n, "hand")} checked, the shuffle of each rebuilt from the revealed seed.`
        : `${counted(n, "hand")} checked, every hand the table dealt: the shuffle of each rebuilt from the revealed seed.`,
    ];
    if (older) said.push(`${notChecked(older, "earlier hand")}: the server keeps only a table's last ${HISTORY_LIMIT} hands, and this page did not see ${older === 1 ? "it" : "them"}.`);
    if (unlisted) said.push(`${notChecked(unlisted, "hand")}: the table's history does not list ${unlisted === 1 ? "it" : "them"}, and this page did not see ${unlisted === 1 ? "it" : "them"}.`);
    if (undealt.size) said.push(`${notChecked(undealt.size, "hand")}: called off when the server stopped, ${undealt.size === 1 ? "its record does" : "their records do"} not say how ${undealt.size === 1 ? "it was" : "they were"} dealt.`);
    this.audit = { ok: true, detail: said.join(" ") };
    return this.audit;
  }
}

/** "3 hands were not checked", in the number's grammar. @param {number} n @param {string} noun */
const notChecked = (n, noun) => `${counted(n, noun)} ${n === 1 ? "was" : "were"} not checked`;

/**
 * A hand as its `hand_started` (or a snapshot's hand) commits to it, no tile opened yet.
 * @param {string} tableId
 * @param {{hand_id: number, button: number, commitment: string, leaves: string[],
 *          stacks: {seat: number}[], client_seeds: {seat: number, client_seed: string}[]}} started
 * @param {number | null} botSeat
 * @returns {HandSeen}
 */
function handSeen(tableId, started, botSeat) {
  const seats = (/** @type {{seat: number}[]} */ list) => list.map((x) => x.seat + 1).sort((a, b) => a - b).join(", ");
  const listed = seats(started.client_seeds), dealtIn = seats(started.stacks);
  return {
    tableId,
    handId: started.hand_id,
    button: started.button,
    commitment: started.commitment,
    leaves: [...started.leaves],
    clientSeeds: started.client_seeds.map((x) => ({ seat: x.seat, client_seed: x.client_seed })),
    openings: new Map(),
    mySeat: null,
    mySeeds: null,
    botSeat,
    // A seed for a seat nobody plays is one the server chose, knowing the others.
    conflicts: listed === dealtIn ? [] : [`The deal lists client seeds for seats ${listed}, but deals in seats ${dealtIn}: the server chose the others.`],
  };
}

/**
 * A hand of the table's history as a spectator saw it: its `hand_started`, and the
 * tiles its showdown opened (no other); null for a record without its deal (that of
 * a hand called off when its server stopped). Throws on a record too malformed to read.
 * @param {string} tableId @param {any} played a `hand_list` entry @param {number | null} botSeat
 * @returns {HandSeen | null}
 */
function seenInHistory(tableId, played, botSeat) {
  const started = played.events.find((/** @type {any} */ e) => e.type === "hand_started");
  if (!started) return null;
  if (started.hand_id !== played.hand_id) throw new Error("the record's hand_started is another hand's");
  const hand = handSeen(tableId, started, botSeat);
  for (const event of played.events) {
    if (event.type !== "showdown") continue;
    for (const shown of event.hands) hand.openings.set(shown.seat, shown.openings.map((/** @type {Opening} */ { position, tile, salt }) => ({ position, tile, salt })));
  }
  return hand;
}
