// Commit-reveal: at `hand_started` the server publishes sha256(seed || deck); at
// `hand_ended` it reveals both. Checking them here, in the player's own browser,
// is what makes the deal trustworthy: the server cannot have changed the deck
// after seeing anyone act. PROTOCOL.md, "Fairness: checking a deal".

import { sha256 } from "./sha256.js";
import { sameTiles } from "./hands.js";

/** @param {Uint8Array} bytes */
const toHex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

/** @param {string} hex */
function fromHex(hex) {
  if (!/^([0-9a-f]{2})*$/i.test(hex)) throw new Error("not hex");
  return Uint8Array.from(hex.match(/../g) ?? [], (pair) => parseInt(pair, 16));
}

/**
 * SHA-256 in lowercase hex: the browser's own when the page is a secure context,
 * the pure-JS one otherwise.
 * @param {Uint8Array} bytes
 * @returns {Promise<string>}
 */
export async function sha256Hex(bytes) {
  const subtle = globalThis.crypto?.subtle;
  if (subtle) {
    try {
      return toHex(new Uint8Array(await subtle.digest("SHA-256", bytes)));
    } catch {
      // Some embedded browsers expose `subtle` but refuse to use it: fall through.
    }
  }
  return toHex(sha256(bytes));
}

/**
 * The commitment the server should have published for this seed and deck.
 * @param {string} seed 64 hex characters
 * @param {string[]} deck 28 tiles, "6-1" style
 */
export async function commitmentOf(seed, deck) {
  const seedBytes = fromHex(seed);
  const deckBytes = new TextEncoder().encode(deck.join(","));
  const bytes = new Uint8Array(seedBytes.length + deckBytes.length);
  bytes.set(seedBytes);
  bytes.set(deckBytes, seedBytes.length);
  return sha256Hex(bytes);
}

/**
 * Which tiles the deck gave each seat: seats in acting order (the first after the
 * button first) get three tiles each, then a fourth each, in the same order.
 * @param {string[]} deck
 * @param {number[]} dealtSeats every seat dealt in
 * @param {number} button
 * @returns {Map<number, {three: string[], fourth: string}>}
 */
export function dealFromDeck(deck, dealtSeats, button) {
  const sorted = [...dealtSeats].sort((a, b) => a - b);
  const order = [...sorted.filter((s) => s > button), ...sorted.filter((s) => s <= button)];
  const n = order.length;
  return new Map(
    order.map((seat, i) => [seat, { three: deck.slice(3 * i, 3 * i + 3), fourth: deck[3 * n + i] }]),
  );
}

/**
 * @typedef {object} Verdict
 * @property {boolean} ok
 * @property {boolean} commitment whether seed and deck hash to the commitment
 * @property {number} tilesChecked how many seats' seen tiles were matched to the deck
 * @property {string} detail a sentence for people
 */

/**
 * Check a finished hand: the commitment, and that every tile this viewer saw
 * (its own, and every hand shown down) is where the deck says it was dealt.
 * @param {{commitment: string, seed: string, deck: string[], dealtSeats: number[] | null,
 *          button: number, seen: Map<number, string[]>}} hand
 * @returns {Promise<Verdict>}
 */
export async function verifyHand({ commitment, seed, deck, dealtSeats, button, seen }) {
  let actual;
  try {
    actual = await commitmentOf(seed, deck);
  } catch {
    return { ok: false, commitment: false, tilesChecked: 0, detail: "The revealed seed is not valid hex." };
  }
  if (actual !== commitment.toLowerCase()) {
    return {
      ok: false,
      commitment: false,
      tilesChecked: 0,
      detail: "The revealed seed and deck do not hash to the commitment made before the deal.",
    };
  }
  if (!dealtSeats) {
    return { ok: true, commitment: true, tilesChecked: 0, detail: "The seed and deck match the commitment." };
  }
  const deal = dealFromDeck(deck, dealtSeats, button);
  let checked = 0;
  for (const [seat, tiles] of seen) {
    const dealt = deal.get(seat);
    if (!dealt || tiles.length === 0) continue;
    const expected = tiles.length === 3 ? dealt.three : [...dealt.three, dealt.fourth];
    if (!sameTiles(tiles, expected)) {
      return {
        ok: false,
        commitment: true,
        tilesChecked: checked,
        detail: `Seat ${seat} holds tiles the committed deck did not deal it.`,
      };
    }
    checked += 1;
  }
  const tilesNote = checked ? ` and every tile shown (${checked} ${checked === 1 ? "hand" : "hands"}) was dealt from it` : "";
  return { ok: true, commitment: true, tilesChecked: checked, detail: `The seed and deck match the commitment${tilesNote}.` };
}
