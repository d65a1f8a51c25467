// The table view: the felt with every seat, your tiles with their best cut, the
// buttons for what you may do now, the showdown and the deal's verification.
//
// Each region is redrawn from the TableState on every change, except the action
// panel, which is rebuilt once per turn so an amount being typed is not lost.

import { h, chips, counted } from "./dom.js";
import { dominoRow, cutView } from "./dominoes.js";
import { bestCut, handValue, CATEGORY_NAMES, spots } from "./hands.js";
import { explainResult, namesJoined } from "./state.js";
import { seedForm } from "./seeds.js";
import { auditView, short, verdictView } from "./fairview.js";
import { HistoryView } from "./history.js";
import { rebuyOffer } from "./bust.js";

/** @typedef {import("./state.js").TableState} TableState */
/** @typedef {import("./state.js").Seat} Seat */
/** @typedef {import("./state.js").Legal} Legal */

/**
 * What the view asks of the page.
 * @typedef {{act: (state: TableState, action: Record<string, unknown>) => boolean,
 *            leave: (state: TableState) => void, lobby: () => void,
 *            rebuy: (state: TableState, buyIn: number) => void,
 *            history: (state: TableState) => void, takeBack: () => void,
 *            setSeed: (state: TableState, seed: string) => void,
 *            seed: (state: TableState) => {current: string | null, pending: string | null}}} TableActions
 */

/**
 * Where each seat sits on the felt, in % of its width and height, counted clockwise
 * from the viewer's own seat at the bottom: laid out per table size so no two seat
 * boxes meet, and none meets the pot and the lines under it in the middle, on a phone
 * as on a desktop. Seats at the sides hug the rim (style.css), leaving the middle
 * a column of its own.
 * @type {Record<number, [number, number][]>}
 */
const SPOTS = {
  2: [[50, 91], [50, 10]],
  3: [[50, 91], [2, 27], [98, 27]],
  4: [[50, 91], [2, 50], [50, 10], [98, 50]],
  5: [[50, 91], [2, 62], [27, 9], [73, 9], [98, 62]],
  6: [[50, 91], [2, 75], [2, 25], [50, 10], [98, 25], [98, 75]],
};

export class TableView {
  /** @param {TableActions} actions */
  constructor(actions) {
    this.actions = actions;
    this.bar = h("header", { class: "table-bar" });
    this.felt = h("div", { class: "felt", role: "group", "aria-label": "table" });
    this.mine = h("section", { class: "mine", "aria-label": "your tiles" });
    this.panel = h("section", { class: "actions", "aria-live": "polite", tabindex: "-1", "aria-label": "Your actions" });
    this.result = h("section", { class: "result", "aria-live": "polite" });
    this.log = h("ol", { class: "log" });
    this.fair = this.fairnessPanel();
    this.history = new HistoryView((felt, state) => this.fillFelt(felt, state), () => this.state);
    this.root = h(
      "section",
      { class: "table-view" },
      this.bar,
      h("div", { class: "play" }, this.felt, this.mine, this.panel),
      h("aside", { class: "side" }, this.result, this.fair.root, h("details", { class: "log-box", open: true }, h("summary", { text: "Table log" }), this.log)),
      this.history.root,
    );
    /** What was on the felt at the last redraw, so only what is new moves. */
    this.shown = new Set();
    this.panelKey = "";
    this.barKey = "";
    /** Set while an action is on its way, so a second click cannot send it twice. */
    this.sent = false;
    /** @type {TableState | null} */
    this.state = null;
    /** Set while another tab or window has taken this account's session over. */
    this.elsewhere = false;
    /** Set while the page is connected: cut off (or taken over), it knows no turn. */
    this.online = false;
  }

  /** @param {TableState} state @param {{online: boolean, offline: string, elsewhere: boolean, leaving: import("./leaving.js").Leaving | null, balance: number}} page */
  render(state, page) {
    if (this.state?.tableId !== state.tableId) {
      this.panelKey = "";
      this.history.root.hidden = true;
    }
    this.state = state;
    this.balance = page.balance;
    this.elsewhere = page.elsewhere;
    this.online = page.online;
    const phase = state.hand?.phase;
    this.root.classList.toggle("offline", !page.online);
    this.root.classList.toggle("watching", state.you === null && !state.busted);
    // On a phone the showdown goes straight under the felt while it is news.
    this.root.classList.toggle("result-now", state.busted || phase === "showdown" || phase === "ended");
    this.drawBar(state, page.leaving);
    this.drawFelt(state);
    this.drawMine(state);
    this.drawPanel(state, page.online, page.offline);
    this.drawResult(state);
    this.drawFairness(state);
    this.drawLog(state);
    this.tick();
  }

  /** An action was refused: give the buttons back. */
  refused() {
    this.sent = false;
    this.panel.querySelectorAll("button").forEach((b) => (b.disabled = false));
    this.panel.querySelector(".amount input[type=number]")?.dispatchEvent(new Event("input"));
  }

  /** Move every turn timer on; called a few times a second. */
  tick() {
    const deadline = this.state?.localDeadline();
    for (const el of this.root.querySelectorAll("[data-timer]")) {
      const timer = /** @type {HTMLElement} */ (el);
      if (deadline == null || !this.state) continue;
      const total = this.state.options.turn_seconds * 1000;
      const left = Math.max(0, deadline - Date.now());
      const bar = /** @type {HTMLElement | null} */ (timer.querySelector(".timer-fill"));
      if (bar) bar.style.width = `${Math.min(100, (left / total) * 100)}%`;
      const text = timer.querySelector(".timer-text");
      if (text) text.textContent = `${Math.ceil(left / 1000)} s`;
      timer.classList.toggle("urgent", left < Math.min(5000, total / 3));
    }
    for (const el of this.root.querySelectorAll("[data-away-until]")) {
      const until = Number(/** @type {HTMLElement} */ (el).dataset.awayUntil);
      const left = Math.ceil((until - Date.now()) / 1000);
      // Past its grace period a seat in a hand is stood up as the hand ends (PROTOCOL.md).
      el.textContent = left > 0 ? `away · ${left} s` : "away · leaving";
    }
  }

  /** @param {TableState} state @param {import("./leaving.js").Leaving | null} leaving */
  drawBar(state, leaving) {
    const o = state.options;
    const stakes = [
      `Ante ${o.ante}`,
      `Bet ${o.min_bet}${o.max_bet ? `–${o.max_bet}` : "+"}`,
      o.betting_rounds === 2 ? "2 rounds" : "1 round",
      // What the lobby said of the table, still said once at it.
      o.max_raises != null && `${counted(o.max_raises, "raise")} a round`,
      o.manual_split && "players cut their own hands",
      o.tie_rule === "split" && "equal hands split",
      `${o.turn_seconds} s turns`,
    ].filter(Boolean);
    // Made again only when it says something new: made again at each redraw (a hand's
    // start redraws several times), a click pressed on one button and released on the
    // next reached neither, and did nothing.
    const key = JSON.stringify([state.tableId, stakes, state.busted, state.closed, state.you, leaving]);
    if (key === this.barKey) return;
    this.barKey = key;
    // Made again under the keyboard's focus ("Leave table" becoming "Leave now"): kept on
    // the control in the same place.
    const focused = [...this.bar.children].findIndex((child) => child === document.activeElement);
    this.bar.replaceChildren(
      h("button", { class: "ghost", type: "button", onclick: () => this.actions.lobby(), text: "← Lobby" }),
      h(
        "div",
        { class: "table-title" },
        h("strong", { text: `Table ${state.tableId}` }),
        h("span", { class: "stakes", text: stakes.join(" · ") }),
      ),
      h("span", { class: `role ${state.busted ? "out" : state.you === null ? "watch" : "seated"}`, text: state.busted ? "Out of chips" : state.you === null ? "Watching" : `Seat ${state.you + 1}` }),
      h("button", { class: "ghost", type: "button", dataset: { action: "history" }, onclick: () => this.state && this.actions.history(this.state), text: "Hand history" }),
      state.busted
        ? ""
        : state.closed
        ? h("span", { class: "role", text: "Closed" })
        : h("button", {
            class: "ghost leave",
            type: "button",
            // Once asked to wait for the hand's end, it offers to leave at once instead.
            disabled: leaving !== null && !leaving.afterHand,
            title: leaving?.afterHand ? "Leave at once: the rest of this hand is checked or folded for you" : "",
            onclick: () => this.state && this.actions.leave(this.state),
            text: leaving?.afterHand ? "Leave now" : leaving ? "Leaving…" : state.you === null ? "Stop watching" : "Leave table",
          }),
      leaving?.afterHand ? h("span", { class: "role leaving", role: "status", text: "Leaving after this hand" }) : "",
    );
    if (focused >= 0) /** @type {HTMLElement | undefined} */ (this.bar.children[focused])?.focus();
  }

  /** @param {TableState} state */
  drawFelt(state) {
    this.fillFelt(this.felt, state);
    this.markNew(state);
  }

  /** Draw `state`'s seats and middle into a felt (the live one, or the replayer's).
   * @param {HTMLElement} felt @param {TableState} state */
  fillFelt(felt, state) {
    const count = state.options.seats;
    const anchor = state.you ?? state.bustedSeat ?? 0;
    const seats = [];
    for (let n = 0; n < count; n++) {
      // Seat numbers go clockwise; the viewer sits at the bottom, as at a real table.
      const [x, y] = SPOTS[count][(n - anchor + count) % count];
      const seat = state.seats.get(n);
      const side = x < 15 ? " left" : x > 85 ? " right" : "";
      seats.push(
        h(
          "div",
          { class: `seat-spot${side}`, style: `left:${x}%;top:${y}%` },
          seat ? this.seatBox(state, seat) : h("div", { class: "seat empty", dataset: { seat: String(n) }, text: "Empty seat" }),
        ),
      );
    }
    felt.dataset.seats = String(count);
    felt.replaceChildren(...seats, this.center(state, state.hand));
  }

  /** Tiles dealt and chips bet since the last redraw get a short move (none when the
   * system asks for reduced motion: style.css). @param {TableState} state */
  markNew(state) {
    const handId = state.hand?.handId ?? 0;
    const now = new Set();
    for (const seatEl of this.felt.querySelectorAll(".seat[data-seat]")) {
      const seat = /** @type {HTMLElement} */ (seatEl).dataset.seat;
      seatEl.querySelectorAll(".seat-tiles .domino").forEach((tile, i) => {
        const key = `${handId}:${seat}:tile${i}`;
        now.add(key);
        if (!this.shown.has(key)) tile.classList.add("fresh");
      });
      const bet = seatEl.querySelector(".seat-bet");
      if (bet) {
        const key = `${handId}:${seat}:bet${bet.textContent}`;
        now.add(key);
        if (!this.shown.has(key)) bet.classList.add("fresh");
      }
    }
    const pot = this.felt.querySelector(".pot-amount");
    if (pot) {
      const key = `${handId}:pot${pot.textContent}`;
      now.add(key);
      if (!this.shown.has(key)) pot.parentElement?.classList.add("fresh");
    }
    this.shown = now;
  }

  /** @param {TableState} state @param {Seat} seat */
  seatBox(state, seat) {
    const hand = state.hand;
    const isActor = hand?.actor === seat.seat;
    const isMe = seat.seat === state.you;
    const won = seat.won > 0;
    const classes = [
      "seat",
      isMe && "me",
      isActor && "actor",
      seat.folded && "folded",
      !seat.connected && "away",
      won && "winner",
    ].filter(Boolean);
    let tiles = null;
    // Your own four as their best cut too, each pair's value under it: on a phone the
    // turn's panel covers the box below the felt that says it.
    if (seat.tiles.length === 4) {
      const cut = seat.cut ?? bestCut(seat.tiles);
      tiles = h("div", { class: "seat-tiles shown" }, cutView(cut.pairs, cut.values, { size: "sm" }));
    } else if (seat.tiles.length) {
      tiles = h("div", { class: "seat-tiles" }, dominoRow(seat.tiles, { size: "sm" }));
    } else if (seat.tileCount && !seat.folded) {
      tiles = h("div", { class: "seat-tiles" }, dominoRow(Array(seat.tileCount).fill(null), { size: "sm" }));
    }
    const value = seat.tiles.length === 4 && seat.category ? handValue(seat.category, (seat.cut ?? bestCut(seat.tiles)).values) : null;
    // Kept whole however narrow the box: a long name is cut short, not what tells it apart.
    const nameSuffix = isMe ? " (you)" : state.nameTaken(seat.name, seat.seat) ? ` (seat ${seat.seat + 1})` : null;
    // Read out as one group: its bare text alone reads "Dealer D bot 9,990".
    const said = [
      isMe ? `${seat.name} (you)` : state.seatName(seat.seat),
      seat.isBot && "the dealer bot",
      hand?.button === seat.seat && "on the button",
      `${chips(seat.stack)} chips`,
      seat.bet > 0 && `bet ${chips(seat.bet)} this round`,
      seat.folded ? "folded" : seat.allIn && "all in",
      !seat.connected && "away",
      isActor && "to act",
    ].filter(Boolean);
    return h(
      "div",
      { class: classes.join(" "), dataset: { seat: String(seat.seat) }, role: "group", "aria-label": said.join(", ") },
      h(
        "div",
        { class: "seat-head" },
        h("span", { class: "seat-name" }, h("span", { class: "seat-name-text", title: seat.name, text: seat.name }), nameSuffix && h("span", { class: "seat-name-suffix", text: nameSuffix })),
        hand?.button === seat.seat && h("span", { class: "badge button", title: "dealer button", text: "D" }),
        seat.isBot && h("span", { class: "badge bot", text: "bot" }),
      ),
      h(
        "div",
        { class: "seat-line" },
        h("span", { class: "seat-stack", text: chips(seat.stack) }),
        seat.bet > 0 && h("span", { class: "seat-bet", title: "bet this round" }, h("span", { class: "chip" }), chips(seat.bet)),
        seat.folded ? h("span", { class: "tag", text: "folded" }) : seat.allIn ? h("span", { class: "tag allin", text: "all in" }) : null,
        // In the row, not under it: a line more in a seat at the top or bottom of a short
        // felt reaches the middle of the table.
        !seat.connected &&
          h("span", seat.awayUntil ? { class: "tag away", title: "disconnected: the seat is kept for the grace period", dataset: { awayUntil: String(seat.awayUntil) }, text: "away" } : { class: "tag away", text: "away" }),
      ),
      seat.lastAction && !value && !won && h("div", { class: "last-action", text: seat.lastAction }),
      tiles,
      value && h("div", { class: `seat-value${won ? " won" : ""}`, text: won ? `${value} · wins ${chips(seat.won)}` : value }),
      !value && won && h("div", { class: "seat-value won", text: `wins ${chips(seat.won)}` }),
      isActor && !state.replaying && this.online && timer(),
    );
  }

  /** @param {TableState} state @param {TableState["hand"]} hand */
  center(state, hand) {
    let phase = "Waiting for players";
    if (state.closed) phase = "The table is closed";
    else if (state.moving) phase = "Moving to another server…";
    else if (hand?.phase === "betting") phase = `Hand #${hand.handId} · betting${state.options.betting_rounds === 2 ? ` round ${hand.round || 1}` : ""}`;
    else if (hand?.phase === "cutting") phase = `Hand #${hand.handId} · cutting`;
    else if (hand?.phase === "showdown") phase = `Hand #${hand.handId} · showdown`;
    // No next hand comes for a seat that went bust, until it buys in again. Said with no
    // hand number: between side seats a longer line breaks in two, and the middle has
    // no line to spare under the seats above and over yours (the result names the hand).
    else if (hand?.phase === "ended") phase = state.replaying || state.busted ? `Hand #${hand.handId} is over` : playersWanted(state) ? "Waiting for players" : "Next hand soon";
    let turn = "";
    // Cut off, the page no longer knows whose turn it is: the server's clock runs on, and
    // "Your turn" with its timer at 0 s stayed until the connection came back.
    if (hand && hand.actor !== null && (this.online || state.replaying)) {
      turn = hand.actor === state.you ? "Your turn" : `${state.name(hand.actor)} to act`;
      if (hand.toCall) turn += ` · ${chips(hand.toCall)} to call`;
    }
    return h(
      "div",
      { class: "center" },
      !hand && h("div", { class: "brand-mark", text: "QiuQiu" }),
      hand && hand.phase !== "ended" && h("div", { class: "pot" }, h("span", { class: "chip big" }), h("span", { class: "pot-label", text: "Pot" }), h("strong", { class: "pot-amount", text: chips(hand.pot) })),
      h("div", { class: "phase", text: phase }),
      outcome(state),
      turn && h("div", { class: `turn${hand?.actor === state.you ? " yours" : ""}`, text: turn }),
    );
  }

  /** @param {TableState} state */
  drawMine(state) {
    const me = state.me;
    if (state.busted) {
      this.mine.replaceChildren(h("p", { class: "muted", text: "Your seat is empty: the last hand took your chips." }));
      return;
    }
    if (state.you === null) {
      this.mine.replaceChildren(h("p", { class: "muted", text: "You are watching: players' tiles stay face down until the showdown." }));
      return;
    }
    if (!me || !me.tiles.length) {
      this.mine.replaceChildren(h("p", { class: "muted", text: me?.inHand === false && state.hand && state.hand.phase !== "ended" ? "You are dealt in from the next hand." : "Your tiles appear here when the hand is dealt." }));
      return;
    }
    let best = null;
    if (me.tiles.length === 4) {
      const cut = me.cut ?? bestCut(me.tiles);
      const category = me.category ?? cut.category;
      const special = CATEGORY_NAMES[category];
      best = h(
        "div",
        { class: "best" },
        h("span", { class: "best-label", text: me.cut ? "Your cut" : "Best cut" }),
        cutView(cut.pairs, cut.values, { size: "md" }),
        h("span", { class: `best-value${special ? " special" : ""}`, text: special ? `${special}!` : `${cut.values[0]}-${cut.values[1]}` }),
      );
    }
    this.mine.replaceChildren(
      h("div", { class: "mine-tiles" }, h("span", { class: "best-label", text: "Your tiles" }), dominoRow(me.tiles, { size: "lg" }), me.tiles.length === 3 && state.hand?.phase === "betting" && !me.folded && h("span", { class: "muted small", text: "The fourth tile comes after the betting." })),
      best ?? "",
    );
  }

  /** @param {TableState} state @param {boolean} online @param {string} offline what to say while not online */
  drawPanel(state, online, offline) {
    const legal = state.legal;
    const key = state.busted ? `busted|${state.tableId}|${this.balance}|${state.closed}` : legal && online ? `${state.tableId}|${state.turnKey}|${JSON.stringify(legal)}` : `idle|${state.hand?.actor}|${state.hand?.phase}|${online}|${this.elsewhere}|${offline}|${playersWanted(state)}`;
    if (key === this.panelKey) return;
    this.panelKey = key;
    this.sent = false;
    if (state.busted) {
      this.panel.classList.remove("my-turn");
      this.panel.replaceChildren(rebuyOffer(state, this.balance, this.actions));
      return;
    }
    if (this.elsewhere) {
      this.panel.classList.remove("my-turn");
      this.panel.replaceChildren(
        h("p", { class: "waiting", text: "The game goes on in another tab or window, which opened this account. This one no longer follows it." }),
        h("button", { type: "button", class: "act call", dataset: { action: "take-back" }, onclick: () => this.actions.takeBack(), text: "Play here instead" }),
      );
      return;
    }
    if (!legal || !online) {
      this.panel.classList.remove("my-turn");
      const hand = state.hand;
      let text = "";
      if (!online) text = offline;
      else if (hand && hand.actor !== null) text = `Waiting for ${state.name(hand.actor)}…`;
      // Cutting has no one seat to act, which left this panel empty.
      else if (hand?.phase === "cutting") text = `Waiting for the ${state.you === null ? "players" : "others"} to cut their hands…`;
      else if ((hand?.phase === "ended" || !hand) && playersWanted(state)) text = `Waiting for ${counted(playersWanted(state), "more player")} to sit down.`;
      else if (hand?.phase === "ended" || !hand) text = state.you === null ? "Waiting for the next hand." : "The next hand starts soon.";
      this.panel.replaceChildren(h("p", { class: "waiting", text }));
      return;
    }
    this.panel.classList.add("my-turn");
    // Focus left in the panel, or dropped to the page as the last turn's buttons went,
    // comes back to the panel: Tab then reaches this turn's actions, and no key press
    // meant for the last turn plays this one. Focus put anywhere else stays there.
    const focused = document.activeElement;
    const back = focused === document.body || this.panel.contains(focused);
    this.panel.replaceChildren(...this.turnControls(state, legal).filter((el) => el !== null));
    if (back) this.panel.focus({ preventScroll: true });
  }

  /** @param {TableState} state @param {Legal} legal */
  turnControls(state, legal) {
    const send = (/** @type {Record<string, unknown>} */ action) => {
      if (this.sent) return;
      if (this.actions.act(state, action)) {
        this.sent = true;
        this.panel.querySelectorAll("button").forEach((b) => (b.disabled = true));
      }
    };
    const head = h("div", { class: "turn-head" }, h("strong", { text: "Your turn" }), timer());
    if (legal.declare_cut) return [head, this.cutChooser(state, send)];
    const buttons = h(
      "div",
      { class: "buttons" },
      legal.fold && h("button", { class: "act fold", type: "button", dataset: { action: "fold" }, onclick: () => send({ type: "fold" }), text: "Fold" }),
      legal.check && h("button", { class: "act check", type: "button", dataset: { action: "check" }, onclick: () => send({ type: "check" }), text: "Check" }),
      legal.call != null && h("button", { class: "act call", type: "button", dataset: { action: "call" }, onclick: () => send({ type: "call" }), text: `Call ${chips(legal.call)}${legal.call === state.me?.stack ? " (all in)" : ""}` }),
    );
    const range = legal.bet ?? legal.raise_to;
    const amount = range ? this.amountControl(state, legal.bet ? "bet" : "raise", range, send) : null;
    return [head, buttons, amount];
  }

  /**
   * The amount field: a slider and a number, both bounded by the legal range, and
   * the button that sends it. Anything typed outside the range is pulled back in.
   * @param {TableState} state @param {"bet" | "raise"} kind
   * @param {{min: number, max: number}} range @param {(a: Record<string, unknown>) => void} send
   */
  amountControl(state, kind, range, send) {
    const { min, max } = range;
    const label = kind === "bet" ? "Bet" : "Raise to";
    const number = /** @type {HTMLInputElement} */ (h("input", { type: "number", name: "amount", inputMode: "numeric", min, max, step: 1, value: String(min), "aria-label": `${label} amount` }));
    const slider = /** @type {HTMLInputElement} */ (h("input", { type: "range", min, max, step: 1, value: String(min), "aria-label": `${label} amount slider`, disabled: min === max }));
    const hint = h("span", { class: "hint", text: min === max ? `${chips(min)} only` : `${chips(min)} – ${chips(max)}` });
    const go = /** @type {HTMLButtonElement} */ (h("button", { class: "act bet", type: "button", dataset: { action: kind } }));
    const clamp = (/** @type {number} */ n) => Math.min(max, Math.max(min, Math.round(n)));
    const current = () => Number(number.value);
    const valid = () => number.value !== "" && Number.isInteger(current()) && current() >= min && current() <= max;
    const show = () => {
      const ok = valid();
      number.classList.toggle("invalid", !ok);
      go.disabled = !ok || this.sent;
      go.textContent = ok ? `${label} ${chips(current())}${current() === max && max === (state.me?.stack ?? 0) + (state.me?.bet ?? 0) ? " (all in)" : ""}` : `${label}: ${chips(min)} to ${chips(max)}`;
      if (ok) slider.value = String(current());
    };
    const set = (/** @type {number} */ n) => {
      number.value = String(clamp(n));
      show();
    };
    number.addEventListener("input", show);
    number.addEventListener("change", () => set(number.value === "" ? min : current()));
    number.addEventListener("keydown", (e) => {
      if (/** @type {KeyboardEvent} */ (e).key === "Enter") go.click();
    });
    slider.addEventListener("input", () => set(Number(slider.value)));
    go.addEventListener("click", () => {
      if (!valid()) return set(current());
      send(kind === "bet" ? { type: "bet", amount: current() } : { type: "raise", to: current() });
    });
    const pot = state.hand?.pot ?? 0;
    const over = kind === "bet" ? 0 : (state.hand?.currentBet ?? 0);
    // Plainest name first: a pot fraction pulled into the range lands on one of its ends,
    // which Min and Max name outright; Pot reads plainer than ½ pot.
    /** @type {[string, number][]} */
    const presets = [["Min", min], ["Max", max], ["Pot", clamp(over + pot)], ["½ pot", clamp(over + Math.round(pot / 2))]];
    /** Each amount once, under its plainest name. @type {Map<number, string>} */
    const named = new Map();
    for (const [text, n] of presets) if (!named.has(n)) named.set(n, text);
    const quick = [...named].sort(([a], [b]) => a - b);
    show();
    return h(
      "div",
      { class: "amount" },
      h("label", { class: "amount-label" }, h("span", { text: label }), number, hint),
      slider,
      // One possible amount is the one the button says: a shortcut would set it again.
      quick.length > 1 && h("div", { class: "quick" }, quick.map(([n, text]) => h("button", { type: "button", class: "chipbtn", onclick: () => set(n), text }))),
      go,
    );
  }

  /** At a manual-split table: the ways to cut, best first, each pair with its tiles and
   * value; cuts worth the same are shown once. @param {TableState} state @param {(a: Record<string, unknown>) => void} send */
  cutChooser(state, send) {
    const tiles = state.me?.tiles ?? [];
    if (tiles.length !== 4) return h("p", { text: "Waiting for your fourth tile…" });
    const [a, b, c, d] = tiles;
    const pairValue = (/** @type {string[]} */ p) => (spots(p[0]) + spots(p[1])) % 10;
    const all = [
      [[a, b], [c, d]],
      [[a, c], [b, d]],
      [[a, d], [b, c]],
    ].map((cut) => {
      const pairs = pairValue(cut[0]) >= pairValue(cut[1]) ? cut : [cut[1], cut[0]];
      const values = pairs.map(pairValue);
      return { pairs, values, score: values[0] * 10 + values[1] };
    });
    all.sort((x, y) => y.score - x.score);
    const options = all.filter((o, i) => all.findIndex((x) => x.score === o.score) === i);
    const category = bestCut(tiles).category;
    const special = CATEGORY_NAMES[category];
    return h(
      "div",
      { class: "cuts" },
      h("p", { text: special ? `You hold ${special}: it wins however you cut it.` : "Cut into two pairs; your pick is final." }),
      options.map((o, i) =>
        h(
          "button",
          { type: "button", class: `act cut-option${i === 0 ? " best" : ""}`, dataset: { action: "declare_cut", value: `${o.values[0]}-${o.values[1]}` }, onclick: () => send({ type: "declare_cut", pairs: o.pairs }) },
          o.pairs.map((pair, n) =>
            h("span", { class: "cut-pair" }, dominoRow(pair, { size: "sm" }), h("span", { class: "cut-pair-value", text: `${n === 0 ? "high" : "low"} pair ${o.values[n]}` })),
          ),
          h("span", { class: "cut-total", text: `${o.values[0]}-${o.values[1]}` }),
          h("span", { class: `cut-note${i === 0 ? " best" : ""}`, text: i === 0 ? "Best" : `worse than ${options[0].values[0]}-${options[0].values[1]}` }),
        ),
      ),
    );
  }

  /** @param {TableState} state */
  drawResult(state) {
    const result = state.result;
    this.result.dataset.hand = result ? String(result.handId) : "";
    if (!result) {
      this.result.replaceChildren(
        h("h3", { text: "This hand" }),
        h("p", { class: "muted small", text: "When a hand ends, its showdown and its deal check show here." }),
      );
      return;
    }
    const winners = new Map();
    for (const award of result.awards) for (const share of award.shares) winners.set(share.seat, (winners.get(share.seat) ?? 0) + share.amount);
    const rows = result.hands.map((shown) => {
      const won = winners.get(shown.seat);
      return h(
        "li",
        { class: `shown-hand${won ? " winner" : ""}`, dataset: { seat: String(shown.seat) } },
        h("span", { class: "who", text: shown.name }),
        cutView(shown.cut.pairs, shown.cut.values, { size: "sm" }),
        h("span", { class: `value${CATEGORY_NAMES[shown.category] ? " special" : ""}`, text: handValue(shown.category, shown.cut.values) }),
        won ? h("span", { class: "badge win", title: "chips taken from the pot, and the winner's gain after what they put in", text: winnerBadge(won, result.nets.get(shown.seat)) }) : null,
      );
    });
    let summary = "";
    if (result.voided) summary = `The hand was called off (${result.voided}); every chip went back.`;
    else if (!result.shown && winners.size) summary = `${namesJoined([...winners.keys()].map((s) => winnerName(state, result, s)))} ${winners.size === 1 && [...winners.keys()][0] === state.you ? "take" : "takes"} the pot: everyone else folded, no tiles are shown.`;
    // A hand paid against the rules has no reason to give: "6 beats 9" would be the page's.
    const paidWrong = result.payout && !result.payout.ok;
    const reasons = result.voided || !result.shown || paidWrong ? [] : explainResult(result, (n) => winnerName(state, result, n));
    const me = state.you ?? state.bustedSeat;
    const mine = me === null ? undefined : result.nets.get(me);
    const hand = state.hand;
    const later = hand && hand.handId !== result.handId && hand.phase !== "ended";
    this.result.replaceChildren(
      h("h3", { text: `${later ? "Last hand" : "Hand"} #${result.handId} · ${result.voided ? "voided" : result.shown ? "showdown" : "no showdown"}` }),
      rows.length ? h("ul", { class: "showdown" }, rows) : "",
      summary ? h("p", { class: "summary", text: summary }) : "",
      reasons.length ? h("ul", { class: "why" }, reasons.map((line) => h("li", { text: line }))) : "",
      mine !== undefined && !result.voided ? h("p", { class: `net ${mine > 0 ? "up" : mine < 0 ? "down" : ""}`, text: `For you: ${mine > 0 ? "+" : mine < 0 ? "−" : "±"}${chips(Math.abs(mine))} net this hand` }) : "",
      verdictView(result) ?? "",
      later ? h("p", { class: "muted small", text: `Hand #${hand.handId} is committed to ${hand.commitment.slice(0, 16)}…` }) : "",
    );
  }

  /**
   * The fair-deal panel: what the server committed to, this seat's client seed
   * with a way to change it, and the full rebuild once the table's seed is out.
   * Built once, so a seed being typed survives the redraws.
   */
  fairnessPanel() {
    const note = h("p", { class: "muted small fair-note" });
    const seed = h("p", { class: "seed-line small" });
    const form = seedForm((chosen) => this.state && this.actions.setSeed(this.state, chosen));
    const audit = h("div", { class: "audit-slot" });
    const root = h("section", { class: "fairness", "aria-live": "polite" }, h("h3", { text: "Fair deal" }), note, seed, form, audit);
    return { root, note, seed, form, audit };
  }

  /** @param {TableState} state */
  drawFairness(state) {
    const { note, seed, form, audit } = this.fair;
    note.textContent = state.hand
      ? `Hand #${state.hand.handId}: before the deal the server committed to every position of the deck (${state.hand.commitment.slice(0, 16)}…). When it ends, each tile you saw is checked against it.`
      : "Each hand commits to every position of its deck before the deal; each tile you see is checked against it when the hand ends.";
    const seated = state.you !== null && !state.closed;
    form.hidden = !seated;
    if (seated) {
      const { current, pending } = this.actions.seed(state);
      seed.textContent = `Your client seed: ${current ? short(current) : "unknown to this page"}${pending ? `; the new one, ${short(pending)}, is on its way` : ""}`;
      seed.title = pending ?? current ?? "";
    } else {
      seed.textContent = "";
    }
    seed.hidden = !seated;
    const view = auditView(state.deals);
    if (view) audit.replaceChildren(view);
    else audit.replaceChildren();
  }

  /** @param {TableState} state */
  drawLog(state) {
    const items = state.log.slice(-30).map((line) => h("li", { class: line.kind, text: line.text }));
    this.log.replaceChildren(...items);
    this.log.scrollTop = this.log.scrollHeight;
  }
}

/** A winner's take, and their gain once their own chips in the pot are counted.
 * @param {number} won @param {number | undefined} net */
function winnerBadge(won, net) {
  return net === undefined || net === won ? `Wins ${chips(won)}` : `Wins ${chips(won)} · ${net >= 0 ? "+" : "−"}${chips(Math.abs(net))} net`;
}

/**
 * How many more players the table needs before it deals again: it deals the seats
 * with chips, once there are `min_players` of them (the dealer bot's included).
 * @param {TableState} state
 */
function playersWanted(state) {
  const ready = [...state.seats.values()].filter((s) => s.stack > 0).length;
  return Math.max(0, state.options.min_players - ready);
}

/** A winner as named when the pot was awarded, though the seat is empty now.
 * @param {TableState} state @param {import("./state.js").Result} result @param {number} seat */
function winnerName(state, result, seat) {
  return result.names.get(seat) ?? state.name(seat);
}

/** Who won the last hand, in one line for the middle of the table. @param {TableState} state */
function outcome(state) {
  const result = state.result;
  if (!result || !state.hand || result.handId !== state.hand.handId) return null;
  if (state.hand.phase !== "ended" && state.hand.phase !== "showdown") return null;
  if (result.voided) return h("div", { class: "outcome", text: "Hand called off: chips returned" });
  // From the result, not the seats: a winner may have stood up as the hand ended.
  const won = new Map();
  for (const award of result.awards) for (const share of award.shares) won.set(share.seat, (won.get(share.seat) ?? 0) + share.amount);
  if (!won.size) return null;
  const shown = new Map(result.hands.map((x) => [x.seat, x]));
  // Each winner in parts: a line too long for the middle gives up "with 9-2" first, whole,
  // then the name, then the winners after the first, never an amount (style.css, .outcome).
  const parts = [...won].sort(([a], [b]) => a - b).map(([seat, amount], i) => {
    const hand = shown.get(seat);
    const value = hand ? handValue(hand.category, hand.cut.values) : null;
    return h("span", { class: "outcome-winner" }, [
      h("span", { class: "outcome-head" }, [
        i ? h("span", { text: " · " }) : "",
        h("span", { class: "outcome-who", text: winnerName(state, result, seat) }),
        h("span", { class: "outcome-amount", text: ` ${seat === state.you ? "win" : "wins"} ${chips(amount)}` }),
      ]),
      value ? h("span", { class: "outcome-worth", text: ` with ${value}` }) : "",
    ]);
  });
  return h("div", { class: "outcome" }, parts);
}

function timer() {
  return h("div", { class: "timer", dataset: { timer: "" } }, h("div", { class: "timer-track" }, h("div", { class: "timer-fill" })), h("span", { class: "timer-text" }));
}
