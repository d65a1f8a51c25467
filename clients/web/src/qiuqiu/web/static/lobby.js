// The lobby: the open tables with their stakes and seats, a form to open a new
// one, and the buttons to join or watch.

import { h, chips, counted } from "./dom.js";
import { auditView } from "./fairview.js";

/** No amount on the wire is larger (PROTOCOL.md, "Strict fields"): the form's stakes
 * and buy-ins go as far as the server's, and no further. */
const MAX_CHIPS = 1e12;

/**
 * What the view asks of the page.
 * @typedef {{create: (options: Record<string, unknown>, buyIn: number) => void,
 *            join: (tableId: string, buyIn: number) => void,
 *            watch: (tableId: string) => void, open: (tableId: string) => void,
 *            refresh: () => void, dismiss: () => void}} LobbyActions
 */

export class LobbyView {
  /** @param {LobbyActions} actions */
  constructor(actions) {
    this.actions = actions;
    this.list = h("div", { class: "table-list", "aria-live": "polite" });
    this.form = this.createForm();
    this.farewell = h("div", { class: "farewell-slot" });
    this.audits = h("div", { class: "audits-slot" });
    this.root = h(
      "section",
      { class: "lobby" },
      this.farewell,
      this.audits,
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
      h("input", { type: "number", name, value: String(value), min, max, step: 1, inputMode: "numeric", required: value !== "", ...extra });
    const seats = h("select", { name: "seats" }, [2, 3, 4, 5, 6].map((n) => h("option", { value: String(n), text: `${n} seats` })));
    const bot = h("input", { type: "checkbox", name: "dealer_bot", checked: true });
    const rounds = h("select", { name: "betting_rounds" }, h("option", { value: "1", text: "1 (classic)" }), h("option", { value: "2", text: "2 (after the 4th tile too)" }));
    const tie = h("select", { name: "tie_rule" }, h("option", { value: "highest_tile", text: "highest tile wins" }), h("option", { value: "split", text: "split the pot" }));
    const split = h("input", { type: "checkbox", name: "manual_split" });
    const form = /** @type {HTMLFormElement} */ (
      h(
        "form",
        { class: "create", oninput: () => this.checkAcross(), onsubmit: (/** @type {Event} */ e) => this.submit(e) },
        h("div", { class: "grid" }, field("Seats", seats), h("label", { class: "field check" }, bot, h("span", { text: "Play against the dealer bot" }))),
        h("div", { class: "grid" }, field("Ante", num("ante", 10, 0, MAX_CHIPS)), field("Min bet", num("min_bet", 10, 1, MAX_CHIPS)), field("Max bet", num("max_bet", "", 1, MAX_CHIPS, { placeholder: "no limit" }))),
        h("div", { class: "grid" }, field("Betting rounds", rounds)),
        h("div", { class: "grid" }, field("Raises a round", num("max_raises", "", 0, 100, { placeholder: "no limit" })), field("Seconds per turn", num("turn_seconds", 30, 0.05, 600, { step: "any", inputMode: "decimal" }))),
        h("div", { class: "grid select-first" }, field("Equal hands", tie), h("label", { class: "field check" }, split, h("span", { text: "Players cut their own hands" }))),
        h("div", { class: "grid" }, field("Players to start", num("min_players", 2, 2, 6), "without the bot"), field("Buy-in from", num("min_buy_in", 100, 1, MAX_CHIPS)), field("Buy-in up to", num("max_buy_in", 10000, 1, MAX_CHIPS))),
        h("div", { class: "grid" }, field("Your buy-in", num("buy_in", 500, 1, MAX_CHIPS))),
        h("button", { type: "submit", class: "primary", dataset: { action: "create" }, text: "Open the table and sit down" }),
      )
    );
    return form;
  }

  /**
   * What one field's own `min` and `max` cannot say, the browser says all the same,
   * and keeps the form from being sent: told in the page's words, not the server's.
   */
  checkAcross() {
    const field = (/** @type {string} */ name) => /** @type {HTMLInputElement} */ (this.form.elements.namedItem(name));
    const [minBet, maxBet] = [field("min_bet"), field("max_bet")];
    const [fewest, most, ante] = [field("min_buy_in"), field("max_buy_in"), field("ante")];
    const seats = Number(/** @type {HTMLSelectElement} */ (this.form.elements.namedItem("seats")).value);
    maxBet.setCustomValidity(maxBet.value !== "" && Number(maxBet.value) < Number(minBet.value) ? `The max bet must be at least the min bet, ${chips(Number(minBet.value))}.` : "");
    // Each stack can win every other at the table: all of them must fit in one amount.
    const tooMany = Number(most.value) * seats > MAX_CHIPS ? `Buy-ins times the seats must be no more than ${chips(MAX_CHIPS)} chips: at most ${chips(Math.floor(MAX_CHIPS / seats))} at ${seats} seats.` : "";
    most.setCustomValidity(Number(most.value) < Number(fewest.value) ? `Buy-ins must go up to at least where they start, ${chips(Number(fewest.value))}.` : tooMany);
    ante.setCustomValidity(Number(ante.value) > Number(most.value) ? `The ante must be no more than the largest buy-in, ${chips(Number(most.value))}.` : "");
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
      // With the bot a hand starts at once; without it, when this many have sat down.
      min_players: withBot ? 2 : Math.min(seats, value("min_players")),
      ante: value("ante"),
      min_bet: value("min_bet"),
      betting_rounds: value("betting_rounds"),
      tie_rule: data.get("tie_rule"),
      manual_split: data.get("manual_split") === "on",
      turn_seconds: value("turn_seconds"),
      min_buy_in: value("min_buy_in"),
      max_buy_in: value("max_buy_in"),
    };
    if (data.get("max_bet")) options.max_bet = value("max_bet");
    if (data.get("max_raises")) options.max_raises = value("max_raises");
    this.actions.create(options, value("buy_in"));
  }

  /**
   * @param {any[] | null} tables the `table_list` entries; `null` while offline, when they are not known
   * @param {{elsewhere: boolean, balance: number, seatedAt: Set<string>, watchingAt: Set<string>, farewell: any, session: import("./tally.js").Tally,
   *          audits: import("./deals.js").DealLedger[]}} me
   */
  render(tables, me) {
    this.drawFarewell(me.farewell, me.session);
    this.drawAudits(me.audits);
    if (tables === null) {
      // Taken over by another tab, the page is online all the same: only playing here again lists them.
      const when = me.elsewhere ? "you play here again (Play here instead, above)" : "this page is back online";
      this.list.replaceChildren(h("p", { class: "muted empty", text: `The open tables are listed again once ${when}.` }));
      return;
    }
    if (!tables.length) {
      this.list.replaceChildren(h("p", { class: "muted empty", text: "No tables yet. Open one, with the dealer bot or for friends to join." }));
      return;
    }
    // The list is made again every few seconds: what the player is typing, and where,
    // must outlast it.
    const typed = new Map([...this.list.querySelectorAll("input[name=buy_in][data-typed]")].map((input) => [rowOf(input), /** @type {HTMLInputElement} */ (input).value]));
    const active = document.activeElement;
    const focused = active instanceof HTMLElement && this.list.contains(active) ? { row: rowOf(active), name: active.getAttribute("name"), action: active.dataset.action } : null;
    this.list.replaceChildren(...tables.map((t) => this.row(t, me)));
    for (const input of this.list.querySelectorAll("input[name=buy_in]")) {
      const value = typed.get(rowOf(input));
      if (value === undefined) continue;
      /** @type {HTMLInputElement} */ (input).value = value;
      /** @type {HTMLInputElement} */ (input).dataset.typed = "";
    }
    if (focused) {
      const again = [...this.list.querySelectorAll(".table-row input, .table-row button")].find(
        (x) => rowOf(x) === focused.row && x.getAttribute("name") === focused.name && /** @type {HTMLElement} */ (x).dataset.action === focused.action,
      );
      /** @type {HTMLElement | undefined} */ (again)?.focus();
    }
  }

  /** What the table you just left came to, and the evening so far.
   * @param {{tableId: string, tally: import("./tally.js").Tally, balance: number, why: string} | null} farewell
   * @param {import("./tally.js").Tally} session */
  drawFarewell(farewell, session) {
    if (!farewell) {
      this.farewell.replaceChildren();
      return;
    }
    const t = farewell.tally;
    const signed = (/** @type {number} */ n) => `${n > 0 ? "+" : n < 0 ? "−" : "±"}${chips(Math.abs(n))}`;
    this.farewell.replaceChildren(
      h(
        "div",
        { class: "card farewell", role: "status" },
        h("h2", { text: `You left table ${farewell.tableId}` }),
        h("p", { text: farewell.why }),
        h("p", { class: "farewell-table", text: `At that table: ${counted(t.hands, "hand")}, won ${t.won}, lost ${t.lost}, net ${signed(t.net)}, biggest pot won ${chips(t.biggest)}.` }),
        h("p", { class: "farewell-session muted", text: `This evening: ${counted(session.hands, "hand")}, net ${signed(session.net)}. Your balance: ${chips(farewell.balance)}.` }),
        h("button", { type: "button", class: "ghost small", onclick: () => this.actions.dismiss(), text: "Dismiss" }),
      ),
    );
  }

  /** The full rebuild of each table left or closed, once its seed is out. @param {import("./deals.js").DealLedger[]} ledgers */
  drawAudits(ledgers) {
    const views = ledgers.map(auditView).filter((x) => x !== null);
    if (!views.length) {
      this.audits.replaceChildren();
      return;
    }
    this.audits.replaceChildren(h("div", { class: "card audits" }, h("h2", { text: "Shuffles of the tables you left" }), views));
  }

  /** @param {any} t @param {{balance: number, seatedAt: Set<string>, watchingAt: Set<string>}} me */
  row(t, me) {
    const o = t.options;
    const taken = new Map(t.seats.map((/** @type {any} */ s) => [s.seat, s]));
    const seatChips = [];
    // Players may share a name: the seat's number tells them apart.
    const twice = new Set(t.seats.map((/** @type {any} */ s) => s.name).filter((/** @type {string} */ name, /** @type {number} */ i, /** @type {string[]} */ all) => all.indexOf(name) !== i));
    for (let n = 0; n < o.seats; n++) {
      const s = taken.get(n);
      const name = s && twice.has(s.name) ? `${s.name} (seat ${n + 1})` : s?.name;
      // Isolated, a right-to-left name keeps its stack after it: bare, the stack's digits
      // joined the name's run and showed before it.
      seatChips.push(
        s
          ? h("span", { class: `seat-chip${s.is_bot ? " bot" : ""}`, title: `${name}: ${counted(s.stack, "chip")}` }, h("bdi", { text: name }), h("small", { text: ` ${chips(s.stack)}` }))
          : h("span", { class: "seat-chip free", text: "free" }),
      );
    }
    const seated = me.seatedAt.has(t.table_id);
    const suggested = Math.max(o.min_buy_in, Math.min(500, o.max_buy_in, me.balance));
    const buyIn = /** @type {HTMLInputElement} */ (h("input", { type: "number", name: "buy_in", min: o.min_buy_in, max: Math.min(o.max_buy_in, me.balance), value: String(suggested), step: 1, inputMode: "numeric", "aria-label": "buy-in", oninput: () => (buyIn.dataset.typed = ""), onkeydown: (/** @type {KeyboardEvent} */ e) => e.key === "Enter" && join.click() }));
    const canJoin = !seated && t.free_seats > 0 && me.balance >= o.min_buy_in;
    const join = h("button", { type: "button", class: "primary", dataset: { action: "join" }, disabled: !canJoin, onclick: () => this.actions.join(t.table_id, Number(buyIn.value)), text: t.free_seats > 0 ? "Join" : "Full" });
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
        h("div", { class: "t-rules muted small", text: [o.tie_rule === "split" ? "equal hands split" : "highest tile breaks ties", o.manual_split ? "players cut their own hands" : "best cut automatic", o.max_raises != null ? `${counted(o.max_raises, "raise")} a round` : ""].filter(Boolean).join(" · ") }),
        h("div", { class: "t-seats" }, h("span", { class: "t-count", text: `${o.seats - t.free_seats}/${o.seats} seats` }), seatChips),
      ),
      h(
        "div",
        { class: "t-actions" },
        seated
          ? h("button", { type: "button", class: "primary", dataset: { action: "open" }, onclick: () => this.actions.open(t.table_id), text: "Back to your seat" })
          : [
              canJoin && buyIn,
              join,
              // A table watched out of sight (left for the lobby) is still watched: back to it.
              me.watchingAt.has(t.table_id)
                ? h("button", { type: "button", class: "ghost", dataset: { action: "open" }, onclick: () => this.actions.open(t.table_id), text: "Back to watching" })
                : h("button", { type: "button", class: "ghost", dataset: { action: "watch" }, onclick: () => this.actions.watch(t.table_id), text: "Watch" }),
            ],
      ),
    );
  }
}

/** The table of the lobby row an element is in. @param {Element} element */
function rowOf(element) {
  return /** @type {HTMLElement | null} */ (element.closest(".table-row"))?.dataset.tableId;
}
