/**
 * A small seeded random source for the fuzz campaigns. Every input is made
 * from its own generator, seeded from the campaign seed and the input's
 * index, so any one input can be rebuilt from `seed` and `index` alone.
 */

export interface Rng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, n). */
  int(n: number): number;
  /** An integer in [min, max]. */
  between(min: number, max: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** A byte string of `n` random bytes. */
  bytes(n: number): Uint8Array;
}

/** sfc32: fast, small state, good enough statistics for fuzzing. */
export function createRng(seed: number): Rng {
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = seed >>> 0;
  const next32 = () => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  for (let i = 0; i < 12; i++) next32();
  const rng: Rng = {
    next: () => next32() / 4294967296,
    int: (n) => (n <= 0 ? 0 : Math.floor(rng.next() * n)),
    between: (min, max) => min + rng.int(max - min + 1),
    chance: (p) => rng.next() < p,
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new Error("pick from an empty list");
      return items[rng.int(items.length)] as T;
    },
    bytes: (n) => {
      const out = new Uint8Array(n);
      for (let i = 0; i < n; i++) out[i] = next32() & 0xff;
      return out;
    },
  };
  return rng;
}

/** The seed of input `index` of a campaign run with `seed` (a 32-bit mix of both). */
export function inputSeed(seed: number, index: number): number {
  let h = (seed ^ 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ index, 0xcc9e2d51);
  h = Math.imul((h << 15) | (h >>> 17), 0x1b873593);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h >>> 0;
}
