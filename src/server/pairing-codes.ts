/**
 * One-time pairing codes: `serve` prints one on start and `agy-bridge pair`
 * asks for more. A code is 128 random bits, valid for five minutes and for
 * one exchange (POST /v1/pairing), which turns it into a device token. The
 * code stands in for the bearer token wherever a person would otherwise have
 * to carry it — a link, a QR code, a terminal line — so the bearer token
 * never appears in any of them.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

export const PAIRING_CODE_TTL_MS = 5 * 60_000;
/** More live codes than a person could use; the oldest go first. */
const MAX_LIVE_CODES = 32;

export interface PairingCode {
  code: string;
  /** Epoch milliseconds after which the code is refused. */
  expiresAt: number;
}

export interface PairingCodes {
  issue(): PairingCode;
  /** True exactly once per issued code, and only before it expires. */
  redeem(code: string): boolean;
}

export function createPairingCodes(options: { now?: () => number; ttlMs?: number; random?: (bytes: number) => Buffer } = {}): PairingCodes {
  const now = options.now ?? Date.now;
  const ttlMs = options.ttlMs ?? PAIRING_CODE_TTL_MS;
  const random = options.random ?? randomBytes;
  // Hashes, not codes: a heap dump of serve holds nothing that pairs a device.
  const live = new Map<string, number>();
  const hash = (code: string) => createHash("sha256").update(code).digest();
  const sweep = () => {
    const at = now();
    for (const [key, expiresAt] of live) if (expiresAt <= at) live.delete(key);
  };
  return {
    issue() {
      sweep();
      const code = random(16).toString("base64url");
      const expiresAt = now() + ttlMs;
      live.set(hash(code).toString("hex"), expiresAt);
      while (live.size > MAX_LIVE_CODES) live.delete(live.keys().next().value as string);
      return { code, expiresAt };
    },
    redeem(code) {
      sweep();
      const given = hash(code);
      for (const key of live.keys()) {
        if (timingSafeEqual(Buffer.from(key, "hex"), given)) {
          live.delete(key);
          return true;
        }
      }
      return false;
    },
  };
}
