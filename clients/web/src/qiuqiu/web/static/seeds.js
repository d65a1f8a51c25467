// This page's client seeds, one per table: its own entropy in every shuffle of
// its hands there (PROTOCOL.md, "Fairness"). The server committed to its table
// seed before it could see them, so it cannot steer a deck they enter. A seed
// travels with `join_table`, or later with `set_seed`, and applies from the next
// hand; until `seed_set` comes back either the old or the new one may be dealt with.
// A seat whose seed this page does not know (found on resuming) is held, once the
// page sends one, to at most one hand dealt with another before `seed_set` comes.
// The player may choose one, in the form of the fair-deal panel.

import { h } from "./dom.js";

const SEED = /^[A-Za-z0-9_-]{1,64}$/;

/** 32 random bytes from the browser's CSPRNG, in hex. */
export function newClientSeed() {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** @param {string} seed */
const validClientSeed = (seed) => SEED.test(seed);

/** The characters of `seed` the server refuses in a seed (PROTOCOL.md, `set_seed`), said in words; "" for none. @param {string} seed */
function seedProblem(seed) {
  const refused = [...new Set(seed.replace(/[A-Za-z0-9_-]/g, ""))];
  if (!refused.length) return "";
  return `A seed holds only letters a–z and A–Z, digits, _ and -: not ${refused.map((c) => (c === " " ? "spaces" : `“${c}”`)).join(", ")}.`;
}

/**
 * The form that takes a seed of the player's, typed or random. One the server would
 * refuse is said under the field, and not sent.
 * @param {(seed: string) => void} send
 */
export function seedForm(send) {
  const input = /** @type {HTMLInputElement} */ (h("input", { name: "client_seed", maxLength: 64, placeholder: "your own seed", autocomplete: "off", spellcheck: false, "aria-label": "your client seed" }));
  const use = /** @type {HTMLButtonElement} */ (h("button", { type: "submit", class: "ghost small", dataset: { action: "set-seed" }, text: "Use this seed" }));
  const problem = h("p", { class: "seed-problem", role: "alert" });
  const check = () => {
    problem.textContent = seedProblem(input.value);
    problem.hidden = !problem.textContent;
    use.disabled = !validClientSeed(input.value);
  };
  input.addEventListener("input", check);
  check();
  return /** @type {HTMLFormElement} */ (
    h(
      "form",
      {
        class: "seed-form",
        onsubmit: (/** @type {Event} */ e) => {
          e.preventDefault();
          if (!validClientSeed(input.value)) return;
          send(input.value);
          input.value = "";
          check();
        },
      },
      input,
      problem,
      use,
      h("button", { type: "button", class: "ghost small", dataset: { action: "new-seed" }, onclick: () => send(newClientSeed()), text: "New random seed" }),
      h("small", { class: "muted", text: "Letters a–z and A–Z, digits, _ and -, up to 64. It goes into every shuffle of your hands here; a new one applies from the next hand." }),
    )
  );
}

/**
 * @typedef {object} SeatSeeds
 * @property {string | null} current the seed `seed_set` last confirmed, or the page joined with
 * @property {string | null} pending a seed sent with `set_seed`, not confirmed yet
 * @property {number | null} unconfirmed while the page does not know the seat's seed and
 *   waits for the `seed_set` of the first `set_seed` it sent: the hands dealt to the seat
 *   since with another seed than the one sent. An honest server deals at most one so (the
 *   hand it was writing as the seed came); one that never confirms could otherwise list
 *   a seed of its own choosing in every hand.
 */

export class SeedBook {
  constructor() {
    /** @type {Map<string, SeatSeeds>} */
    this.tables = new Map();
  }

  /** The seed to sit down with at `tableId`: dealt with from this seat's first hand. @param {string} tableId */
  joining(tableId) {
    const seed = newClientSeed();
    this.tables.set(tableId, { current: seed, pending: null, unconfirmed: null });
    return seed;
  }

  /**
   * A `set_seed` is on its way. Sent again before the first is answered (a snapshot after
   * a gap), the first one's `seed_set` still comes: the count goes on.
   * @param {string} tableId @param {string} seed
   */
  sending(tableId, seed) {
    const { current, unconfirmed } = this.get(tableId);
    this.tables.set(tableId, { current, pending: seed, unconfirmed: current ? null : (unconfirmed ?? 0) });
  }

  /** `seed_set` came back: the seed of every hand from the next one. @param {string} tableId @param {string} seed */
  confirmed(tableId, seed) {
    this.tables.set(tableId, { current: seed, pending: null, unconfirmed: null });
  }

  /**
   * A `set_seed` got no `seed_set`: refused, or lost with the connection. The server may
   * never have written it, and deal with the seat's old seed until one sent again is
   * confirmed: the count starts again with the next `set_seed`.
   * @param {string} tableId
   */
  unanswered(tableId) {
    const known = this.tables.get(tableId);
    if (known) known.unconfirmed = null;
  }

  /** A `set_seed` was refused or lost: the old seed stays. @param {string} tableId */
  dropped(tableId) {
    const known = this.tables.get(tableId);
    if (known) known.pending = null;
  }

  /** @param {string} tableId */
  forget(tableId) {
    this.tables.delete(tableId);
  }

  /** @param {string} tableId @returns {SeatSeeds} */
  get(tableId) {
    return this.tables.get(tableId) ?? { current: null, pending: null, unconfirmed: null };
  }

  /**
   * The seeds a hand starting now may list for this page's seat, or null when it
   * cannot know (a seat found on resuming, whose seed another page sent).
   * @param {string} tableId
   * @returns {string[] | null}
   */
  allowed(tableId) {
    const { current, pending } = this.get(tableId);
    if (!current) return null;
    return pending ? [current, pending] : [current];
  }

  /**
   * A hand began, dealt to this page's seat with `listed` as its seed: why that is one
   * hand too many without the seed this page sent, or null.
   * @param {string} tableId @param {string | undefined} listed
   * @returns {string | null}
   */
  dealt(tableId, listed) {
    const known = this.tables.get(tableId);
    if (!known || known.unconfirmed === null || listed === known.pending) return null;
    known.unconfirmed += 1;
    if (known.unconfirmed === 1) return null;
    return "A second hand was dealt without the seed this page sent, which the server never confirmed: it could have chosen your seed, and with it your tiles.";
  }
}
