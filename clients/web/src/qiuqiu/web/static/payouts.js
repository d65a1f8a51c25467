// Who won what: each hand this page knows from its `hand_started` (seen live, or in
// the events a snapshot carries), paid again by the rules, as the Python client does
// it (clients/cli/.../payouts.py, PROTOCOL.md "Fairness").
//
// The fair deal holds the server to the tiles it dealt; this holds it to the chips
// it paid. Every viewer sees the stacks, the button, the betting and, at a showdown,
// the hands shown with the cut each was judged by, and that is all the payouts depend
// on: the tiles of a seat that folded decide nothing. So the hand is played again
// here, move by move, by the engine's own rules (engine/.../state.py, pots.py,
// ranking.py, followed step for step: who acts when, what a bet or raise may be,
// when a round closes and gives back the unmatched part of a bet, the side pots, the
// tie rule and the odd chips), and the stacks it ends with must be `hand_ended`'s.

import { chips } from "./dom.js";
import { bestCut, categoryOf, compareShown, normalTile, spots } from "./hands.js";

const MIN_SEATS = 2;
const MAX_SEATS = 6;
/** Every tile as the engine writes it, high end first. */
const TILES = new Set(Array.from({ length: 7 }, (_, high) => Array.from({ length: high + 1 }, (_, low) => `${high}-${low}`)).flat());

/**
 * @typedef {{ante: number, min_bet: number, max_bet?: number | null, max_raises?: number | null,
 *            betting_rounds: number, tie_rule: "highest_tile" | "split", manual_split: boolean}} Rules
 *   a table's options, as `table_snapshot` and `table_created` give them
 * @typedef {{ok: boolean, detail: string}} PayoutVerdict
 * @typedef {{seat: number, tiles: string[], cut: {pairs: string[][]}}} Shown a hand of `showdown`
 * @typedef {{seat: number, stack: number, roundBet: number, contributed: number,
 *            folded: boolean, acted: boolean, cut: string[][] | null}} SeatState
 */

/** The hand as the server told it is one the rules do not allow. */
class RulesBroken extends Error {}

/** @param {number} seat */
const named = (seat) => `seat ${seat + 1}`;

/** @param {unknown} n */
const whole = (n) => typeof n === "number" && Number.isSafeInteger(n);

/**
 * One hand's betting and showdown, as the engine's `HandState` plays them: only what
 * decides the chips. `stacks` are the seats dealt in and their chips before the ante.
 */
class HandReplay {
  /**
   * @param {Rules} rules @param {Map<number, number>} stacks @param {number} button
   * @param {Map<number, Shown>} shown the hands shown at the showdown, by seat
   */
  constructor(rules, stacks, button, shown) {
    if (stacks.size < MIN_SEATS || stacks.size > MAX_SEATS) throw new RulesBroken(`a hand needs ${MIN_SEATS} to ${MAX_SEATS} seats, not ${stacks.size}`);
    for (const [seat, stack] of stacks) {
      if (!whole(seat) || seat < 0) throw new RulesBroken(`seats are numbered 0 and up, not ${seat}`);
      if (!whole(stack) || stack <= 0) throw new RulesBroken(`${named(seat)} was dealt in with ${stack} chips`);
    }
    if (!stacks.has(button)) throw new RulesBroken(`the button (${named(button)}) is not one of the seats dealt in`);
    for (const seat of shown.keys()) if (!stacks.has(seat)) throw new RulesBroken(`the showdown shows a hand for ${named(seat)}, which was not dealt in`);
    this.rules = rules;
    this.shown = shown;
    const seats = [...stacks.keys()].sort((a, b) => a - b);
    const after = seats.indexOf(button) + 1;
    this.button = button;
    /** Acting order: the first seat after the button first. */
    this.order = [...seats.slice(after), ...seats.slice(0, after)];
    /** @type {Map<number, SeatState>} by seat number, ascending */
    this.seats = new Map(seats.map((seat) => [seat, { seat, stack: /** @type {number} */ (stacks.get(seat)), roundBet: 0, contributed: 0, folded: false, acted: false, cut: null }]));
    /** @type {"dealing" | "betting" | "cutting" | "ended"} */
    this.phase = "dealing";
    this.round = 0;
    /** @type {number | null} */
    this.actor = null;
    this.currentBet = 0;
    this.fullRaise = 0;
    this.raises = 0;
    this.paidOut = 0;
    this.fourthDealt = false;
    /** @type {number[]} */
    this.pendingCuts = [];
    if (rules.ante) {
      for (const seat of this.order) this.putIn(seat, Math.min(rules.ante, this.seat(seat).stack), false);
    }
    this.advance();
  }

  /** @param {number} seat */
  seat(seat) {
    const s = this.seats.get(seat);
    if (!s) throw new RulesBroken(`${named(seat)} is not in this hand`);
    return s;
  }

  /** Seats still in, in acting order. */
  live() {
    return this.order.filter((seat) => !this.seat(seat).folded);
  }

  /** @param {SeatState} s */
  static canBet(s) {
    return s.stack > 0 && !s.folded;
  }

  get minRaise() {
    return Math.max(this.rules.min_bet, this.fullRaise);
  }

  // -- the moves ------------------------------------------------------------------

  /** @param {number} seat */
  turn(seat) {
    const s = this.seat(seat);
    if (this.phase !== "betting") throw new RulesBroken(`${named(seat)} acted with no betting round open`);
    if (seat !== this.actor) throw new RulesBroken(`${named(seat)} acted in ${this.actor === null ? "no one's" : `${named(this.actor)}'s`} turn`);
    return s;
  }

  /** @param {number} seat */
  check(seat) {
    const s = this.turn(seat);
    if (s.roundBet < this.currentBet) throw new RulesBroken(`${named(seat)} checked with ${this.currentBet - s.roundBet} chips to call`);
    s.acted = true;
    this.moved(seat);
  }

  /** @param {number} seat */
  fold(seat) {
    const s = this.turn(seat);
    if (s.roundBet >= this.currentBet) throw new RulesBroken(`${named(seat)} folded with nothing to call`);
    s.acted = true;
    s.folded = true;
    this.moved(seat);
  }

  /** @param {number} seat @param {unknown} amount */
  bet(seat, amount) {
    const s = this.turn(seat);
    const size = positive(amount);
    if (this.currentBet) throw new RulesBroken(`${named(seat)} bet into a bet of ${this.currentBet}`);
    const high = this.rules.max_bet == null ? s.stack : Math.min(s.stack, this.rules.max_bet);
    inRange(size, { min: Math.min(this.rules.min_bet, s.stack), max: high }, s.stack, `${named(seat)}'s bet`);
    this.putIn(seat, size, true);
    this.currentBet = size;
    this.fullRaise = size >= this.rules.min_bet ? size : 0;
    this.moved(seat);
  }

  /** @param {number} seat */
  call(seat) {
    const s = this.turn(seat);
    if (s.roundBet >= this.currentBet) throw new RulesBroken(`${named(seat)} called with nothing to call`);
    this.putIn(seat, Math.min(this.currentBet - s.roundBet, s.stack), true);
    this.moved(seat);
  }

  /** @param {number} seat @param {unknown} to */
  raiseTo(seat, to) {
    const s = this.turn(seat);
    const total = positive(to);
    const raising = `${named(seat)}'s raise`;
    if (!this.currentBet) throw new RulesBroken(`${raising} came before any bet`);
    const allowed = this.rules.max_raises;
    if (allowed != null && this.raises >= allowed) throw new RulesBroken(`${raising} is over the round's limit of ${allowed}`);
    if (s.acted && this.currentBet - s.roundBet < this.minRaise) throw new RulesBroken(`${raising} came after a short all-in that did not reopen the betting`);
    if (![...this.seats.values()].some((o) => o.seat !== seat && HandReplay.canBet(o))) throw new RulesBroken(`${raising} came with no one left to answer it`);
    const allInTo = s.roundBet + s.stack;
    if (allInTo <= this.currentBet) throw new RulesBroken(`${raising} came without the chips to cover more than a call`);
    const cap = this.rules.max_bet == null ? allInTo : this.currentBet + this.rules.max_bet;
    inRange(total, { min: Math.min(this.currentBet + this.minRaise, allInTo), max: Math.min(allInTo, cap) }, allInTo, raising);
    if (total - this.currentBet >= this.minRaise) this.fullRaise = total - this.currentBet;
    this.raises += 1;
    this.currentBet = total;
    this.putIn(seat, total - s.roundBet, true);
    this.moved(seat);
  }

  /** @param {number} seat @param {string[][]} pairs the cut as the showdown shows it */
  declareCut(seat, pairs) {
    const s = this.seat(seat);
    if (this.phase !== "cutting" || !this.pendingCuts.includes(seat)) throw new RulesBroken(`${named(seat)} had no cut to declare`);
    const hand = /** @type {Shown} */ (this.shown.get(seat)).tiles;
    const twoPairs = Array.isArray(pairs) && pairs.length === 2 && pairs.every((p) => Array.isArray(p) && p.length === 2);
    const cut = twoPairs ? pairs.flat().map((t) => (typeof t === "string" ? normalTile(t) : "")) : [];
    if (new Set(cut).size !== 4 || !cut.every((t) => hand.includes(t))) {
      throw new RulesBroken(`${named(seat)}'s cut is not a cut of its hand ${hand.join(" ")}`);
    }
    s.cut = pairs;
    this.pendingCuts = this.pendingCuts.filter((x) => x !== seat);
    this.advance();
  }

  // -- what happens by itself -----------------------------------------------------

  /** @param {number} seat @param {number} amount @param {boolean} roundBet */
  putIn(seat, amount, roundBet) {
    const s = this.seat(seat);
    s.stack -= amount;
    s.contributed += amount;
    if (roundBet) {
      s.roundBet += amount;
      s.acted = true;
    }
  }

  /** @param {number} seat who just acted */
  moved(seat) {
    this.actor = this.nextActor(seat);
    this.advance();
  }

  /** The next seat after `after` that still has to act this round. @param {number} after */
  nextActor(after) {
    if (this.live().length < 2) return null;
    const start = this.order.indexOf(after) + 1;
    for (const seat of [...this.order.slice(start), ...this.order.slice(0, start)]) {
      const s = this.seat(seat);
      if (HandReplay.canBet(s) && (!s.acted || s.roundBet < this.currentBet)) return seat;
    }
    return null;
  }

  advance() {
    for (;;) {
      if (this.phase === "ended") return;
      if (this.phase === "betting") {
        if (this.actor !== null) return;
        this.closeRound();
      } else if (this.phase === "cutting") {
        if (this.pendingCuts.length) return;
        this.showDown();
      } else {
        this.dealOn();
      }
    }
  }

  /** The part of the highest bet nobody matched goes back to it. */
  closeRound() {
    const [first, second] = [...this.seats.values()].sort((a, b) => b.roundBet - a.roundBet);
    const unmatched = first.roundBet - second.roundBet;
    first.stack += unmatched;
    first.roundBet -= unmatched;
    first.contributed -= unmatched;
    this.phase = "dealing";
    this.actor = null;
  }

  /** @param {number} round */
  openRound(round) {
    this.phase = "betting";
    this.round = round;
    this.currentBet = this.fullRaise = this.raises = 0;
    for (const s of this.seats.values()) Object.assign(s, { roundBet: 0, acted: false });
    this.actor = this.nextActor(this.button);
  }

  get pot() {
    return [...this.seats.values()].reduce((sum, s) => sum + s.contributed, 0) - this.paidOut;
  }

  /** Between rounds: the walk-over, the next round, the 4th tile, or the showdown. */
  dealOn() {
    const live = this.live();
    if (live.length === 1) {
      if (this.pot) this.award([[live[0], this.pot]]);
      this.phase = "ended";
      return;
    }
    const canBet = live.filter((seat) => HandReplay.canBet(this.seat(seat))).length;
    // The engine deals the 4th tile after the first round, or at once when nobody can bet.
    if (!this.fourthDealt) {
      if (this.round === 0 && canBet >= 2) this.openRound(1);
      else this.fourthDealt = true;
      return;
    }
    if (this.rules.betting_rounds === 2 && this.round < 2 && canBet >= 2) {
      this.openRound(2);
    } else if (this.rules.manual_split) {
      this.phase = "cutting";
      this.pendingCuts = live;
    } else {
      this.showDown();
    }
  }

  /** @param {[number, number][]} shares */
  award(shares) {
    for (const [seat, amount] of shares) {
      this.seat(seat).stack += amount;
      this.paidOut += amount;
    }
  }

  /** Each pot, main first, to the best hand of the seats that paid into it. */
  showDown() {
    const live = this.live();
    const ranks = new Map(live.map((seat) => [seat, this.rank(seat)]));
    const tieRule = this.rules.tie_rule;
    const contributed = new Map([...this.seats.values()].map((s) => [s.seat, s.contributed]));
    for (const pot of sidePots(contributed, new Set(live), this.order)) {
      let winners = [pot.eligible[0]];
      for (const seat of pot.eligible.slice(1)) {
        const verdict = compareShown(/** @type {RankedHand} */ (ranks.get(seat)), /** @type {RankedHand} */ (ranks.get(winners[0])), tieRule);
        if (verdict > 0) winners = [seat];
        else if (verdict === 0) winners.push(seat);
      }
      this.award(share(pot.amount, winners));
    }
    this.phase = "ended";
  }

  /**
   * What a seat's hand is worth: scored by the cut it declared under `manual_split`,
   * by its best cut otherwise (whatever cut the showdown says it was judged by).
   * @param {number} seat
   * @returns {RankedHand}
   */
  rank(seat) {
    const s = this.seat(seat);
    const hand = this.shown.get(seat);
    if (!hand) throw new RulesBroken(`${named(seat)} was still in, and the showdown hid its hand`);
    if (!s.cut) {
      const best = bestCut(hand.tiles);
      return { tiles: hand.tiles, cut: { values: best.values }, category: best.category };
    }
    const values = s.cut.map(([a, b]) => (spots(a) + spots(b)) % 10).sort((a, b) => b - a);
    return { tiles: hand.tiles, cut: { values }, category: categoryOf(hand.tiles) };
  }

  /** Every seat's stack as the hand ends, by seat. */
  stacks() {
    return new Map([...this.seats.values()].map((s) => [s.seat, s.stack]));
  }
}

/** @typedef {{tiles: string[], cut: {values: number[]}, category: import("./hands.js").Category}} RankedHand */

/** @param {unknown} amount @returns {number} */
function positive(amount) {
  if (!whole(amount) || /** @type {number} */ (amount) <= 0) throw new RulesBroken(`an amount is a positive whole number, not ${amount}`);
  return /** @type {number} */ (amount);
}

/**
 * The engine's range check of a bet or raise: over the table's limit, over the stack,
 * or under the least allowed (less is allowed only as an all-in, which `min` says).
 * @param {number} amount @param {{min: number, max: number}} allowed @param {number} allIn @param {string} what
 */
function inRange(amount, allowed, allIn, what) {
  if (amount > allowed.max && allowed.max < allIn) throw new RulesBroken(`${what} of ${amount} is over the largest allowed, ${allowed.max}`);
  if (amount > allIn) throw new RulesBroken(`${what} of ${amount} is more than the ${allIn} chips it had`);
  if (amount < allowed.min) throw new RulesBroken(`${what} of ${amount} is under the smallest allowed, ${allowed.min}`);
}

/**
 * The pots, main first: each distinct all-in level of the seats still in closes one,
 * which only the seats still in that paid that much can win; adjacent pots with the
 * same seats are one.
 * @param {Map<number, number>} contributed every seat's chips put in @param {Set<number>} live
 * @param {number[]} order acting order
 * @returns {{amount: number, eligible: number[]}[]}
 */
function sidePots(contributed, live, order) {
  const levels = [...new Set(order.filter((seat) => live.has(seat)).map((seat) => /** @type {number} */ (contributed.get(seat))))].filter((x) => x > 0).sort((a, b) => a - b);
  /** @type {{amount: number, eligible: number[]}[]} */
  const pots = [];
  let floor = 0;
  for (const level of levels) {
    let amount = 0;
    for (const paid of contributed.values()) amount += Math.min(paid, level) - Math.min(paid, floor);
    const eligible = order.filter((seat) => live.has(seat) && /** @type {number} */ (contributed.get(seat)) >= level);
    const last = pots.at(-1);
    if (last && last.eligible.join() === eligible.join()) last.amount += amount;
    else pots.push({ amount, eligible });
    floor = level;
  }
  return pots;
}

/**
 * `amount` split evenly among `winners`; the odd chips go to the first of them, the
 * first after the button.
 * @param {number} amount @param {number[]} winners in acting order
 * @returns {[number, number][]}
 */
function share(amount, winners) {
  const each = Math.floor(amount / winners.length);
  const odd = amount - each * winners.length;
  return winners.map((seat, i) => [seat, each + (i === 0 ? odd : 0)]);
}

/**
 * The hands shown, by seat, their tiles written as the engine writes them. A tile
 * that is none, or one shown twice, is a hand no deck deals.
 * @param {any[]} hands a `showdown`'s
 * @returns {Map<number, Shown>}
 */
function shownHands(hands) {
  /** @type {Map<number, Shown>} */
  const shown = new Map();
  const seen = new Set();
  for (const hand of hands) {
    const tiles = (hand.tiles ?? []).map((/** @type {unknown} */ t) => (typeof t === "string" ? normalTile(t) : ""));
    for (const tile of tiles) {
      if (!TILES.has(tile) || seen.has(tile)) throw new RulesBroken(`the showdown shows ${hand.tiles?.join(" ")} for ${named(hand.seat)}: no deck deals that`);
      seen.add(tile);
    }
    if (tiles.length !== 4 || shown.has(hand.seat)) throw new RulesBroken(`the showdown shows ${named(hand.seat)} a hand other than four tiles`);
    shown.set(hand.seat, { seat: hand.seat, tiles, cut: hand.cut ?? { pairs: [] } });
  }
  return shown;
}

/**
 * Whether the rules pay a hand as its `hand_ended` says. `events` are the hand's
 * events as this page got them, from its `hand_started` to its `hand_ended` (a
 * hand of `list_hands` holds them all); null for a voided hand, which paid nothing.
 * @param {Rules} rules the table's options
 * @param {any[]} events
 * @returns {PayoutVerdict | null}
 */
export function checkPayouts(rules, events) {
  const started = events.findLast((e) => e.type === "hand_started");
  const ended = events.findLast((e) => e.type === "hand_ended");
  if (events.some((e) => e.type === "hand_voided")) return null;
  const hand = `Hand #${started?.hand_id ?? ended?.hand_id ?? "?"}`;
  const untold = { ok: false, detail: `${hand}: its events do not say how it was paid.` };
  if (!started || !ended) return untold;
  let due, paid;
  try {
    paid = new Map(ended.stacks.map((/** @type {any} */ x) => [x.seat, x.amount]));
    const shown = shownHands(events.findLast((e) => e.type === "showdown")?.hands ?? []);
    const replay = new HandReplay(rules, new Map(started.stacks.map((/** @type {any} */ x) => [x.seat, x.amount])), started.button, shown);
    for (const e of events) play(replay, e);
    for (const seat of replay.pendingCuts) {
      const cut = shown.get(seat)?.cut.pairs;
      if (!cut) throw new RulesBroken(`${named(seat)} was cutting, and no cut of its was shown`);
      replay.declareCut(seat, cut);
    }
    if (replay.phase !== "ended") return { ok: false, detail: `${hand}: the server ended it before its betting was over.` };
    due = replay.stacks();
  } catch (error) {
    // Anything else is a message not as the protocol writes it (a list that is none, a
    // field left out): a hand told so says nothing sure.
    if (!(error instanceof RulesBroken)) return untold;
    return { ok: false, detail: `${hand} as the server told it breaks the rules: ${error.message}.` };
  }
  const wrong = [...new Set([...due.keys(), ...paid.keys()])]
    .sort((a, b) => a - b)
    .filter((seat) => paid.get(seat) !== due.get(seat))
    .map((seat) => `${named(seat)} got ${amount(paid.get(seat))} (due ${amount(due.get(seat))})`);
  if (wrong.length) return { ok: false, detail: `${hand} was not paid as the rules say: ${wrong.join(", ")}.` };
  return { ok: true, detail: "Paid as the rules say." };
}

/** A stack as `hand_ended` says it, or as the rules pay it. @param {unknown} n */
const amount = (n) => (whole(n) ? chips(/** @type {number} */ (n)) : n === undefined ? "nothing" : String(n));

/** One event of the hand, if it is a move. @param {HandReplay} replay @param {any} e */
function play(replay, e) {
  switch (e.type) {
    case "checked":
      return replay.check(e.seat);
    case "folded":
      return replay.fold(e.seat);
    case "bet_placed":
      return replay.bet(e.seat, e.amount);
    case "called":
      return replay.call(e.seat);
    case "raised":
      return replay.raiseTo(e.seat, e.to);
  }
}
