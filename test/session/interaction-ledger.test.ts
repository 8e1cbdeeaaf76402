import { describe, expect, it } from "vitest";
import { MapperEventSchema, type MapperEvent } from "../../src/mapper/index.js";
import { createInteractionLedger } from "../../src/session/interaction-ledger.js";

const base = { conversationId: "conv-a", trajectoryId: "traj-1" };

/** A schema-checked interaction_requested event, so the test cannot drift from the event contract. */
function requested(stepIndex: number, policy?: { decision: "approve" | "deny" | "ask"; rule: string | null }): MapperEvent {
  return MapperEventSchema.parse({
    type: "interaction_requested",
    ...base,
    stepIndex,
    interactionId: `int_${stepIndex}`,
    stepType: "RUN_COMMAND",
    callId: `agy_call_traj-1_${stepIndex}`,
    request: { kind: "permission", variant: "runCommand", action: "command", target: `echo ${stepIndex}`, description: "" },
    ...(policy === undefined ? {} : { policy }),
  });
}

function resolved(stepIndex: number, decidedBy?: string): MapperEvent {
  return MapperEventSchema.parse({
    type: "interaction_resolved",
    ...base,
    stepIndex,
    interactionId: `int_${stepIndex}`,
    kind: "permission",
    outcome: "approved",
    stepStatus: "DONE",
    ...(decidedBy === undefined ? {} : { decidedBy }),
  });
}

function policyDelivered(stepIndex: number, result: "delivered" | "failed", reason?: string): MapperEvent {
  return MapperEventSchema.parse({
    type: "policy_delivered",
    ...base,
    stepIndex,
    interactionId: `int_${stepIndex}`,
    decision: "approve",
    rule: "safe-echo",
    decidedBy: "policy:safe-echo",
    result,
    ...(reason === undefined ? {} : { reason }),
  });
}

const ids = (list: readonly { interactionId: string }[]) => list.map((entry) => entry.interactionId);

describe("the interaction ledger", () => {
  it("opens requests in order and closes them with who decided", () => {
    const ledger = createInteractionLedger();
    expect(ledger.apply(requested(1))?.kind).toBe("opened");
    ledger.apply(requested(2));
    expect(ids(ledger.open())).toEqual(["int_1", "int_2"]);
    const change = ledger.apply(resolved(1, "cli"));
    expect(change?.kind).toBe("resolved");
    expect(ids(ledger.open())).toEqual(["int_2"]);
    expect(ledger.get("int_1")).toMatchObject({ state: "resolved", decidedBy: "cli" });
    expect(ledger.get("int_1")?.resolution).toMatchObject({ outcome: "approved" });
  });

  it("a replayed history opens nothing twice and reopens nothing resolved", () => {
    const ledger = createInteractionLedger();
    const history = [requested(1), requested(2), resolved(1)];
    for (const event of [...history, ...history]) ledger.apply(event);
    expect(ids(ledger.open())).toEqual(["int_2"]);
    expect(ledger.apply(requested(2))).toBeUndefined();
    expect(ledger.apply(resolved(1))).toBeUndefined();
    expect(ledger.get("int_1")?.state).toBe("resolved");
  });

  it("a request the policy approved or denied is open but not a person's to answer", () => {
    const ledger = createInteractionLedger();
    ledger.apply(requested(1, { decision: "approve", rule: "safe-echo" }));
    ledger.apply(requested(2, { decision: "ask", rule: null }));
    ledger.apply(requested(3));
    expect(ids(ledger.open())).toEqual(["int_2", "int_3"]);
    expect(ids(ledger.openAll())).toEqual(["int_1", "int_2", "int_3"]);
    expect(ledger.get("int_1")?.policy).toEqual({ decision: "approve", rule: "safe-echo" });
  });

  it("folds the policy's delivery as the verdict's second stage, before or after the resolution, once", () => {
    const ledger = createInteractionLedger();
    ledger.apply(requested(1, { decision: "approve", rule: "safe-echo" }));
    ledger.apply(requested(2, { decision: "approve", rule: "safe-echo" }));
    // Delivered, then resolved.
    expect(ledger.apply(policyDelivered(1, "delivered"))).toMatchObject({ kind: "delivered", entry: { interactionId: "int_1", state: "open" } });
    ledger.apply(resolved(1, "policy:safe-echo"));
    expect(ledger.get("int_1")).toMatchObject({ state: "resolved", decidedBy: "policy:safe-echo", policy: { delivery: { result: "delivered" } } });
    // Resolved first (the stream was quicker than the answer's return), then delivered.
    ledger.apply(resolved(2, "policy:safe-echo"));
    expect(ledger.apply(policyDelivered(2, "delivered"))?.kind).toBe("delivered");
    expect(ledger.get("int_2")?.policy).toEqual({ decision: "approve", rule: "safe-echo", delivery: { result: "delivered" } });
    // A second report, one for a request it never saw, and one for a request no policy decided change nothing.
    expect(ledger.apply(policyDelivered(1, "failed", "late"))).toBeUndefined();
    expect(ledger.apply(policyDelivered(9, "failed", "unknown"))).toBeUndefined();
    ledger.apply(requested(3));
    expect(ledger.apply(policyDelivered(3, "failed", "no verdict"))).toBeUndefined();
    expect(ledger.get("int_3")?.policy).toBeUndefined();
  });

  it("keeps a request whose delivery failed open and the policy's: not a person's to answer", () => {
    const ledger = createInteractionLedger();
    ledger.apply(requested(1, { decision: "approve", rule: "safe-echo" }));
    ledger.apply(policyDelivered(1, "failed", "delivering it failed: unavailable"));
    expect(ledger.get("int_1")).toMatchObject({ state: "open", policy: { delivery: { result: "failed", reason: "delivering it failed: unavailable" } } });
    expect(ids(ledger.open())).toEqual([]);
    expect(ids(ledger.openAll())).toEqual(["int_1"]);
  });

  it("keeps a bounded number of resolved entries and never drops an open one", () => {
    const ledger = createInteractionLedger({ retain: 2 });
    ledger.apply(requested(0));
    for (let step = 1; step <= 5; step += 1) {
      ledger.apply(requested(step));
      ledger.apply(resolved(step));
    }
    expect(ids(ledger.open())).toEqual(["int_0"]);
    expect(ledger.get("int_1")).toBeUndefined();
    expect(ledger.get("int_5")?.state).toBe("resolved");
    expect(ledger.entries().filter((entry) => entry.state === "resolved")).toHaveLength(2);
  });

  it("records a resolution it never saw requested, without throwing, and ignores other events", () => {
    const ledger = createInteractionLedger();
    expect(ledger.apply(resolved(7, "tui"))?.kind).toBe("resolved");
    expect(ledger.get("int_7")).toMatchObject({ state: "resolved", request: undefined });
    expect(ledger.apply(MapperEventSchema.parse({ type: "status", conversationId: "conv-a", status: "idle", reason: "turn_completed" }))).toBeUndefined();
    expect(ledger.open()).toEqual([]);
  });
});
