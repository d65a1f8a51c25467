// The lobby: the open tables with their stakes and seats, a form to open a new
// one, and the buttons to join or watch.

import { h, chips } from "./dom.js";

/**
 * What the view asks of the page.
 * @typedef {{create: (options: Record<string, unknown>, buyIn: number) => void,
 *            join: (tableId: string, buyIn: number) => void,
 *            watch: (tableId: string) => void, open: (tableId: string) => void,
 *            refresh: () => void}} LobbyActions
 */

export class LobbyView {
  /** @param {LobbyActions} actions */
  constructor(actions) {
    this.actions = actions;
    this.list = h("div", { class: "table-list", "aria-live": "polite" });
    this.form = this.createForm();
    this.root = h(
      "section",
      { class: "lobby" },
      h(
        "div",
        { class: "card tables-card" },
        h(
          "div",
          { class: "card-head" },
          h("h2", { text: "Open tables" }),
          h("button", { type: "button", class: "ghost", onclick: () => actions.refresh(), text: "Refresh" }),
        ),
        this.list,
      ),
      h("div", { class: "card create-card" }, h("h2", { text: "Open a table" }), this.form),
    );
  }

  createForm() {
    const field = (/** @type {string} */ label, /** @type {HTMLElement} */ input, /** @type {string} */ note = "") =>
      h("label", { class: "field" }, h("span", { text: label }), input, note && h("small", { text: note }));
    const num = (/** @type {string} */ name, /** @type {number | ""} */ value, /** @type {number} */ min, /** @type {number} */ max, extra = {}) =>
      h("input", { type: "number", name, value: String(value), min, max, step: name === "turn_seconds" ? 1 : 1, inputMode: "numeric", required: value !== "", ...extra });
    const seats = h("select", { name: "seats" }, [2, 3, 4, 5, 6].map((n) => h("option", { value: String(n), text: `${n} seats` })));
    const bot = h("input", { type: "checkbox", name: "dealer_bot", checked: true });
    const rounds = h("select", { name: "betting_rounds" }, h("option", { value: "1", text: "1 (classic)" }), h("option", { value: "2", text: "2 (after the 4th tile too)" }));
    const form = /** @type {HTMLFormElement} */ (
      h(
        "form",
        { class: "create", onsubmit: (/** @type {Event} */ e) => this.submit(e) },
        h("div", { class: "grid" }, field("Seats", seats), h("label", { class: "field check" }, bot, h("span", { text: "Play against the dealer bot" }))),
        h("div", { class: "grid" }, field("Ante", num("ante", 10, 0, 100000)), field("Min bet", num("min_bet", 10, 1, 100000)), field("Max bet", num("max_bet", "", 1, 1000000, { placeholder: "no limit" }))),
        h("div", { class: "grid" }, field("Betting rounds", rounds), field("Seconds per turn", num("turn_seconds", 30, 5, 600))),
        h("div", { class: "grid" }, field("Your buy-in", num("buy_in", 500, 100, 10000))),
        h("button", { type: "submit", class: "primary", dataset: { action: "create" }, text: "Open the table and sit down" }),
      )
    );
    return form;
  }

  /** @param {Event} event */
  submit(event) {
    event.preventDefault();
    const data = new FormData(this.form);
    const value = (/** @type {string} */ name) => Number(data.get(name));
    const seats = value("seats");
    const withBot = data.get("dealer_bot") === "on";
    /** @type {Record<string, unknown>} */
    const options = {
      seats,
      dealer_bot: withBot,
      // Without the bot, a hand starts as soon as two players sit down.
      min_players: 2,
      ante: value("ante"),
      min_bet: value("min_bet"),
      betting_rounds: value("betting_rounds"),
      turn_seconds: value("turn_seconds"),
    };
    if (data.get("max_bet")) options.max_bet = value("max_bet");
    this.actions.create(options, value("buy_in"));
  }

  /**
   * @param {any[]} tables the `table_list` entries
   * @param {{balance: number, seatedAt: Set<string>}} me
   */
  render(tables, me) {
    if (!tables.length) {
      this.list.replaceChildren(h("p", { class: "muted empty", text: "No tables yet. Open one, with the dealer bot or for friends to join." }));
      return;
    }
    this.list.replaceChildren(...tables.map((t) => this.row(t, me)));
  }

  /** @param {any} t @param {{balance: number, seatedAt: Set<string>}} me */
  row(t, me) {
    const o = t.options;
    const taken = new Map(t.seats.map((/** @type {any} */ s) => [s.seat, s]));
    const seatChips = [];
    for (let n = 0; n < o.seats; n++) {
      const s = taken.get(n);
      seatChips.push(
        s
          ? h("span", { class: `seat-chip${s.is_bot ? " bot" : ""}`, title: `${s.name}: ${chips(s.stack)} chips` }, s.name, h("small", { text: ` ${chips(s.stack)}` }))
          : h("span", { class: "seat-chip free", text: "free" }),
      );
    }
    const seated = me.seatedAt.has(t.table_id);
    const suggested = Math.max(o.min_buy_in, Math.min(500, o.max_buy_in, me.balance));
    const buyIn = /** @type {HTMLInputElement} */ (h("input", { type: "number", name: "buy_in", min: o.min_buy_in, max: Math.min(o.max_buy_in, me.balance), value: String(suggested), step: 1, inputMode: "numeric", "aria-label": "buy-in" }));
    const canJoin = !seated && t.free_seats > 0 && me.balance >= o.min_buy_in;
    return h(
      "article",
      { class: "table-row", dataset: { tableId: t.table_id } },
      h(
        "div",
        { class: "t-main" },
        h(
          "div",
          { class: "t-title" },
          h("strong", { text: `Table ${t.table_id}` }),
          h("span", { class: `badge ${o.dealer_bot ? "bot" : "people"}`, text: o.dealer_bot ? "vs dealer bot" : "players only" }),
          h("span", { class: `badge ${t.playing ? "live" : "idle"}`, text: t.playing ? "playing" : "waiting" }),
        ),
        h("div", { class: "t-stakes", text: `Ante ${o.ante} · bets ${o.min_bet}${o.max_bet ? `–${o.max_bet}` : "+"} · ${o.betting_rounds === 2 ? "2 rounds" : "1 round"} · buy-in ${chips(o.min_buy_in)}–${chips(o.max_buy_in)}` }),
        h("div", { class: "t-seats" }, h("span", { class: "t-count", text: `${o.seats - t.free_seats}/${o.seats} seats` }), seatChips),
      ),
      h(
        "div",
        { class: "t-actions" },
        seated
          ? h("button", { type: "button", class: "primary", dataset: { action: "open" }, onclick: () => this.actions.open(t.table_id), text: "Back to your seat" })
          : [
              canJoin && buyIn,
              h("button", { type: "button", class: "primary", dataset: { action: "join" }, disabled: !canJoin, onclick: () => this.actions.join(t.table_id, Number(buyIn.value)), text: t.free_seats > 0 ? "Join" : "Full" }),
              h("button", { type: "button", class: "ghost", dataset: { action: "watch" }, onclick: () => this.actions.watch(t.table_id), text: "Watch" }),
            ],
      ),
    );
  }
}
