/**
 * Same-length masks. A masked text keeps its length, its whitespace and its
 * punctuation, so a growing text still grows by the same suffix (the
 * mapper's deltas stay deltas, spike-notes §4.5), a blank text stays blank,
 * and a screen keeps its layout (wrapping, alignment). Letters become
 * `x`/`X` and digits `0`: nothing of the words survives.
 */

/** `Deploy to prod 42` → `Xxxxxx xx xxxx 00`. */
export function maskText(text: string): string {
  return text.replace(/[\p{L}\p{N}_]/gu, (ch) => (/\p{N}/u.test(ch) ? "0" : ch === ch.toUpperCase() && ch !== ch.toLowerCase() ? "X" : "x"));
}

/** An opaque value (a signature, a token) as a run of `x` of the same length. */
export function maskOpaque(value: string): string {
  return "x".repeat(value.length);
}

/**
 * `base` cut or padded with `fill` to exactly `length` characters, so a
 * placeholder takes the room of what it replaces. Too short a room keeps
 * the start of `base` (two short values may then share a placeholder).
 */
export function fitTo(base: string, length: number, fill = "0"): string {
  if (base.length >= length) return base.slice(0, length);
  return base + fill.repeat(length - base.length);
}

/** `n` written in base 26 with the letters a–z (0 → a, 25 → z, 26 → ba). */
export function letters(n: number): string {
  let out = "";
  let rest = n;
  do {
    out = String.fromCharCode(97 + (rest % 26)) + out;
    rest = Math.floor(rest / 26);
  } while (rest > 0);
  return out;
}
