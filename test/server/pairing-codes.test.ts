/**
 * One-time pairing codes: one use each, five minutes each, on an injected clock.
 */
import { describe, expect, it } from "vitest";
import { createPairingCodes, PAIRING_CODE_TTL_MS } from "../../src/server/pairing-codes.js";

describe("pairing codes", () => {
  it("redeems a code once and refuses it the second time", () => {
    const codes = createPairingCodes();
    const { code } = codes.issue();
    expect(codes.redeem(code)).toBe(true);
    expect(codes.redeem(code)).toBe(false);
  });

  it("refuses a code once five minutes have passed, and takes it just before", () => {
    let now = 1_000_000;
    const codes = createPairingCodes({ now: () => now });
    const early = codes.issue();
    const late = codes.issue();
    expect(early.expiresAt).toBe(1_000_000 + PAIRING_CODE_TTL_MS);
    now += PAIRING_CODE_TTL_MS - 1;
    expect(codes.redeem(early.code)).toBe(true);
    now += 1;
    expect(codes.redeem(late.code)).toBe(false);
  });

  it("refuses codes it never issued, and issues a different code each time", () => {
    const codes = createPairingCodes();
    const issued = new Set(Array.from({ length: 20 }, () => codes.issue().code));
    expect(issued.size).toBe(20);
    for (const code of issued) expect(code).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(codes.redeem("")).toBe(false);
    expect(codes.redeem("AAAAAAAAAAAAAAAAAAAAAA")).toBe(false);
  });

  it("keeps a bounded number of live codes, dropping the oldest", () => {
    const codes = createPairingCodes();
    const first = codes.issue().code;
    for (let i = 0; i < 40; i++) codes.issue();
    const last = codes.issue().code;
    expect(codes.redeem(first)).toBe(false);
    expect(codes.redeem(last)).toBe(true);
  });
});
