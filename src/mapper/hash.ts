/**
 * FNV-1a 64-bit over the UTF-8 bytes of a string, as 16 hex digits. Pure TS
 * (the mapper may not import `node:crypto`); used for deterministic ids, not
 * for security. The 64-bit product is computed in 16-bit limbs with plain
 * numbers: BigInt arithmetic cost more than the rest of an interaction event.
 * The UTF-8 bytes are produced on the fly, as `TextEncoder` would (a lone
 * surrogate as U+FFFD), so hashing allocates no byte array.
 */

/** Up to four UTF-8 bytes of the code point at `text[i]`, packed low byte first, and how many UTF-16 units it took. */
function utf8At(text: string, i: number): { bytes: number; count: number; units: number } {
  let c = text.charCodeAt(i);
  if (c < 0x800) return { bytes: 0xc0 | (c >> 6) | ((0x80 | (c & 0x3f)) << 8), count: 2, units: 1 };
  if (c >= 0xd800 && c <= 0xdfff) {
    const next = text.charCodeAt(i + 1); // NaN past the end
    if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
      const bytes = 0xf0 | (c >> 18) | ((0x80 | ((c >> 12) & 0x3f)) << 8) | ((0x80 | ((c >> 6) & 0x3f)) << 16);
      return { bytes: bytes + (0x80 | (c & 0x3f)) * 0x1000000, count: 4, units: 2 };
    }
    c = 0xfffd;
  }
  return { bytes: 0xe0 | (c >> 12) | ((0x80 | ((c >> 6) & 0x3f)) << 8) | ((0x80 | (c & 0x3f)) << 16), count: 3, units: 1 };
}

/** An FNV-1a 64 state: four 16-bit limbs, least significant first. */
export interface FnvState {
  readonly h0: number;
  readonly h1: number;
  readonly h2: number;
  readonly h3: number;
}

/** The offset basis 0xcbf29ce484222325: the state of the empty string. */
export const FNV_OFFSET_BASIS: FnvState = { h0: 0x2325, h1: 0x8422, h2: 0x9ce4, h3: 0xcbf2 };

/**
 * The state after hashing the UTF-8 bytes of `text` from `state`: FNV is
 * streaming, so a shared prefix can be hashed once and continued.
 */
export function fnvUpdate(state: FnvState, text: string): FnvState {
  let { h0, h1, h2, h3 } = state;
  let i = 0;
  let pending = 0;
  let left = 0;
  for (;;) {
    let byte: number;
    if (left > 0) {
      byte = pending & 0xff;
      pending = Math.floor(pending / 0x100);
      left--;
    } else if (i < text.length) {
      byte = text.charCodeAt(i);
      if (byte < 0x80) {
        i++;
      } else {
        // Multi-byte code points are rare in ids: packed once, then fed byte by byte.
        const encoded = utf8At(text, i);
        i += encoded.units;
        byte = encoded.bytes & 0xff;
        pending = Math.floor(encoded.bytes / 0x100);
        left = encoded.count - 1;
      }
    } else {
      break;
    }
    h0 ^= byte;
    // Multiply by the FNV prime 0x100000001b3 = 2^40 + 0x1b3, modulo 2^64.
    const t0 = h0 * 0x1b3;
    const t1 = h1 * 0x1b3 + (t0 >>> 16);
    const t2 = h2 * 0x1b3 + (t1 >>> 16);
    const t3 = h3 * 0x1b3 + (t2 >>> 16);
    // The 2^40 term shifts h0 and h1 into limbs 2.5 and 3.5: (h << 8) into limbs 2 and 3.
    const s2 = (t2 & 0xffff) + ((h0 << 8) & 0xffff);
    const s3 = (t3 & 0xffff) + (h1 << 8) + (h0 >>> 8) + (s2 >>> 16);
    h0 = t0 & 0xffff;
    h1 = t1 & 0xffff;
    h2 = s2 & 0xffff;
    h3 = s3 & 0xffff;
  }
  return { h0, h1, h2, h3 };
}

/** The character code of a hex digit (0-15). */
function hexCode(nibble: number): number {
  return nibble < 10 ? 0x30 + nibble : 0x57 + nibble;
}

/** A 16-bit limb as its four hex digits' character codes, most significant first. */
function limbHex(limb: number): string {
  return String.fromCharCode(hexCode(limb >>> 12), hexCode((limb >>> 8) & 0xf), hexCode((limb >>> 4) & 0xf), hexCode(limb & 0xf));
}

/** A state as 16 hex digits, most significant first. */
export function fnvHex(state: FnvState): string {
  return limbHex(state.h3) + limbHex(state.h2) + limbHex(state.h1) + limbHex(state.h0);
}

export function fnv1a64(text: string): string {
  return fnvHex(fnvUpdate(FNV_OFFSET_BASIS, text));
}
