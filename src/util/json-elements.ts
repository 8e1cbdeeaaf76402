/**
 * Where the objects of a large JSON array lie in its bytes, found without
 * parsing them, so that each can be parsed when it is needed and dropped
 * after. Parsing a 25 MB snapshot whole keeps every step alive at once, and
 * V8 copies all of it out of the young generation and marks it again; parsed
 * a step at a time, the steps die young and cost the collector almost
 * nothing (measured on `agy-bridge map`: about a quarter of its time).
 */

/** The objects of a top-level array, as byte offsets into the text. */
export interface JsonElements {
  /** True for `{"steps":[...]}`, false for a bare `[...]`. */
  readonly wrapped: boolean;
  /** `[start0, end0, start1, end1, …]`: element i is `bytes[start_i, end_i)`. */
  readonly bounds: readonly number[];
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const STEPS_KEY = Buffer.from('"steps"');

/**
 * The elements of `[{…},{…},…]` or `{"steps":[{…},…]}` (whitespace allowed
 * between tokens, nothing else), or undefined for any other text: a
 * different key, an element that is not an object, an empty array, more text
 * after the end. Only brackets and strings are read, so for valid JSON each
 * range is exactly one element; invalid JSON inside an element is left for
 * `JSON.parse` of that element to find. A text whose every element parses is
 * valid JSON as a whole, and parses to the same array.
 */
export function jsonElements(bytes: Uint8Array): JsonElements | undefined {
  let at = skipSpace(bytes, 0);
  let wrapped = false;
  if (bytes[at] === 0x7b) {
    at = skipSpace(bytes, at + 1);
    if (!startsWith(bytes, at, STEPS_KEY)) return undefined;
    at = skipSpace(bytes, at + STEPS_KEY.length);
    if (bytes[at] !== 0x3a) return undefined;
    at = skipSpace(bytes, at + 1);
    wrapped = true;
  }
  if (bytes[at] !== 0x5b) return undefined;
  at = skipSpace(bytes, at + 1);
  const bounds: number[] = [];
  for (;;) {
    if (bytes[at] !== 0x7b) return undefined;
    const end = valueEnd(bytes, at);
    if (end < 0) return undefined;
    bounds.push(at, end);
    at = skipSpace(bytes, end);
    if (bytes[at] === 0x2c) {
      at = skipSpace(bytes, at + 1);
      continue;
    }
    if (bytes[at] !== 0x5d) return undefined;
    at = skipSpace(bytes, at + 1);
    break;
  }
  if (wrapped) {
    if (bytes[at] !== 0x7d) return undefined;
    at = skipSpace(bytes, at + 1);
  }
  return at === bytes.length ? { wrapped, bounds } : undefined;
}

/**
 * The offset just past the object or array opening at `start`, or -1 when it
 * never closes. Strings are skipped whole with `indexOf`; a quote with an odd
 * number of backslashes before it is inside the string.
 */
function valueEnd(bytes: Uint8Array, start: number): number {
  const length = bytes.length;
  let depth = 0;
  let at = start;
  while (at < length) {
    const byte = bytes[at];
    if (byte === QUOTE) {
      let close = at + 1;
      for (;;) {
        close = bytes.indexOf(QUOTE, close);
        if (close < 0) return -1;
        let before = close - 1;
        while (bytes[before] === BACKSLASH) before--;
        if ((close - before) % 2 === 1) break;
        close++;
      }
      at = close + 1;
      continue;
    }
    if (byte === 0x7b || byte === 0x5b) depth++;
    else if ((byte === 0x7d || byte === 0x5d) && --depth === 0) return at + 1;
    at++;
  }
  return -1;
}

function skipSpace(bytes: Uint8Array, from: number): number {
  let at = from;
  for (;;) {
    const byte = bytes[at];
    if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) return at;
    at++;
  }
}

function startsWith(bytes: Uint8Array, at: number, prefix: Uint8Array): boolean {
  if (at + prefix.length > bytes.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[at + i] !== prefix[i]) return false;
  return true;
}
