// One table as this page sees it, folded from the server's messages without I/O.
//
// The rules, as in the terminal client (clients/cli/.../game.py):
// 1. A `table_snapshot` replaces everything, even one with a lower `seq`.
// 2. An event applies only when its `seq` is exactly one past the last one;
//    an older one is a copy already applied ("ignored"); a newer one means
//    something was missed ("gap"): the caller asks for a snapshot and applies
//    nothing until it comes.
// 3. Nothing here decides anything: the server is the authority, and the next
//    `turn_started` or snapshot corrects any drift.

import { DealLedger } from "./deals.js";
import { handValue, compareShown, whyItWon } from "./hands.js";
import { checkPayouts } from "./payouts.js";
import { chips } from "./dom.js";

/**
 * @typedef {{min: number, max: number}} ChipRange
 * @typedef {{check?: boolean, fold?: boolean, call?: number, bet?: ChipRange,
 *            raise_to?: ChipRange, declare_cut?: boolean}} Legal
 * @typedef {{seat: number, name: string, isBot: boolean, stack: number, connected: boolean,
 *            bet: number, inHand: boolean, folded: boolean, allIn: boolean, tileCount: number,
 *            tiles: string[], cut: {pairs: string[][], values: number[]} | null,
 *            category: import("./hands.js").Category | null, won: number,
 *            lastAction: string, awayUntil: number | null}} Seat
 * @typedef {{handId: number, button: number, commitment: string, phase: string, round: number,
 *            pot: number, currentBet: number, actor: number | null, toCall: number,
 *            deadlineMs: number | null,
 *            startStacks: Map<number, number>}} Hand
 * @typedef {{seat: number, name: string, tiles: string[], cut: {pairs: string[][], values: number[]},
 *            category: import("./hands.js").Category}} ShownHand
 * @typedef {{handId: number, shown: boolean, hands: ShownHand[], voided: string | null,
 *            awards: {amount: number, eligible: number[], shares: {seat: number, amount: number}[]}[],
 *            verdict: import("./verify.js").Verdict | null, verifying: boolean,
 *            payout: import("./payouts.js").PayoutVerdict | null,
 *            commitment: string, nets: Map<number, number>, names: Map<number, string>,
 *            ended: boolean}} Result
 * @typedef {{text: string, kind: string}} LogLine
 */

const LOG_LINES = 60;

export class TableState {
  /**
   * @param {any} snapshot a `table_snapshot` message
   * @param {() => void} onChange called when something settles later (a deal check)
   * @param {DealLedger} [deals] what this page saw of the table's earlier hands; a new ledger if none
   */
  constructor(snapshot, onChange, deals) {
    const view = snapshot.table;
    this.tableId = /** @type {string} */ (view.table_id);
    this.options = view.options;
    this.seq = /** @type {number} */ (snapshot.seq);
    this.you = /** @type {number | null} */ (view.you ?? null);
    /** @type {Legal | null} */
    this.legal = view.legal ?? null;
    /** Bumped whenever `legal` is set anew, so the buttons are rebuilt once per turn. */
    this.turnKey = `${snapshot.seq}`;
    this.closed = false;
    /** Set when the table moved to another server: its snapshot from there replaces this. */
    this.moving = false;
    /** Set when this page's seat ran out of chips here: the showdown stays, with a rebuy. */
    this.busted = false;
    /** Set on a replayed hand's state: no live timer is drawn on it. */
    this.replaying = false;
    /** @type {number | null} the seat this page had before it busted */
    this.bustedSeat = null;
    this.onChange = onChange;
    this.deals = deals ?? new DealLedger(this.tableId, view.seed_commitment ?? "", () => null);
    this.deals.fromSnapshot(view);
    /** @type {Map<number, Seat>} */
    this.seats = new Map();
    for (const seat of view.seats) {
      this.seats.set(seat.seat, {
        ...newSeat(seat.seat, seat.name, seat.is_bot, seat.stack),
        connected: seat.connected,
        bet: seat.bet,
        inHand: seat.in_hand,
        folded: seat.folded,
        allIn: seat.all_in,
        tileCount: seat.tile_count,
        tiles: seat.tiles ?? [],
        // A snapshot does not say how long an away seat has left: it is away, no more.
        awayUntil: null,
      });
    }
    // A hand over, as a snapshot brings it, is no hand in play: between hands nobody is
    // folded, all in or holding tiles. The result beside the table tells the last hand,
    // where this page saw it end.
    if (view.hand?.phase === "ended") for (const seat of this.seats.values()) clearHand(seat);
    /** @type {Hand | null} */
    this.hand = null;
    if (view.hand) {
      const hand = view.hand;
      this.deals.sat(hand.hand_id, this.seats.values());
      this.hand = {
        handId: hand.hand_id,
        button: hand.button,
        commitment: hand.commitment,
        phase: hand.phase,
        round: hand.round,
        pot: hand.pot,
        currentBet: hand.current_bet,
        actor: hand.actor ?? null,
        toCall: 0,
        deadlineMs: hand.deadline_ms ?? null,
        startStacks: new Map(hand.stacks.map((/** @type {{seat: number, amount: number}} */ x) => [x.seat, x.amount])),
      };
      const actor = this.hand.actor === null ? undefined : this.seats.get(this.hand.actor);
      if (actor) this.hand.toCall = Math.max(0, this.hand.currentBet - actor.bet);
    }
    /** @type {Result | null} */
    this.result = null;
    /** @type {LogLine[]} */
    this.log = [];
    /** Milliseconds the server's clock is ahead of this one, learned from turn deadlines. */
    this.skewMs = 0;
    const before = view.hand?.events ?? [];
    /**
     * Every event of the hand in play since its `hand_started`, for its payout check:
     * those before the snapshot come in it (none from a server older than that, and
     * then the hand, whose betting this page missed, is not checked).
     * @type {{handId: number, events: any[]} | null}
     */
    this.played =
      view.hand && view.hand.phase !== "ended" && before[0]?.type === "hand_started"
        ? { handId: view.hand.hand_id, events: [...before] }
        : null;
  }

  get me() {
    return this.you === null ? null : (this.seats.get(this.you) ?? null);
  }

  /** @param {number} seat */
  name(seat) {
    if (seat === this.you || seat === this.bustedSeat) return "You";
    return this.seatName(seat);
  }

  /**
   * The seat's player as others see them: the name, and the seat's number too where
   * another seat has the same name (the server lets players share one).
   * @param {number} seat
   */
  seatName(seat) {
    const name = this.seats.get(seat)?.name;
    if (name === undefined) return `Seat ${seat + 1}`;
    return this.nameTaken(name, seat) ? `${name} (seat ${seat + 1})` : name;
  }

  /** Whether a seat other than `seat` holds a player named `name`. @param {string} name @param {number} seat */
  nameTaken(name, seat) {
    for (const other of this.seats.values()) if (other.seat !== seat && other.name === name) return true;
    return false;
  }

  /** @param {string} text @param {string} [kind] */
  note(text, kind = "") {
    this.log.push({ text, kind });
    if (this.log.length > LOG_LINES) this.log.splice(0, this.log.length - LOG_LINES);
  }

  /**
   * The deadline of the turn in progress by this browser's clock.
   * @returns {number | null}
   */
  localDeadline() {
    return this.hand?.deadlineMs == null ? null : this.hand.deadlineMs - this.skewMs;
  }

  /**
   * @param {any} event a table event
   * @returns {"applied" | "ignored" | "gap"}
   */
  apply(event) {
    if (event.seq <= this.seq) return "ignored";
    if (event.seq !== this.seq + 1) {
      // The table's new host calling off the hand its dead server was playing comes far
      // ahead in seq: the snapshot asked for brings the chips back, but not why.
      if (event.type === "hand_voided" && this.hand?.handId === event.hand_id) this.calledOff(event);
      return "gap";
    }
    this.seq = event.seq;
    this.fold(event);
    return "applied";
  }

  /** A `hand_voided`, in the hand's result and the log. @param {any} e */
  calledOff(e) {
    this.ensureResult(e.hand_id).voided = e.reason;
    this.note(`The hand was called off (${e.reason}); every chip went back.`, "warn");
  }

  /** @param {any} e */
  fold(e) {
    if (e.type === "hand_started") this.played = { handId: e.hand_id, events: [] };
    if (this.played && this.played.handId === e.hand_id) this.played.events.push(e);
    const seats = this.seats;
    const hand = this.hand;
    const seat = /** @type {Seat | undefined} */ (e.seat === undefined ? undefined : seats.get(e.seat));
    const who = e.seat === undefined ? "" : this.name(e.seat);
    const allIn = e.all_in ? " (all in)" : "";
    switch (e.type) {
      case "player_seated":
        seats.set(e.seat, newSeat(e.seat, e.name, e.is_bot, e.stack));
        // The seat's number, whatever name it shares with one seated later.
        this.note(`${e.name} sat down at seat ${e.seat + 1} with ${chips(e.stack)}.`);
        break;
      case "player_left":
        seats.delete(e.seat);
        if (e.seat === this.you) this.you = this.legal = null;
        this.note(`${this.nameTaken(e.name, e.seat) ? `${e.name} (seat ${e.seat + 1})` : e.name} left with ${chips(e.cashed_out)}.`, "dim");
        break;
      case "player_disconnected":
        if (seat) Object.assign(seat, { connected: false, awayUntil: Date.now() + e.grace_ms });
        this.note(`${who} lost the connection (${Math.round(e.grace_ms / 1000)} s to come back).`, "warn");
        break;
      case "player_reconnected":
        if (seat) Object.assign(seat, { connected: true, awayUntil: null });
        this.note(`${who} ${who === "You" ? "are" : "is"} back.`);
        break;
      case "table_closed": {
        // No seed: moved to another server, where it plays on. The page watches it there
        // (App.watch); a seat's connection is closed (1012) to find it there.
        const moved = !e.table_seed;
        this.closed = !moved;
        this.moving = moved;
        this.hand = null;
        this.legal = null;
        const there = this.you === null ? "watching it there" : "finding your seat there";
        this.note(moved ? `The table moved to another server: ${there}…` : `The table closed: ${e.reason}.`, "warn");
        // Where this page sat, the rebuild waits for the table's history (App.rebuild).
        if (e.table_seed && !this.deals.hadSeat) {
          const audit = this.deals.reveal(e.table_seed);
          this.note(audit.ok ? audit.detail : `SHUFFLE CHECK FAILED: ${audit.detail}`, audit.ok ? "ok" : "bad");
        }
        break;
      }
      case "hand_started":
        this.hand = {
          handId: e.hand_id,
          button: e.button,
          commitment: e.commitment,
          phase: "betting",
          round: 0,
          pot: 0,
          currentBet: 0,
          actor: null,
          toCall: 0,
          deadlineMs: null,
          startStacks: new Map(e.stacks.map((/** @type {{seat: number, amount: number}} */ x) => [x.seat, x.amount])),
        };
        // The last hand's result stays on show (beside the table) until this one ends.
        this.legal = null;
        // The server tops the dealer bot up to its buy-in between hands, unsaid: its chips
        // as the last hand ended here against its stack now (a snapshot between hands
        // already shows the chips topped up).
        /** @type {string[]} */
        const toppedUp = [];
        for (const { seat: n, amount } of e.stacks) {
          const s = seats.get(n);
          if (s?.isBot && amount > s.stack) toppedUp.push(`The dealer bot topped up its stack to ${chips(amount)} (it had ${chips(s.stack)}).`);
        }
        for (const s of seats.values()) clearHand(s);
        for (const { seat: n, amount } of e.stacks) {
          const s = seats.get(n);
          if (s) Object.assign(s, { stack: amount, inHand: true });
        }
        this.note(`Hand #${e.hand_id}`, "head");
        for (const line of toppedUp) this.note(line);
        this.deals.start(e, this.you);
        this.deals.sat(e.hand_id, seats.values());
        break;
      case "ante_taken":
        this.putIn(e.seat, e.amount, e.all_in, false);
        break;
      case "tiles_dealt":
        if (seat) {
          seat.tileCount = 3;
          if (e.tiles) {
            this.deals.open(e.hand_id, e.seat, e.openings ?? [], e.tiles);
            seat.tiles = e.tiles;
            this.note(`You were dealt ${e.tiles.join("  ")}.`);
          }
        }
        break;
      case "fourth_tile_dealt":
        if (seat) {
          seat.tileCount = 4;
          if (e.tile) {
            this.deals.open(e.hand_id, e.seat, e.opening ? [e.opening] : [], [e.tile]);
            seat.tiles = [...seat.tiles, e.tile];
            this.note(`Your fourth tile: ${e.tile}.`);
          }
        }
        break;
      case "betting_round_started":
        if (hand) Object.assign(hand, { round: e.round, currentBet: 0, phase: "betting" });
        break;
      case "turn_started":
        if (!hand) break;
        hand.actor = e.seat;
        hand.toCall = e.to_call;
        hand.deadlineMs = e.deadline_ms;
        hand.pot = e.pot;
        // The deadline is turn_seconds from now by the server's clock: the difference is skew.
        this.skewMs = e.deadline_ms - (Date.now() + this.options.turn_seconds * 1000);
        for (const c of e.seats) {
          const s = seats.get(c.seat);
          if (s) Object.assign(s, { stack: c.stack, bet: c.bet, folded: c.folded, allIn: c.all_in });
        }
        hand.currentBet = Math.max(0, ...e.seats.map((/** @type {{bet: number}} */ c) => c.bet));
        this.legal = e.seat === this.you ? (e.legal ?? null) : null;
        this.turnKey = `${e.seq}`;
        break;
      case "checked":
        if (seat) seat.lastAction = "Check";
        this.note(`${who} checked.`);
        this.turnOver();
        break;
      case "bet_placed":
        this.putIn(e.seat, e.amount, e.all_in, true);
        if (seat) seat.lastAction = `Bet ${chips(e.amount)}${allIn}`;
        this.note(`${who} bet ${chips(e.amount)}${allIn}.`, "bet");
        break;
      case "called":
        this.putIn(e.seat, e.amount, e.all_in, true);
        if (seat) seat.lastAction = `Call ${chips(e.amount)}${allIn}`;
        this.note(`${who} called ${chips(e.amount)}${allIn}.`);
        break;
      case "raised":
        this.putIn(e.seat, e.amount, e.all_in, true);
        if (seat) seat.lastAction = `Raise to ${chips(e.to)}${allIn}`;
        this.note(`${who} raised to ${chips(e.to)}${allIn}.`, "bet");
        break;
      case "folded":
        if (seat) Object.assign(seat, { folded: true, lastAction: "Fold" });
        this.note(`${who} folded.`, "dim");
        this.turnOver();
        break;
      case "turn_timed_out":
        if (seat) seat.lastAction = "Out of time";
        this.note(`${who} ran out of time.`, "warn");
        this.turnOver();
        break;
      case "bet_returned":
        if (seat && hand) {
          seat.stack += e.amount;
          seat.bet = Math.max(0, seat.bet - e.amount);
          hand.pot -= e.amount;
          // Chips back in front of it: whatever it staked, it is not all in now.
          seat.allIn = false;
        }
        this.note(`${chips(e.amount)} unmatched went back to ${inSentence(who)}.`, "dim");
        break;
      case "betting_round_ended":
        if (hand) Object.assign(hand, { pot: e.pot, currentBet: 0 });
        for (const s of seats.values()) s.bet = 0;
        this.turnOver();
        this.note(`Betting round ${e.round} is over; the pot is ${chips(e.pot)}.`, "dim");
        break;
      case "cutting_started":
        if (!hand) break;
        hand.phase = "cutting";
        hand.deadlineMs = e.deadline_ms;
        if (this.you !== null && e.seats.includes(this.you)) {
          this.legal = { declare_cut: true };
          this.turnKey = `${e.seq}`;
        }
        this.note(this.you !== null && e.seats.includes(this.you) ? "Cut your hand into two pairs." : "The players cut their hands into two pairs.");
        break;
      case "cut_declared":
        if (seat && e.cut) seat.cut = e.cut;
        if (seat) seat.lastAction = "Cut";
        if (e.seat === this.you) this.legal = null;
        break;
      case "showdown":
        if (!hand) break;
        hand.phase = "showdown";
        hand.actor = null;
        const result = this.ensureResult(e.hand_id);
        result.shown = true;
        for (const shown of e.hands) {
          this.deals.open(e.hand_id, shown.seat, shown.openings ?? [], shown.tiles);
          result.hands.push({ seat: shown.seat, name: this.name(shown.seat), tiles: shown.tiles, cut: shown.cut, category: shown.category });
          const s = seats.get(shown.seat);
          if (!s) continue;
          Object.assign(s, { tiles: shown.tiles, cut: shown.cut, category: shown.category, tileCount: 4 });
          this.note(`${isolated(this.name(shown.seat))}: ${handValue(shown.category, shown.cut.values)}.`);
        }
        break;
      case "pot_awarded": {
        if (hand) hand.pot -= e.amount;
        const awarded = this.ensureResult(e.hand_id);
        awarded.awards.push({ amount: e.amount, eligible: e.eligible ?? [], shares: e.shares });
        for (const share of e.shares) {
          // A winner may stand up as the hand ends, while its result is still on screen.
          awarded.names.set(share.seat, this.name(share.seat));
          const s = seats.get(share.seat);
          if (s) {
            s.stack += share.amount;
            s.won += share.amount;
          }
        }
        this.note(
          e.shares.length === 1
            ? `${this.name(e.shares[0].seat)} ${e.shares[0].seat === this.you ? "win" : "wins"} the pot of ${chips(e.amount)}.`
            : `The pot of ${chips(e.amount)} is split: ${e.shares.map((/** @type {{seat: number, amount: number}} */ x) => `${isolated(inSentence(this.name(x.seat)))} ${chips(x.amount)}`).join(", ")}.`,
          "win",
        );
        break;
      }
      case "hand_voided":
        for (const refund of e.refunds) {
          const s = seats.get(refund.seat);
          if (s) s.stack += refund.amount;
        }
        if (hand) hand.pot = 0;
        this.calledOff(e);
        break;
      case "hand_ended":
        if (hand) {
          hand.phase = "ended";
          hand.actor = null;
          this.checkPayouts(e.hand_id);
          this.checkDeal(e.hand_id);
          const result = this.ensureResult(e.hand_id);
          result.ended = true;
          for (const { seat: n, amount } of e.stacks) {
            const before = hand.startStacks.get(n);
            if (before !== undefined) result.nets.set(n, amount - before);
          }
        }
        this.legal = null;
        for (const { seat: n, amount } of e.stacks) {
          const s = seats.get(n);
          if (!s) continue;
          // Folded and all in were places in the hand: over, they would tag a seat between
          // hands (all in, the chips a winner took). A folded seat holds no tiles: untagged,
          // its count would draw them face down again.
          if (s.folded) s.tileCount = 0;
          Object.assign(s, { stack: amount, bet: 0, allIn: false, folded: false });
        }
        break;
    }
  }

  /** @param {number} handId */
  ensureResult(handId) {
    if (!this.result || this.result.handId !== handId) {
      this.result = {
        handId,
        shown: false,
        hands: [],
        voided: null,
        awards: [],
        verdict: null,
        verifying: false,
        payout: null,
        commitment: this.hand?.commitment ?? "",
        nets: new Map(),
        names: new Map(),
        ended: false,
      };
    }
    return this.result;
  }

  /**
   * Pay the hand that just ended again by the rules, if this state knows it from its
   * start (see `played`), and hold `hand_ended` to it (payouts.js).
   * @param {number} handId
   */
  checkPayouts(handId) {
    const played = this.played;
    this.played = null;
    if (played?.handId !== handId || !this.options) return;
    const payout = checkPayouts(this.options, played.events);
    this.ensureResult(handId).payout = payout;
    if (payout && !payout.ok) this.note(`PAYOUT CHECK FAILED: ${payout.detail}`, "bad");
  }

  /** Check the hand that just ended against its commitment. @param {number} handId */
  checkDeal(handId) {
    const checking = this.deals.check(handId);
    if (!checking) return;
    const result = this.ensureResult(handId);
    result.verifying = true;
    checking.then((verdict) => {
      result.verdict = verdict;
      result.verifying = false;
      const paid = result.payout?.ok ? ` ${result.payout.detail}` : "";
      const paidWrong = result.payout && !result.payout.ok;
      if (!verdict.ok) this.note(`DEAL CHECK FAILED: ${verdict.detail}`, "bad");
      // Not "verified" under the payout's failure: the tiles are right, the hand is not.
      else if (verdict.tilesChecked && paidWrong) this.note(`The tiles check: ${verdict.detail} The chips do not: see above.`, "dim");
      else if (verdict.tilesChecked) this.note(`Deal verified: ${verdict.detail}${paid}`, "ok");
      else this.note(`${verdict.detail}${paid}`, "dim");
      this.onChange();
    });
  }

  /** @param {number} n @param {number} amount @param {boolean} allIn @param {boolean} intoBet */
  putIn(n, amount, allIn, intoBet) {
    const s = this.seats.get(n);
    if (!s) return;
    s.stack -= amount;
    s.allIn = s.allIn || allIn;
    if (!this.hand) return;
    this.hand.pot += amount;
    if (intoBet) {
      s.bet += amount;
      this.hand.currentBet = Math.max(this.hand.currentBet, s.bet);
      this.turnOver();
    }
  }

  turnOver() {
    if (this.hand) {
      this.hand.actor = null;
      this.hand.toCall = 0;
    }
    this.legal = null;
  }
}

/**
 * Why each pot went where it did, one line per pot: the winner's hand against the
 * best hand it beat among the seats that could win that pot.
 * @param {Result} result @param {(seat: number) => string} name
 * @returns {string[]}
 */
export function explainResult(result, name) {
  const shown = new Map(result.hands.map((x) => [x.seat, x]));
  const lines = [];
  for (const award of result.awards) {
    const winners = award.shares.map((x) => x.seat);
    const who = namesJoined(winners.map(name));
    const rivals = award.eligible.filter((n) => !winners.includes(n) && shown.has(n)).map((n) => /** @type {ShownHand} */ (shown.get(n)));
    const top = shown.get(winners[0]);
    if (!result.shown || !top) {
      lines.push(`${who}: everyone else folded.`);
    } else if (winners.length > 1 && winners.every((n) => shown.has(n))) {
      lines.push(`${who} split ${chips(award.amount)}: ${whyItWon(top, /** @type {ShownHand} */ (shown.get(winners[1])), true)}.`);
    } else if (!rivals.length) {
      lines.push(`${who} took ${chips(award.amount)} back: no one else could win it.`);
    } else {
      const best = rivals.reduce((a, b) => (compareShown(a, b) >= 0 ? a : b));
      lines.push(`${who} won ${chips(award.amount)}: ${whyItWon(top, best, false)}.`);
    }
  }
  return lines;
}

/** A seat's name (`TableState.name`) past a sentence's first word: "you", not "You". @param {string} name */
const inSentence = (name) => (name === "You" ? "you" : name);

const RIGHT_TO_LEFT = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF]/;

/**
 * A name followed by a figure in a sentence, isolated when it holds a right-to-left
 * letter: bare, "שרה: 9-3." showed as "9-3 :שרה." (the figure joined the name's run).
 * Other names stay as typed, with no invisible marks in what is copied.
 * @param {string} name
 */
const isolated = (name) => (RIGHT_TO_LEFT.test(name) ? `\u2068${name}\u2069` : name);

/** Names as one subject: "Bo and you". @param {string[]} names */
export const namesJoined = (names) => names.map((name, i) => (i ? inSentence(name) : name)).join(" and ");

/** @param {number} seat @param {string} name @param {boolean} isBot @param {number} stack @returns {Seat} */
function newSeat(seat, name, isBot, stack) {
  return {
    seat,
    name,
    isBot,
    stack,
    connected: true,
    bet: 0,
    inHand: false,
    folded: false,
    allIn: false,
    tileCount: 0,
    tiles: [],
    cut: null,
    category: null,
    won: 0,
    lastAction: "",
    awayUntil: null,
  };
}

/** @param {Seat} s */
function clearHand(s) {
  Object.assign(s, { bet: 0, inHand: false, folded: false, allIn: false, tileCount: 0, tiles: [], cut: null, category: null, won: 0, lastAction: "" });
}
