// The table's hand history: its past hands, newest first, each with what it meant for
// you, and a replayer that steps through one of them on a felt of its own.

import { h, chips } from "./dom.js";
import { TableState } from "./state.js";
import { verdictView } from "./fairview.js";

/** The dealer bot's account in a hand's record (PROTOCOL.md, `hand_list`). */
const HOUSE = "house";

export class HistoryView {
  /**
   * @param {(felt: HTMLElement, state: TableState) => void} fillFelt draws a table on a felt, as the live one is drawn
   * @param {() => TableState | null} live the table as this page has it now
   */
  constructor(fillFelt, live) {
    this.fillFelt = fillFelt;
    this.live = live;
    this.root = h("section", { class: "history", hidden: true, "aria-label": "hand history" });
    /** @type {{hands: any[], accountId: string, replay: {hand: any, step: number, state: TableState} | null}} */
    this.past = { hands: [], accountId: "", replay: null };
  }

  /**
   * The table's past hands (a `hand_list`), newest first, each with what it meant for
   * you and a button to replay it.
   * @param {any[]} hands @param {string} accountId
   */
  show(hands, accountId) {
    this.past = { hands, accountId, replay: null };
    this.draw();
    this.root.hidden = false;
    // Opened from the keyboard too: the focus goes to the list, not left at the top.
    const first = this.root.querySelector("[data-action=replay]") ?? this.root.querySelector("[data-action=close-history]");
    /** @type {HTMLElement | null} */ (first)?.focus({ preventScroll: true });
    this.root.scrollIntoView({ block: "start" });
  }

  /** The history made again: the focus, if it was in it, stays on the control of the same
   * action, else goes to the first the replayer or the list offers (Enter on "Next ▶"
   * steps on and on; at the end, on to "« Start"). */
  draw() {
    const active = document.activeElement;
    const focused = active instanceof HTMLElement && this.root.contains(active) ? active.dataset.action : undefined;
    this.fill();
    if (focused === undefined) return;
    const again = this.root.querySelector(`[data-action="${focused}"]:enabled`) ?? this.root.querySelector(".replay .buttons button:enabled, [data-action=replay]");
    /** @type {HTMLElement | null} */ (again)?.focus();
  }

  fill() {
    const { hands, accountId, replay } = this.past;
    const close = h("button", { type: "button", class: "ghost", dataset: { action: "close-history" }, onclick: () => (this.root.hidden = true), text: "Close" });
    if (replay) {
      this.root.replaceChildren(this.replayView(replay), close);
      return;
    }
    const rows = [...hands].reverse().map((hand) => {
      const mine = hand.seats.find((/** @type {any} */ x) => x.account_id === accountId);
      const net = mine ? mine.after - mine.before : null;
      const pot = hand.events.filter((/** @type {any} */ e) => e.type === "pot_awarded").reduce((sum, /** @type {any} */ e) => sum + e.amount, 0);
      return h(
        "li",
        { class: "past-hand", dataset: { hand: String(hand.hand_id) } },
        h("strong", { text: `Hand #${hand.hand_id}` }),
        h("span", { class: "muted", text: hand.voided ? "voided: every chip went back" : `pot ${chips(pot)} · ${hand.seats.length} seats` }),
        h("span", { class: `net ${net === null ? "" : net > 0 ? "up" : net < 0 ? "down" : ""}`, text: net === null ? "not yours" : `${net > 0 ? "+" : net < 0 ? "−" : "±"}${chips(Math.abs(net))}` }),
        !hand.voided && hand.events.length ? h("button", { type: "button", class: "ghost small", dataset: { action: "replay" }, onclick: () => this.startReplay(hand), text: "Replay" }) : null,
      );
    });
    this.root.replaceChildren(
      h("h3", { text: "Hand history" }),
      rows.length ? h("ol", { class: "past-hands" }, rows) : h("p", { class: "muted", text: "No hand has ended at this table yet." }),
      close,
    );
  }

  /** From a replay back to the list, the focus on that hand's Replay. @param {number} handId */
  backToTheList(handId) {
    this.past.replay = null;
    this.draw();
    /** @type {HTMLElement | null} */ (this.root.querySelector(`.past-hand[data-hand="${handId}"] [data-action=replay]`))?.focus();
  }

  /** @param {any} hand a `hand_list` entry */
  startReplay(hand) {
    this.past.replay = { hand, step: 1, state: this.replayState(hand, 1) };
    this.draw();
  }

  /**
   * The table as a spectator saw it after the first `step` events of `hand`: the same
   * folding of events as the live table, so the replay is the hand as it was played.
   * @param {any} hand @param {number} step
   */
  replayState(hand, step) {
    const me = hand.seats.find((/** @type {any} */ x) => x.account_id === this.past.accountId);
    // The record names each seat's player as the hand was played; a hand recorded before
    // names were kept takes the names this page saw then, else only its seat numbers.
    const seen = this.live()?.deals.seated.get(hand.hand_id);
    const snapshot = {
      seq: hand.events[0].seq - 1,
      table: {
        table_id: hand.table_id,
        options: this.live()?.options,
        you: me ? me.seat : null,
        seats: hand.seats.map((/** @type {any} */ x) => ({ seat: x.seat, name: x.name ?? seen?.get(x.seat)?.name ?? `Seat ${x.seat + 1}`, is_bot: x.account_id === HOUSE, stack: x.before, connected: true, bet: 0, in_hand: false, folded: false, all_in: false, tile_count: 0 })),
        hand: null,
      },
    };
    const state = new TableState(snapshot, () => {
      if (this.past.replay?.state === state) this.draw();
    });
    state.replaying = true;
    // The record is what a spectator saw: your own tiles come from what this page kept.
    const own = me ? (this.live()?.deals.hands.get(hand.hand_id)?.openings.get(me.seat) ?? []) : [];
    for (const event of hand.events.slice(0, step)) state.apply(me ? withOwnTiles(event, me.seat, own) : event);
    return state;
  }

  /** @param {{hand: any, step: number, state: TableState}} replay */
  replayView(replay) {
    const { hand, step, state } = replay;
    const total = hand.events.length;
    const go = (/** @type {number} */ to) => {
      const next = Math.max(1, Math.min(total, to));
      this.past.replay = { hand, step: next, state: this.replayState(hand, next) };
      this.draw();
    };
    const felt = h("div", { class: "felt replay-felt", "aria-label": "replayed table" });
    this.fillFelt(felt, state);
    const event = hand.events[step - 1];
    const said = state.log.slice(-3).map((line) => h("li", { class: line.kind, text: line.text }));
    return h(
      "div",
      { class: "replay", dataset: { hand: String(hand.hand_id), step: String(step), total: String(total) } },
      h("h3", { text: `Replay of hand #${hand.hand_id}` }),
      felt,
      h("p", { class: "replay-step", text: `Step ${step} of ${total}: ${event.type.replaceAll("_", " ")}` }),
      h("ol", { class: "log replay-log" }, said),
      h(
        "div",
        { class: "buttons" },
        h("button", { type: "button", class: "ghost", dataset: { action: "replay-first" }, disabled: step === 1, onclick: () => go(1), text: "« Start" }),
        h("button", { type: "button", class: "ghost", dataset: { action: "replay-back" }, disabled: step === 1, onclick: () => go(step - 1), text: "◀ Back" }),
        h("button", { type: "button", class: "act call", dataset: { action: "replay-next" }, disabled: step === total, onclick: () => go(step + 1), text: "Next ▶" }),
        h("button", { type: "button", class: "ghost", dataset: { action: "replay-end" }, disabled: step === total, onclick: () => go(total), text: "End »" }),
      ),
      state.result && step === total ? verdictView(state.result) : null,
      h("button", { type: "button", class: "ghost", dataset: { action: "history-list" }, onclick: () => this.backToTheList(hand.hand_id), text: "All hands" }),
    );
  }
}

/**
 * A recorded deal event of `seat` with the tiles this page was dealt there, from
 * their openings: the three lowest positions are the first tiles, the highest the fourth.
 * @param {any} event @param {number} seat @param {import("./verify.js").Opening[]} own
 */
function withOwnTiles(event, seat, own) {
  if (event.seat !== seat) return event;
  const sorted = [...own].sort((a, b) => a.position - b.position);
  if (event.type === "tiles_dealt" && !event.tiles && sorted.length >= 3) {
    const first = sorted.slice(0, 3);
    return { ...event, tiles: first.map((x) => x.tile), openings: first };
  }
  if (event.type === "fourth_tile_dealt" && !event.tile && sorted.length === 4) {
    return { ...event, tile: sorted[3].tile, opening: sorted[3] };
  }
  return event;
}
