// The fair deal, checked in the player's own browser (PROTOCOL.md, "Fairness").
//
// Each hand opens with 28 leaves, `sha256(position || salt || tile)`, one per
// deck position in dealing order, and their commitment. A seat is sent the
// opening (position, tile, salt) of each of its own tiles, a showdown opens the
// hands shown, and nothing else is opened while the table lives. So at each
// hand's end this page can check only what it saw: every opening sits at a
// position the deal order gives that seat and hashes to its leaf. When the table
// closes its seed comes out, and every deck of the table can be rebuilt from it
// and the client seeds `hand_started` listed: that is what shows nobody, the
// server included, chose the deck.
//
// The rebuild runs on the pure-JS SHA-256 (HMAC on top of it), so it needs no
// secure context; the per-hand hashes use `crypto.subtle` when the page has it.

import { sha256 } from "./sha256.js";

export const DECK_SIZE = 28;
const SALT_BYTES = 16;
const FIRST_TILES = 3;
const HEX32 = /^[0-9a-f]{64}$/;
const SALT = /^[0-9a-f]{32}$/;
const CLIENT_SEED = /^[A-Za-z0-9_-]{1,64}$/;
/** Every tile, in the order the shuffle starts from: 0-0, 1-0, 1-1, 2-0, ..., 6-6. */
const CANONICAL = Array.from({ length: 7 }, (_, high) => Array.from({ length: high + 1 }, (_, low) => `${high}-${low}`)).flat();
const ascii = new TextEncoder();

/** @param {Uint8Array} bytes */
export const toHex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

/** @param {string} hex */
export function fromHex(hex) {
  if (!/^([0-9a-f]{2})*$/.test(hex)) throw new Error("not lowercase hex");
  return Uint8Array.from(hex.match(/../g) ?? [], (pair) => parseInt(pair, 16));
}

/** @param {Uint8Array[]} parts */
function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** @param {number | bigint} n as 8 bytes big-endian */
function u64(n) {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(n));
  return out;
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
 * HMAC-SHA256 (RFC 2104) on the pure-JS SHA-256.
 * @param {Uint8Array} key @param {Uint8Array} message
 * @returns {Uint8Array}
 */
export function hmacSha256(key, message) {
  const block = new Uint8Array(64);
  block.set(key.length > 64 ? sha256(key) : key);
  const inner = block.map((b) => b ^ 0x36);
  const outer = block.map((b) => b ^ 0x5c);
  return sha256(concat(outer, sha256(concat(inner, message))));
}

/** @param {string} seed @returns {Uint8Array} */
function seedBytes(seed) {
  if (!HEX32.test(seed)) throw new Error("a seed is 32 bytes in lowercase hex");
  return fromHex(seed);
}

/** `sha256(table_seed)`: what a table publishes before its first hand. @param {string} tableSeed */
export function seedCommitment(tableSeed) {
  return toHex(sha256(seedBytes(tableSeed)));
}

/**
 * `HMAC(table_seed, table_id || 0x00 || hand_id as 8 bytes big-endian)`, in hex.
 * @param {string} tableSeed @param {string} tableId @param {number} handId
 */
export function handSeed(tableSeed, tableId, handId) {
  return toHex(hmacSha256(seedBytes(tableSeed), concat(ascii.encode(tableId), new Uint8Array([0]), u64(handId))));
}

/**
 * @typedef {{seat: number, client_seed: string}} SeatSeed
 */

/**
 * `HMAC(hand_seed, seeds)`: for every dealt seat in ascending order, its number,
 * its client seed's length (a byte each) and the seed's ASCII.
 * @param {string} handSeedHex @param {SeatSeed[]} clientSeeds
 * @returns {Uint8Array}
 */
export function dealKey(handSeedHex, clientSeeds) {
  const sorted = [...clientSeeds].sort((a, b) => a.seat - b.seat);
  const parts = sorted.map(({ seat, client_seed: seed }) => {
    if (seed && !CLIENT_SEED.test(seed)) throw new Error("a client seed is 1 to 64 letters, digits, _ or -");
    return concat(new Uint8Array([seat, seed.length]), ascii.encode(seed));
  });
  return hmacSha256(seedBytes(handSeedHex), concat(...parts));
}

/** `HMAC(key, 0) || HMAC(key, 1) || ...`, counters as 8 bytes big-endian. */
export class Stream {
  /** @param {Uint8Array} key */
  constructor(key) {
    this.key = key;
    this.counter = 0;
    this.buffer = new Uint8Array(0);
  }

  /** @param {number} n @returns {Uint8Array} */
  take(n) {
    while (this.buffer.length < n) {
      this.buffer = concat(this.buffer, hmacSha256(this.key, u64(this.counter)));
      this.counter += 1;
    }
    const taken = this.buffer.slice(0, n);
    this.buffer = this.buffer.slice(n);
    return taken;
  }
}

/**
 * `sha256(position byte || salt || tile ASCII)` in hex, synchronously.
 * @param {number} position @param {string} tile @param {string} salt 16 bytes in hex
 */
export function leafOf(position, tile, salt) {
  return toHex(sha256(leafBytes(position, tile, salt)));
}

/** @param {number} position @param {string} tile @param {string} salt */
function leafBytes(position, tile, salt) {
  if (!SALT.test(salt)) throw new Error("a salt is 16 bytes in lowercase hex");
  return concat(new Uint8Array([position]), fromHex(salt), ascii.encode(tile));
}

/** `sha256` of the leaves' bytes one after another, in hex. @param {string[]} leaves */
export function commitmentOf(leaves) {
  return toHex(sha256(concat(...leaves.map(fromHex))));
}

/**
 * @typedef {{tiles: string[], salts: string[], leaves: string[], commitment: string}} SealedDeck
 */

/**
 * The hand's deck: 28 salts of 16 bytes from the start of the stream, then a
 * Fisher-Yates shuffle of the canonical order, each draw 4 bytes big-endian,
 * drawn again while it falls in the biased top of the range.
 * @param {string} handSeedHex @param {SeatSeed[]} clientSeeds
 * @returns {SealedDeck}
 */
export function deriveDeck(handSeedHex, clientSeeds) {
  const source = new Stream(dealKey(handSeedHex, clientSeeds));
  const salts = Array.from({ length: DECK_SIZE }, () => toHex(source.take(SALT_BYTES)));
  const tiles = [...CANONICAL];
  for (let i = DECK_SIZE - 1; i > 0; i--) {
    const n = i + 1;
    const limit = 2 ** 32 - (2 ** 32 % n);
    let u;
    do {
      const bytes = source.take(4);
      u = new DataView(bytes.buffer, bytes.byteOffset).getUint32(0);
    } while (u >= limit);
    const j = u % n;
    [tiles[i], tiles[j]] = [tiles[j], tiles[i]];
  }
  const leaves = tiles.map((tile, p) => leafOf(p, tile, salts[p]));
  return { tiles, salts, leaves, commitment: commitmentOf(leaves) };
}

/**
 * Each dealt seat's four positions: in acting order (the first seat after the
 * button first), seat number i of n gets 3i, 3i+1, 3i+2 and then 3n+i.
 * @param {number[]} dealtSeats @param {number} button
 * @returns {Map<number, number[]>}
 */
export function dealtPositions(dealtSeats, button) {
  const sorted = [...dealtSeats].sort((a, b) => a - b);
  const order = [...sorted.filter((s) => s > button), ...sorted.filter((s) => s <= button)];
  const n = order.length;
  return new Map(order.map((seat, i) => [seat, [FIRST_TILES * i, FIRST_TILES * i + 1, FIRST_TILES * i + 2, FIRST_TILES * n + i]]));
}

/**
 * @typedef {{position: number, tile: string, salt: string}} Opening
 * @typedef {object} HandSeen what one viewer saw of a hand
 * @property {string} tableId
 * @property {number} handId
 * @property {number} button
 * @property {string} commitment
 * @property {string[]} leaves
 * @property {SeatSeed[]} clientSeeds
 * @property {Map<number, Opening[]>} openings by seat: its own, and the hands shown down
 * @property {number | null} mySeat the viewer's seat in this hand, if it played it
 * @property {string[] | null} mySeeds the client seeds it may have played with, or null if it cannot know
 * @property {number | null} [botSeat] the dealer bot's seat: the button, with the empty seed
 * @property {string[]} conflicts positions opened twice with different contents, said in words
 *
 * @typedef {object} Verdict
 * @property {boolean} ok
 * @property {number} tilesChecked
 * @property {string} detail a sentence for people
 */

/** @param {string} detail @param {number} [tilesChecked] @returns {Verdict} */
const failed = (detail, tilesChecked = 0) => ({ ok: false, tilesChecked, detail });

/**
 * Check every tile this viewer saw against the hand's commitment.
 * @param {HandSeen} hand
 * @returns {Promise<Verdict>}
 */
export async function verifyHand(hand) {
  const { leaves } = hand;
  if (leaves.length !== DECK_SIZE || !leaves.every((x) => HEX32.test(x))) {
    return failed(`hand_started did not commit to ${DECK_SIZE} positions.`);
  }
  if ((await sha256Hex(concat(...leaves.map(fromHex)))) !== hand.commitment) {
    return failed("The 28 leaves do not hash to the hand's commitment.");
  }
  if (hand.conflicts.length) return failed(hand.conflicts[0]);
  const listed = new Map(hand.clientSeeds.map((x) => [x.seat, x.client_seed]));
  const mine = hand.mySeat === null ? undefined : listed.get(hand.mySeat);
  if (hand.mySeat !== null && hand.mySeeds && (mine === undefined || !hand.mySeeds.includes(mine))) {
    return failed(`The deal lists a client seed for your seat (seat ${hand.mySeat + 1}) that this page never sent: your seed was left out of the shuffle.`);
  }
  const bot = hand.botSeat ?? null;
  if (bot !== null && (listed.get(bot) ?? "") !== "") {
    return failed(`The deal lists a client seed for the dealer bot (seat ${bot + 1}), whose seed is the empty one: the server chose it, knowing yours.`);
  }
  if (bot !== null && hand.button !== bot) {
    return failed(`The dealer bot (seat ${bot + 1}) is not the button: the server chose which seat's tiles the bot got.`);
  }
  const where = dealtPositions([...listed.keys()], hand.button);
  /** @type {Map<string, number>} */
  const seenAt = new Map();
  let checked = 0;
  for (const [seat, openings] of hand.openings) {
    const own = where.get(seat);
    if (!own) return failed(`Seat ${seat + 1} was opened tiles but was never dealt in.`, checked);
    for (const { position, tile, salt } of openings) {
      if (!own.includes(position)) {
        return failed(`Seat ${seat + 1} got the tile at position ${position}, which the deal order gives another seat.`, checked);
      }
      let opened;
      try {
        opened = await sha256Hex(leafBytes(position, tile, salt));
      } catch {
        return failed(`Position ${position} was opened with a malformed salt.`, checked);
      }
      if (opened !== leaves[position]) {
        return failed(`Seat ${seat + 1} was dealt ${tile} at position ${position}, but that position was committed to another tile.`, checked);
      }
      const before = seenAt.get(tile);
      if (before !== undefined && before !== position) return failed(`${tile} was dealt twice (positions ${before} and ${position}).`, checked);
      seenAt.set(tile, position);
      checked += 1;
    }
  }
  if (!checked) {
    return { ok: true, tilesChecked: 0, detail: `Its ${DECK_SIZE} leaves hash to its commitment, but no tile of hand #${hand.handId} was shown to this page to check against them; the whole deck is checked once the table closes and reveals its seed.` };
  }
  return { ok: true, tilesChecked: checked, detail: `${checked} ${checked === 1 ? "tile" : "tiles"} checked at their committed positions.` };
}

/**
 * Check a hand's full shuffle once the table's seed is out: the seed is the one
 * committed to, and with the hand's client seeds it makes exactly its leaves.
 * @param {HandSeen} hand @param {string} tableSeed @param {string} committed the table's seed_commitment
 * @returns {Verdict}
 */
export function verifyReveal(hand, tableSeed, committed) {
  if (!HEX32.test(tableSeed) || seedCommitment(tableSeed) !== committed) {
    return failed("The revealed table seed is not the one the table committed to before its first hand.");
  }
  let deck;
  try {
    deck = deriveDeck(handSeed(tableSeed, hand.tableId, hand.handId), hand.clientSeeds);
  } catch {
    return failed(`Hand #${hand.handId} lists a malformed client seed.`);
  }
  if (hand.leaves.length !== DECK_SIZE) return failed(`Hand #${hand.handId} did not commit to ${DECK_SIZE} positions.`);
  const wrong = deck.leaves.findIndex((x, p) => x !== hand.leaves[p]);
  if (wrong >= 0) {
    return failed(`Hand #${hand.handId}: the revealed seed and the listed client seeds do not make the committed deck (position ${wrong} differs).`);
  }
  return { ok: true, tilesChecked: DECK_SIZE, detail: `Hand #${hand.handId}'s shuffle rebuilt from the revealed seed.` };
}
