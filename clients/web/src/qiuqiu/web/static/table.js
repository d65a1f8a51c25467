// The table view: the felt with every seat, your tiles with their best cut, the
// buttons for what you may do now, the showdown and the deal's verification.
//
// Each region is redrawn from the TableState on every change, except the action
// panel, which is rebuilt once per turn so an amount being typed is not lost.

import { h, chips } from "./dom.js";
import { dominoRow, cutView } from "./dominoes.js";
import { bestCut, handValue, CATEGORY_NAMES } from "./hands.js";

/** @typedef {import("./state.js").TableState} TableState */
/** @typedef {import("./state.js").Seat} Seat */
/** @typedef {import("./state.js").Legal} Legal */

/**
 * What the view asks of the page.
 * @typedef {{act: (state: TableState, action: Record<string, unknown>) => boolean,
 *            leave: (state: TableState) => void, lobby: () => void}} TableActions
 */

export class TableView {
  /** @param {TableActions} actions */
  constructor(actions) {
    this.actions = actions;
    this.bar = h("header", { class: "table-bar" });
    this.felt = h("div", { class: "felt", "aria-label": "table" });
    this.mine = h("section", { class: "mine", "aria-label": "your tiles" });
    this.panel = h("section", { class: "actions", "aria-live": "polite" });
    this.result = h("section", { class: "result", "aria-live": "polite" });
    this.log = h("ol", { class: "log" });
    this.root = h(
      "section",
      { class: "table-view" },
      this.bar,
      h("div", { class: "play" }, this.felt, this.mine, this.panel),
      h("aside", { class: "side" }, this.result, h("details", { class: "log-box", open: true }, h("summary", { text: "Table log" }), this.log)),
    );
    this.panelKey = "";
    /** Set while an action is on its way, so a second click cannot send it twice. */
    this.sent = false;
    /** @type {TableState | null} */
    this.state = null;
  }

  /** @param {TableState} state @param {{online: boolean, leaving: boolean}} page */
  render(state, page) {
    if (this.state?.tableId !== state.tableId) this.panelKey = "";
    this.state = state;
    this.root.classList.toggle("offline", !page.online);
    this.root.classList.toggle("watching", state.you === null);
    this.drawBar(state, page.leaving);
    this.drawFelt(state);
    this.drawMine(state);
    this.drawPanel(state, page.online);
    this.drawResult(state);
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
  }

  /** @param {TableState} state @param {boolean} leaving */
  drawBar(state, leaving) {
    const o = state.options;
    const stakes = [
      `Ante ${o.ante}`,
      `Bet ${o.min_bet}${o.max_bet ? `–${o.max_bet}` : "+"}`,
      o.betting_rounds === 2 ? "2 rounds" : "1 round",
      `${o.turn_seconds} s turns`,
    ];
    this.bar.replaceChildren(
      h("button", { class: "ghost", type: "button", onclick: () => this.actions.lobby(), text: "← Lobby" }),
      h(
        "div",
        { class: "table-title" },
        h("strong", { text: `Table ${state.tableId}` }),
        h("span", { class: "stakes", text: stakes.join(" · ") }),
      ),
      h("span", { class: `role ${state.you === null ? "watch" : "seated"}`, text: state.you === null ? "Watching" : `Seat ${state.you + 1}` }),
      state.closed
        ? h("span", { class: "role", text: "Closed" })
        : h("button", {
            class: "ghost leave",
            type: "button",
            disabled: leaving,
            onclick: () => this.actions.leave(state),
            text: leaving ? "Leaving after this hand…" : state.you === null ? "Stop watching" : "Leave table",
          }),
    );
  }

  /** @param {TableState} state */
  drawFelt(state) {
    const hand = state.hand;
    const count = state.options.seats;
    const anchor = state.you ?? 0;
    const seats = [];
    for (let n = 0; n < count; n++) {
      // Seat numbers go clockwise; the viewer sits at the bottom, as at a real table.
      const angle = Math.PI / 2 + (((n - anchor + count) % count) * 2 * Math.PI) / count;
      const x = 50 + 41 * Math.cos(angle);
      const y = 50 + 39 * Math.sin(angle);
      const seat = state.seats.get(n);
      seats.push(
        h(
          "div",
          { class: `seat-spot${y < 45 ? " upper" : ""}`, style: `left:${x.toFixed(2)}%;top:${y.toFixed(2)}%` },
          seat ? this.seatBox(state, seat) : h("div", { class: "seat empty", dataset: { seat: String(n) }, text: "Empty seat" }),
        ),
      );
    }
    this.felt.replaceChildren(...seats, this.center(state, hand));
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
    if (seat.tiles.length === 4 && (hand?.phase === "showdown" || hand?.phase === "ended" || !isMe)) {
      const cut = seat.cut ?? bestCut(seat.tiles);
      tiles = h("div", { class: "seat-tiles shown" }, cutView(cut.pairs, cut.values, { size: "sm" }));
    } else if (seat.tiles.length) {
      tiles = h("div", { class: "seat-tiles" }, dominoRow(seat.tiles, { size: "sm" }));
    } else if (seat.tileCount && !seat.folded) {
      tiles = h("div", { class: "seat-tiles" }, dominoRow(Array(seat.tileCount).fill(null), { size: "sm" }));
    }
    const value = seat.tiles.length === 4 && seat.category ? handValue(seat.category, (seat.cut ?? bestCut(seat.tiles)).values) : null;
    return h(
      "div",
      { class: classes.join(" "), dataset: { seat: String(seat.seat) } },
      h(
        "div",
        { class: "seat-head" },
        h("span", { class: "seat-name", text: isMe ? `${seat.name} (you)` : seat.name }),
        hand?.button === seat.seat && h("span", { class: "badge button", title: "dealer button", text: "D" }),
        seat.isBot && h("span", { class: "badge bot", text: "bot" }),
      ),
      h(
        "div",
        { class: "seat-line" },
        h("span", { class: "seat-stack", text: chips(seat.stack) }),
        seat.folded ? h("span", { class: "tag", text: "folded" }) : seat.allIn ? h("span", { class: "tag allin", text: "all in" }) : null,
        !seat.connected && h("span", { class: "tag away", text: "away" }),
      ),
      tiles,
      value && h("div", { class: `seat-value${won ? " won" : ""}`, text: won ? `${value} · wins ${chips(seat.won)}` : value }),
      !value && won && h("div", { class: "seat-value won", text: `wins ${chips(seat.won)}` }),
      seat.bet > 0 && h("div", { class: "seat-bet" }, h("span", { class: "chip" }), chips(seat.bet)),
      isActor && timer(),
    );
  }

  /** @param {TableState} state @param {TableState["hand"]} hand */
  center(state, hand) {
    let phase = "Waiting for players";
    if (state.closed) phase = "The table is closed";
    else if (hand?.phase === "betting") phase = `Hand #${hand.handId} · betting${state.options.betting_rounds === 2 ? ` round ${hand.round || 1}` : ""}`;
    else if (hand?.phase === "cutting") phase = `Hand #${hand.handId} · cutting`;
    else if (hand?.phase === "showdown") phase = `Hand #${hand.handId} · showdown`;
    else if (hand?.phase === "ended") phase = `Hand #${hand.handId} is over · next hand soon`;
    let turn = "";
    if (hand && hand.actor !== null) {
      turn = hand.actor === state.you ? "Your turn" : `${state.name(hand.actor)} to act`;
      if (hand.toCall) turn += ` · ${chips(hand.toCall)} to call`;
    }
    return h(
      "div",
      { class: "center" },
      h("div", { class: "brand-mark", text: "QiuQiu" }),
      hand && hand.phase !== "ended" && h("div", { class: "pot" }, h("span", { class: "chip big" }), h("span", { class: "pot-label", text: "Pot" }), h("strong", { class: "pot-amount", text: chips(hand.pot) })),
      h("div", { class: "phase", text: phase }),
      outcome(state),
      turn && h("div", { class: `turn${hand?.actor === state.you ? " yours" : ""}`, text: turn }),
    );
  }

  /** @param {TableState} state */
  drawMine(state) {
    const me = state.me;
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
      h("div", { class: "mine-tiles" }, h("span", { class: "best-label", text: "Your tiles" }), dominoRow(me.tiles, { size: "lg" }), me.tiles.length === 3 && h("span", { class: "muted small", text: "The fourth tile comes after the betting." })),
      best ?? "",
    );
  }

  /** @param {TableState} state @param {boolean} online */
  drawPanel(state, online) {
    const legal = state.legal;
    const key = legal && online ? `${state.tableId}|${state.turnKey}|${JSON.stringify(legal)}` : `idle|${state.hand?.actor}|${state.hand?.phase}|${online}`;
    if (key === this.panelKey) return;
    this.panelKey = key;
    this.sent = false;
    if (!legal || !online) {
      this.panel.classList.remove("my-turn");
      const hand = state.hand;
      let text = "";
      if (!online) text = "Reconnecting… your seat is kept meanwhile.";
      else if (hand && hand.actor !== null) text = `Waiting for ${state.name(hand.actor)}…`;
      else if (hand?.phase === "ended" || !hand) text = state.you === null ? "Waiting for the next hand." : "The next hand starts soon.";
      this.panel.replaceChildren(h("p", { class: "waiting", text }));
      return;
    }
    this.panel.classList.add("my-turn");
    this.panel.replaceChildren(...this.turnControls(state, legal).filter((el) => el !== null));
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
      legal.call != null && h("button", { class: "act call", type: "button", dataset: { action: "call" }, onclick: () => send({ type: "call" }), text: `Call ${chips(legal.call)}` }),
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
    const quick = [
      ["Min", min],
      ["½ pot", kind === "bet" ? Math.round(pot / 2) : (state.hand?.currentBet ?? 0) + Math.round(pot / 2)],
      ["Pot", kind === "bet" ? pot : (state.hand?.currentBet ?? 0) + pot],
      ["Max", max],
    ];
    show();
    return h(
      "div",
      { class: "amount" },
      h("label", { class: "amount-label" }, h("span", { text: label }), number, hint),
      slider,
      h(
        "div",
        { class: "quick" },
        quick.map(([text, n]) => h("button", { type: "button", class: "chipbtn", onclick: () => set(Number(n)), text })),
      ),
      go,
    );
  }

  /** At a manual-split table: the three ways to cut, best first. @param {TableState} state @param {(a: Record<string, unknown>) => void} send */
  cutChooser(state, send) {
    const tiles = state.me?.tiles ?? [];
    if (tiles.length !== 4) return h("p", { text: "Waiting for your fourth tile…" });
    const [a, b, c, d] = tiles;
    const options = [
      [[a, b], [c, d]],
      [[a, c], [b, d]],
      [[a, d], [b, c]],
    ].map((pairs) => {
      const values = pairs.map((p) => p.reduce((sum, t) => sum + t.split("-").reduce((x, y) => x + Number(y), 0), 0) % 10);
      return { pairs, values, score: Math.max(...values) * 10 + Math.min(...values) };
    });
    options.sort((x, y) => y.score - x.score);
    return h(
      "div",
      { class: "cuts" },
      h("p", { text: "Cut your hand into two pairs (binding):" }),
      options.map((o, i) =>
        h(
          "button",
          { type: "button", class: `act cut-option${i === 0 ? " best" : ""}`, dataset: { action: "declare_cut" }, onclick: () => send({ type: "declare_cut", pairs: o.pairs }) },
          cutView(o.pairs, o.values, { size: "sm" }),
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
        h("h3", { text: "Fair deal" }),
        h("p", { class: "muted small", text: state.hand ? `Before the deal the server committed to this hand's deck: ${state.hand.commitment.slice(0, 16)}…. When the hand ends, this page checks the revealed seed and deck against it.` : "Each hand opens with a commitment to its deck, checked here when the hand ends." }),
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
        won ? h("span", { class: "badge win", text: `Winner +${chips(won)}` }) : null,
      );
    });
    let summary = "";
    if (result.voided) summary = `The hand was called off (${result.voided}); every chip went back.`;
    else if (!result.shown && winners.size) summary = `${[...winners.keys()].map((s) => state.name(s)).join(" and ")} ${winners.size === 1 && [...winners.keys()][0] === state.you ? "take" : "takes"} the pot: everyone else folded, no tiles are shown.`;
    else if (winners.size) summary = `${[...winners].map(([s, n]) => `${state.name(s)} ${s === state.you ? "win" : "wins"} ${chips(n)}`).join(", ")}.`;
    const hand = state.hand;
    const later = hand && hand.handId !== result.handId && hand.phase !== "ended";
    this.result.replaceChildren(
      h("h3", { text: `${later ? "Last hand" : "Hand"} #${result.handId} · ${result.voided ? "voided" : result.shown ? "showdown" : "no showdown"}` }),
      rows.length ? h("ul", { class: "showdown" }, rows) : "",
      summary ? h("p", { class: "summary", text: summary }) : "",
      verdictView(result) ?? "",
      later ? h("p", { class: "muted small", text: `Hand #${hand.handId} is committed to ${hand.commitment.slice(0, 16)}…` }) : "",
    );
  }

  /** @param {TableState} state */
  drawLog(state) {
    const items = state.log.slice(-30).map((line) => h("li", { class: line.kind, text: line.text }));
    this.log.replaceChildren(...items);
    this.log.scrollTop = this.log.scrollHeight;
  }
}

/** @param {import("./state.js").Result} result */
function verdictView(result) {
  if (result.verifying || (!result.verdict && result.seed)) {
    return h("div", { class: "verify pending", text: "Checking the deal…" });
  }
  const verdict = result.verdict;
  if (!verdict) return null;
  return h(
    "div",
    { class: `verify ${verdict.ok ? "ok" : "bad"}`, role: verdict.ok ? "status" : "alert" },
    h("strong", { text: verdict.ok ? "✔ Deal verified" : "✖ DEAL CHECK FAILED" }),
    h("span", { text: verdict.ok ? ` ${verdict.detail}` : ` ${verdict.detail} Do not trust this server.` }),
    h(
      "details",
      {},
      h("summary", { text: "Details" }),
      h("dl", {}, h("dt", { text: "Commitment" }), h("dd", { class: "mono", text: result.commitment }), h("dt", { text: "Seed" }), h("dd", { class: "mono", text: result.seed })),
    ),
  );
}

/** Who won the last hand, in one line for the middle of the table. @param {TableState} state */
function outcome(state) {
  const result = state.result;
  if (!result || !state.hand || result.handId !== state.hand.handId) return null;
  if (state.hand.phase !== "ended" && state.hand.phase !== "showdown") return null;
  if (result.voided) return h("div", { class: "outcome", text: "Hand called off: chips returned" });
  const won = [...state.seats.values()].filter((s) => s.won > 0);
  if (!won.length) return null;
  return h(
    "div",
    { class: "outcome" },
    won
      .map((s) => {
        const value = s.tiles.length === 4 && s.category ? ` with ${handValue(s.category, (s.cut ?? bestCut(s.tiles)).values)}` : "";
        return `${state.name(s.seat)} ${s.seat === state.you ? "win" : "wins"} ${chips(s.won)}${value}`;
      })
      .join(" · "),
  );
}

function timer() {
  return h("div", { class: "timer", dataset: { timer: "" } }, h("div", { class: "timer-track" }, h("div", { class: "timer-fill" })), h("span", { class: "timer-text" }));
}
