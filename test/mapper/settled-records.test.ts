/**
 * What the tracker keeps of a settled step is one shared (type, status)
 * record (issue 23). The records are interned up to a bound; past it a pair
 * still gets a correct record of its own, never another pair's.
 *
 * The interning table is the module's own, so each test imports a fresh copy
 * of the module: one that fills the table must not change what another sees.
 */
import { describe, expect, it, vi } from "vitest";

async function freshLiveStep(): Promise<typeof import("../../src/mapper/live-step.js")> {
  vi.resetModules();
  return import("../../src/mapper/live-step.js");
}

describe("settled step records", () => {
  it("gives the same record for the same type and status, and distinct records otherwise", async () => {
    const { SettledStep, settledStep } = await freshLiveStep();
    const done = settledStep("RUN_COMMAND", "DONE");
    // Equal text in other string objects, as every step of a snapshot brings.
    const again = settledStep(["RUN", "COMMAND"].join("_"), ["DO", "NE"].join(""));
    expect(again).toBe(done);
    expect(done).toBeInstanceOf(SettledStep);
    expect({ ...done }).toEqual({ stepType: "RUN_COMMAND", status: "DONE" });
    const error = settledStep("RUN_COMMAND", "ERROR");
    expect(error).not.toBe(done);
    expect({ ...error }).toEqual({ stepType: "RUN_COMMAND", status: "ERROR" });
    expect(settledStep("VIEW_FILE", "DONE")).not.toBe(done);
    // A joined key would confuse these two; the records must not.
    const a = settledStep("A\u0000B", "C");
    const b = settledStep("A", "B\u0000C");
    expect(a).not.toBe(b);
    expect([a.stepType, a.status, b.stepType, b.status]).toEqual(["A\u0000B", "C", "A", "B\u0000C"]);
  });

  it("keeps every record correct past the interning bound, and the interned ones shared", async () => {
    const { settledStep } = await freshLiveStep();
    const first = settledStep("PLANNER_RESPONSE", "DONE");
    for (let i = 0; i < 3000; i++) {
      const record = settledStep(`INVENTED_TYPE_${i}`, i % 2 === 0 ? "DONE" : "ERROR");
      expect(record.stepType).toBe(`INVENTED_TYPE_${i}`);
      expect(record.status).toBe(i % 2 === 0 ? "DONE" : "ERROR");
    }
    expect(settledStep("PLANNER_RESPONSE", "DONE")).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
  });
});
