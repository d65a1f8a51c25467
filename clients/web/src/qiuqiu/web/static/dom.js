// A few lines in place of a framework: build elements from plain calls.

/**
 * @typedef {Record<string, unknown>} Props
 * `class`, `text`, `dataset` (an object), `on<event>` (listeners), `style`
 * (a string), and anything else set as an attribute (`false`/`null` skip it).
 * @typedef {Node | string | number | null | undefined | false | Child[]} Child
 */

/**
 * @param {string} tag
 * @param {Props} [props]
 * @param {...Child} children
 * @returns {HTMLElement}
 */
export function h(tag, props = {}, ...children) {
  return fill(document.createElement(tag), props, children);
}

const SVG = "http://www.w3.org/2000/svg";

/**
 * @param {string} tag
 * @param {Props} [props]
 * @param {...Child} children
 * @returns {SVGElement}
 */
export function s(tag, props = {}, ...children) {
  return fill(document.createElementNS(SVG, tag), props, children);
}

/**
 * @template {Element} E
 * @param {E} el @param {Props} props @param {Child[]} children
 * @returns {E}
 */
function fill(el, props, children) {
  for (const [key, value] of Object.entries(props)) {
    if (value === false || value === null || value === undefined) continue;
    if (key === "dataset") Object.assign(/** @type {HTMLElement} */ (el).dataset, value);
    else if (key === "text") el.textContent = String(value);
    else if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), /** @type {EventListener} */ (value));
    } else if (key in el && !(el instanceof SVGElement) && key !== "list" && key !== "form") {
      // Properties (value, checked, disabled, min...) keep what the user sees in step.
      /** @type {any} */ (el)[key] = value;
    } else el.setAttribute(key === "className" ? "class" : key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

/** @param {Element} el @param {Child[]} children */
function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

/** @param {number} n */
export const chips = (n) => n.toLocaleString("en-US");

/** `1 hand`, `2 hands`: a count with its noun. @param {number} n @param {string} noun */
export const counted = (n, noun) => `${chips(n)} ${n === 1 ? noun : `${noun}s`}`;
