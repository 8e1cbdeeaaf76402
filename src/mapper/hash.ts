/**
 * FNV-1a 64-bit over the UTF-8 bytes of a string, as 16 hex digits. Pure TS
 * (the mapper may not import `node:crypto`); used for deterministic ids, not
 * for security.
 */
const OFFSET = 0xcbf29ce484222325n;
const PRIME = 0x100000001b3n;
const MASK = 0xffffffffffffffffn;

export function fnv1a64(text: string): string {
  let hash = OFFSET;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= BigInt(byte);
    hash = (hash * PRIME) & MASK;
  }
  return hash.toString(16).padStart(16, "0");
}
