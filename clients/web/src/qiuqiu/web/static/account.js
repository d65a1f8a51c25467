// The page's header once signed in, and the card that signs in.
import { h, chips, counted } from "./dom.js";
import { signed } from "./away.js";
import { NO_VISIBLE_NAME } from "./connection.js";

/**
 * The name, the balance with the chips at tables beside it, and this evening's tally.
 * @param {string} name @param {number} balance
 * @param {number[]} stacks the player's stack at each table where it is seated
 * @param {import("./tally.js").Tally} s
 */
export function accountBar(name, balance, stacks, s) {
  const atTables = stacks.reduce((sum, stack) => sum + stack, 0);
  return [
    h("span", { class: "who", text: name }),
    h(
      "span",
      { class: "balance", title: "chips in your balance, not at a table" },
      h("span", { class: "chip" }),
      h("span", { class: "balance-amount", text: chips(balance) }),
      atTables ? h("small", { class: "at-table", text: ` + ${chips(atTables)} ${stacks.length > 1 ? `at ${stacks.length} tables` : "at the table"}` }) : null,
    ),
    h(
      "span",
      { class: `session ${s.net > 0 ? "up" : s.net < 0 ? "down" : ""}`, title: `This evening: ${counted(s.hands, "hand")}, won ${s.won}, lost ${s.lost}, biggest pot won ${chips(s.biggest)}` },
      h("span", { class: "session-label", text: "Session" }),
      h("strong", { class: "session-net", text: signed(s.net) }),
      h("small", { class: "session-hands", text: `${counted(s.hands, "hand")} · ${s.won}W ${s.lost}L · top ${chips(s.biggest)}` }),
    ),
  ];
}

/**
 * The sign-in card, with `note` (the connection's word on the name) under its form.
 * @param {string} name the name last used @param {HTMLElement} note
 * @param {(name: string) => void} identify
 */
export function signinCard(name, note, identify) {
  const input = /** @type {HTMLInputElement} */ (h("input", { name: "name", maxLength: 24, required: true, autocomplete: "nickname", placeholder: "Your name", value: name, "aria-label": "your name" }));
  return h(
    "section",
    { class: "signin card" },
    h("h1", { text: "Domino 99, at the table" }),
    h("p", { class: "muted", text: "Four dominoes, two pairs, the best pair worth up to 9. Bet on your tiles against the dealer bot or with friends. Every deal is committed before it is dealt: each tile you see is checked in your browser when the hand ends, and every shuffle is rebuilt when the table closes." }),
    h(
      "form",
      {
        onsubmit: (/** @type {Event} */ e) => {
          e.preventDefault();
          const typed = input.value.trim();
          if (typed) identify(typed);
          // Else the click did nothing, under the card's word on the name before.
          else note.textContent = NO_VISIBLE_NAME;
        },
      },
      input,
      h("button", { type: "submit", class: "primary", dataset: { action: "enter" }, text: "Take a seat" }),
    ),
    note,
  );
}
