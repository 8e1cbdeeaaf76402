/**
 * FNV-1a 64-bit over the UTF-8 bytes of a string, as 16 hex digits. Pure TS
 * (the mapper may not import `node:crypto`); used for deterministic ids, not
 * for security. The 64-bit product is computed in 16-bit limbs with plain
 * numbers: BigInt arithmetic cost more than the rest of an interaction event.
 */
const encoder = new TextEncoder();

export function fnv1a64(text: string): string {
  // State as four 16-bit limbs, least significant first: offset basis 0xcbf29ce484222325.
  let h0 = 0x2325;
  let h1 = 0x8422;
  let h2 = 0x9ce4;
  let h3 = 0xcbf2;
  for (const byte of encoder.encode(text)) {
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
  const hex = (limb: number) => limb.toString(16).padStart(4, "0");
  return hex(h3) + hex(h2) + hex(h1) + hex(h0);
}
