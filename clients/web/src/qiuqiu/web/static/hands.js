// The ranking rules a player needs to read a hand: the best cut of four tiles and
// what it is worth, and which of two hands wins by the engine's order. The server
// decides who wins; this explains it, and payouts.js holds the server to it.

/** @typedef {[number, number]} Tile high end first */
/** @typedef {"six_gods" | "four_doubles" | "pure_big" | "pure_small" | "normal"} Category */

export const CATEGORY_NAMES = /** @type {Record<Category, string>} */ ({
  six_gods: "Six Gods",
  four_doubles: "Four Doubles",
  pure_big: "Pure Big",
  pure_small: "Pure Small",
  normal: "",
});

/**
 * @param {string} text "6-1" or "1-6"
 * @returns {Tile}
 */
export function parseTile(text) {
  const [a, b] = text.split("-").map(Number);
  return a >= b ? [a, b] : [b, a];
}

/** @param {string} text */
export const normalTile = (text) => parseTile(text).join("-");

/** @param {string} text */
export const spots = (text) => parseTile(text)[0] + parseTile(text)[1];

/**
 * Whether two lists hold the same tiles, in any order and either end first.
 * @param {string[]} a @param {string[]} b
 */
export function sameTiles(a, b) {
  const key = (/** @type {string[]} */ list) => list.map(normalTile).sort().join(" ");
  return a.length === b.length && key(a) === key(b);
}

/** @param {string[]} tiles four tiles */
export function categoryOf(tiles) {
  const norm = tiles.map(normalTile);
  if (sameTiles(norm, ["3-3", "4-2", "5-1", "6-0"])) return "six_gods";
  if (norm.every((t) => parseTile(t)[0] === parseTile(t)[1])) return "four_doubles";
  const total = norm.reduce((sum, t) => sum + spots(t), 0);
  if (total >= 39) return "pure_big";
  if (total <= 9) return "pure_small";
  return "normal";
}

/**
 * The best cut of four tiles: the pairing whose (higher, lower) pair values are
 * largest, compared higher pair first, as the engine scores it.
 * @param {string[]} tiles
 * @returns {{pairs: [string[], string[]], values: [number, number], category: Category}}
 */
export function bestCut(tiles) {
  const [a, b, c, d] = tiles;
  /** @type {[string[], string[]][]} */
  const cuts = [
    [[a, b], [c, d]],
    [[a, c], [b, d]],
    [[a, d], [b, c]],
  ];
  let best = null;
  for (const [p, q] of cuts) {
    const vp = (spots(p[0]) + spots(p[1])) % 10;
    const vq = (spots(q[0]) + spots(q[1])) % 10;
    /** @type {{pairs: [string[], string[]], values: [number, number]}} */
    const cut = vp >= vq ? { pairs: [p, q], values: [vp, vq] } : { pairs: [q, p], values: [vq, vp] };
    if (!best || cut.values[0] * 10 + cut.values[1] > best.values[0] * 10 + best.values[1]) best = cut;
  }
  if (!best) throw new Error("a hand has four tiles");
  return { ...best, category: categoryOf(tiles) };
}

/**
 * What a hand is worth, in words: "Six Gods" or "9-7".
 * @param {Category} category @param {number[]} values
 */
export function handValue(category, values) {
  return CATEGORY_NAMES[category] || `${values[0]}-${values[1]}`;
}

const CATEGORY_ORDER = { six_gods: 5, four_doubles: 4, pure_big: 3, pure_small: 2, normal: 1 };

/**
 * How strong one tile is for the highest-tile tie rule: any double over any
 * non-double; doubles by spots; others by spots, then by the higher end.
 * @param {string} text
 * @returns {[number, number, number]}
 */
export function tileStrength(text) {
  const [high, low] = parseTile(text);
  return [high === low ? 1 : 0, high + low, high];
}

/** @param {number[]} a @param {number[]} b */
function compareKeys(a, b) {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] > b[i] ? 1 : -1;
  return 0;
}

/** The strongest of some tiles by the tie rule. @param {string[]} tiles */
export function highestTile(tiles) {
  return tiles.map(normalTile).reduce((best, t) => (compareKeys(tileStrength(t), tileStrength(best)) > 0 ? t : best));
}

/**
 * @typedef {{tiles: string[], cut: {values: number[]}, category: Category}} Shown
 */

/**
 * Which of two shown hands ranks higher, as the engine compares them: category,
 * then (normal hands) higher pair, lower pair, then the table's tie rule: the
 * highest tile, or none (`split`: equal hands share the pot).
 * @param {Shown} a @param {Shown} b @param {"highest_tile" | "split"} [tieRule]
 * @returns {number} above 0 when `a` is higher, 0 when they split
 */
export function compareShown(a, b, tieRule = "highest_tile") {
  const byCategory = CATEGORY_ORDER[a.category] - CATEGORY_ORDER[b.category];
  if (byCategory) return byCategory;
  if (a.category === "normal") {
    const byPairs = compareKeys(a.cut.values, b.cut.values);
    if (byPairs) return byPairs;
  }
  if (tieRule === "split") return 0;
  return compareKeys(tileStrength(highestTile(a.tiles)), tileStrength(highestTile(b.tiles)));
}

/**
 * Why `winner` beat `loser`, in words a player reads at a glance.
 * @param {Shown} winner @param {Shown} loser @param {boolean} split the pot was shared
 */
export function whyItWon(winner, loser, split) {
  const [w, l] = [winner, loser].map((x) => handValue(x.category, x.cut.values));
  if (split) return `equal hands (${w}) share it`;
  if (winner.category !== loser.category) {
    return winner.category === "normal" ? `${w} beats ${l}` : `${w} beats ${loser.category === "normal" ? "any normal hand" : l}`;
  }
  if (winner.category === "normal" && winner.cut.values[0] !== loser.cut.values[0]) {
    return `higher pair, ${winner.cut.values[0]} beats ${loser.cut.values[0]}`;
  }
  if (winner.category === "normal" && winner.cut.values[1] !== loser.cut.values[1]) {
    return `same higher pair (${winner.cut.values[0]}), lower pair ${winner.cut.values[1]} beats ${loser.cut.values[1]}`;
  }
  return `equal hands (${w}), the highest tile decides: ${highestTile(winner.tiles)} beats ${highestTile(loser.tiles)}`;
}
