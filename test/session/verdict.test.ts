import { describe, expect, it } from "vitest";
import { instructionAllowed, MAX_VERDICT_TEXT, parseVerdict } from "../../src/session/verdict.js";

describe("parseVerdict", () => {
  it("accepts each action", () => {
    expect(parseVerdict({ action: "approve" })).toEqual({ ok: true, verdict: { action: "approve" } });
    expect(parseVerdict({ action: "deny", instruction: "use rg" })).toEqual({ ok: true, verdict: { action: "deny", instruction: "use rg" } });
    expect(parseVerdict({ action: "answer", optionIds: ["1"] })).toEqual({ ok: true, verdict: { action: "answer", optionIds: ["1"] } });
  });

  it("refuses an instruction over the limit with a sentence naming the field", () => {
    const parsed = parseVerdict({ action: "deny", instruction: "x".repeat(MAX_VERDICT_TEXT + 1) });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toMatch(/^Fix "instruction": /);
  });

  it("refuses what is not an answer", () => {
    expect(parseVerdict({ action: "maybe" }).ok).toBe(false);
    expect(parseVerdict("approve").ok).toBe(false);
  });
});

describe("instructionAllowed", () => {
  it("allows an instruction only on a permission's deny", () => {
    expect(instructionAllowed("permission", "deny")).toBe(true);
    expect(instructionAllowed("permission", "approve")).toBe(false);
    expect(instructionAllowed("question", "deny")).toBe(false);
    expect(instructionAllowed("question", "answer")).toBe(false);
    expect(instructionAllowed("other", "deny")).toBe(false);
  });
});
