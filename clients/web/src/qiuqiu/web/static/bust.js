/**
 * Out of chips: the hand that did it stays on screen (table.js), and buying in again
 * is one click, at this table or, closed, at a new one like it.
 */

import { h, chips } from "./dom.js";

/** @typedef {import("./state.js").TableState} TableState */
/** @typedef {import("./table.js").TableActions} TableActions */

/** The panel's offer to buy in again. @param {TableState} state @param {number} balance @param {TableActions} actions */
export function rebuyOffer(state, balance, actions) {
  const o = state.options;
  const most = Math.min(o.max_buy_in, balance);
  const buyIn = /** @type {HTMLInputElement} */ (h("input", { type: "number", name: "rebuy", min: o.min_buy_in, max: most, step: 1, value: String(Math.max(o.min_buy_in, Math.min(500, most))), inputMode: "numeric", "aria-label": "buy-in", onkeydown: (/** @type {KeyboardEvent} */ e) => e.key === "Enter" && rebuy.click() }));
  const can = balance >= o.min_buy_in;
  const rebuy = h("button", { type: "button", class: "act call", dataset: { action: "rebuy" }, onclick: () => actions.rebuy(state, Number(buyIn.value)), text: "Buy in again" });
  return h(
    "div",
    { class: "bust" },
    h("strong", { class: "bust-title", text: "You're out of chips" }),
    h("p", { class: "muted", text: can ? `Your balance is ${chips(balance)}. Buy in again at this table (${chips(o.min_buy_in)} to ${chips(most)})${state.closed ? ": it has closed, so a new one like it opens" : ""}, or go back to the lobby.` : `Your balance is ${chips(balance)}, less than this table's ${chips(o.min_buy_in)} buy-in.` }),
    h(
      "div",
      { class: "buttons" },
      can && buyIn,
      can && rebuy,
      h("button", { type: "button", class: "ghost", dataset: { action: "lobby" }, onclick: () => actions.leave(state), text: "Back to the lobby" }),
    ),
  );
}
