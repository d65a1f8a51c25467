// Dominoes drawn as SVG with real pips, so every screen shows the same tile at
// any size (the Unicode domino faces are tiny or missing in most fonts).

import { s, h } from "./dom.js";
import { parseTile } from "./hands.js";

/** Pip centres on a 3x3 grid (0..2 each way) for 0 to 6 spots. */
const PIPS = /** @type {[number, number][][]} */ ([
  [],
  [[1, 1]],
  [[0, 0], [2, 2]],
  [[0, 0], [1, 1], [2, 2]],
  [[0, 0], [2, 0], [0, 2], [2, 2]],
  [[0, 0], [2, 0], [1, 1], [0, 2], [2, 2]],
  [[0, 0], [0, 1], [0, 2], [2, 0], [2, 1], [2, 2]],
]);

const W = 50;
const H = 96;
const PAD = 12;

/** @param {number} count @param {number} top */
function half(count, top) {
  const step = (W - 2 * PAD) / 2;
  // Traditional domino sets paint the one and the four red; the rest are dark.
  const fill = count === 1 || count === 4 ? "var(--pip-red)" : "var(--pip)";
  return PIPS[count].map(([x, y]) =>
    s("circle", { cx: PAD + x * step, cy: top + PAD + y * step, r: count === 1 ? 6 : 5.2, fill }),
  );
}

/**
 * One tile, face up ("6-1", high end on top) or face down (`null`).
 * @param {string | null} tile
 * @param {{size?: "sm" | "md" | "lg", highlight?: boolean}} [opts]
 */
export function domino(tile, opts = {}) {
  const size = opts.size ?? "md";
  if (tile === null) {
    return h(
      "span",
      { class: `domino back ${size}`, role: "img", "aria-label": "face-down tile" },
      s(
        "svg",
        { viewBox: `0 0 ${W} ${H}`, "aria-hidden": "true" },
        s("rect", { x: 1, y: 1, width: W - 2, height: H - 2, rx: 7, class: "tile-back" }),
        s("rect", { x: 7, y: 7, width: W - 14, height: H - 14, rx: 4, class: "tile-back-inlay" }),
      ),
    );
  }
  const [high, low] = parseTile(tile);
  const name = `${high}-${low}`;
  return h(
    "span",
    {
      class: `domino face ${size}${opts.highlight ? " highlight" : ""}`,
      role: "img",
      "aria-label": `domino ${name}`,
      title: name,
      dataset: { tile: name },
    },
    s(
      "svg",
      { viewBox: `0 0 ${W} ${H}`, "aria-hidden": "true" },
      s("rect", { x: 1, y: 1, width: W - 2, height: H - 2, rx: 7, class: "tile-face" }),
      s("line", { x1: 8, y1: H / 2, x2: W - 8, y2: H / 2, class: "tile-line" }),
      s("circle", { cx: W / 2, cy: H / 2, r: 2.2, class: "tile-rivet" }),
      half(high, 0),
      half(low, H / 2),
    ),
  );
}

/**
 * A row of tiles.
 * @param {(string | null)[]} tiles
 * @param {{size?: "sm" | "md" | "lg"}} [opts]
 */
export function dominoRow(tiles, opts = {}) {
  return h("span", { class: "domino-row" }, tiles.map((t) => domino(t, opts)));
}

/**
 * A hand cut into its two pairs, with the value of each pair under it.
 * @param {string[][]} pairs @param {number[]} values
 * @param {{size?: "sm" | "md" | "lg"}} [opts]
 */
export function cutView(pairs, values, opts = {}) {
  return h(
    "span",
    { class: "cut" },
    pairs.map((pair, i) =>
      h(
        "span",
        { class: "pair" },
        dominoRow(pair, opts),
        h("span", { class: "pair-value", text: String(values[i]) }),
      ),
    ),
  );
}
