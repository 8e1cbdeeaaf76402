/**
 * A policy applied by the session (AgySession.attach({ policy })) against the
 * simulator over real loopback bytes: decisions reach agy through the normal
 * answer path, and each resolution says who decided it.
 */
import { describe, expect, it } from "vitest";
import type { MapperEvent } from "../../src/mapper/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import type { PolicyOutcome } from "../../src/session/index.js";
import { isRequested, isTurnEnd, startWorld } from "./support/session-world.js";

const POLICY = parsePolicy(
  `version: 1
default: ask
rules:
  - id: no-delete
    kind: command
    commands: ["rm *"]
    action: deny
    instruction: Keep the build directory; tell me why you wanted it gone.
  - id: read-only
    kind: command
    commands: ["pwd", "ls*"]
    action: approve
  - id: reads-in-workspace
    kind: file
    operations: [read]
    paths: ["{workspace}/**"]
    action: approve
  - id: files-elsewhere
    kind: file
    action: ask
`,
  "policy.yaml",
);

type Resolved = Extract<MapperEvent, { type: "interaction_resolved" }>;
const isResolved = (e: MapperEvent): e is Resolved => e.type === "interaction_resolved";

function policyWorld(outcomes: PolicyOutcome[], simOptions: Parameters<typeof startWorld>[0] = {}) {
  return startWorld(simOptions, {
    policy: { policy: POLICY, context: { workspace: "/home/sim/project", home: "/home/sim" }, onDecision: (o) => outcomes.push(o) },
  });
}

describe("a policy applied by the session", () => {
  it("approves an allowed command through the answer path, tagged with the rule", async () => {
    const outcomes: PolicyOutcome[] = [];
    const world = await policyWorld(outcomes);
    try {
      world.sim.engine.tuiPort().submitTurn("Run pwd");
      const resolved = await world.waitFor(isResolved, "the policy's approval");
      expect(resolved).toMatchObject({ outcome: "approved", decidedBy: "policy:read-only" });
      await world.waitFor((e) => e.type === "function_call_output", "the command's output");
      await world.waitFor(isTurnEnd, "the end of the turn");
      expect(outcomes.map((o) => [o.decidedBy, o.decision.decision, o.result?.result])).toEqual([["policy:read-only", "approve", "delivered"]]);
    } finally {
      await world.close();
    }
  });

  it("publishes what the delivery came to as policy_delivered, which the ledger folds as the verdict's second stage", async () => {
    const outcomes: PolicyOutcome[] = [];
    const world = await policyWorld(outcomes);
    try {
      world.sim.engine.tuiPort().submitTurn("Run pwd");
      const gate = await world.waitFor(isRequested, "the command gate");
      const delivered = await world.waitFor((e) => e.type === "policy_delivered", "the policy's delivery");
      expect(delivered).toEqual({
        type: "policy_delivered",
        conversationId: gate.conversationId,
        trajectoryId: gate.trajectoryId,
        stepIndex: gate.stepIndex,
        interactionId: gate.interactionId,
        decision: "approve",
        rule: "read-only",
        decidedBy: "policy:read-only",
        result: "delivered",
      });
      // Once per interaction, whatever the resolution's order relative to it.
      await world.waitFor(isResolved, "the policy's approval");
      await world.waitFor(isTurnEnd, "the end of the turn");
      expect(world.log.filter((e) => e.type === "policy_delivered")).toHaveLength(1);
      expect(world.session.interactions!.snapshot().entries.find((e) => e.interactionId === gate.interactionId)?.policy).toEqual({
        decision: "approve",
        rule: "read-only",
        delivery: { result: "delivered" },
      });
    } finally {
      await world.close();
    }
  });

  it("says so when agy refuses the policy's answer: policy_delivered failed with the reason, the request still waiting and still the policy's", async () => {
    const outcomes: PolicyOutcome[] = [];
    const world = await policyWorld(outcomes, { faults: { refuseInteractions: "the interaction service is restarting" } });
    try {
      world.sim.engine.tuiPort().submitTurn("Run pwd");
      const gate = await world.waitFor(isRequested, "the command gate");
      const failed = await world.waitFor((e) => e.type === "policy_delivered", "the policy's failed delivery");
      expect(failed).toMatchObject({ interactionId: gate.interactionId, decision: "approve", result: "failed" });
      expect((failed as { reason?: string }).reason).toContain("the interaction service is restarting");
      expect(outcomes[0]?.error).toContain("the interaction service is restarting");
      // The verdict stands: nobody else may answer it, and agy still waits (for its own TUI).
      const entry = world.session.interactions!.snapshot().entries.find((e) => e.interactionId === gate.interactionId);
      expect(entry).toMatchObject({ state: "open", policy: { decision: "approve", delivery: { result: "failed" } } });
      expect(world.session.interactions!.snapshot().open).toEqual([]);
      expect((await world.session.approve(gate.interactionId, { decidedBy: "cli" })).result).toBe("decided_by_policy");
      expect(world.sim.engine.conversation(gate.conversationId)?.waitingIndices()).toEqual([gate.stepIndex]);
    } finally {
      await world.close();
    }
  });

  it("denies a destructive command with the rule's instruction, which agy receives", async () => {
    const outcomes: PolicyOutcome[] = [];
    const world = await policyWorld(outcomes);
    try {
      world.sim.engine.tuiPort().submitTurn("Delete the build directory");
      const resolved = await world.waitFor(isResolved, "the policy's deny");
      expect(resolved).toMatchObject({ outcome: "denied", decidedBy: "policy:no-delete" });
      expect(resolved.response?.["permission"]).toMatchObject({ userDenyInstruction: "Keep the build directory; tell me why you wanted it gone." });
      await world.waitFor(isTurnEnd, "the end of the turn");
      expect(outcomes[0]).toMatchObject({ decidedBy: "policy:no-delete", decision: { decision: "deny" }, result: { result: "delivered" } });
    } finally {
      await world.close();
    }
  });

  it("leaves a request it asks about pending for a person, whose answer carries no policy tag", async () => {
    const outcomes: PolicyOutcome[] = [];
    const world = await policyWorld(outcomes);
    try {
      world.sim.engine.tuiPort().submitTurn("Read my shell profile");
      const gate = await world.waitFor(isRequested, "the file permission gate");
      // The decision is reported before anything else happens to the gate.
      await expect.poll(() => outcomes.length, { timeout: 5_000 }).toBe(1);
      expect(outcomes[0]).toMatchObject({ decidedBy: "policy:files-elsewhere", decision: { decision: "ask" } });
      expect(outcomes[0]?.result).toBeUndefined();
      expect(await world.session.pending()).toEqual([expect.objectContaining({ interactionId: gate.interactionId })]);
      expect((await world.session.approve(gate.interactionId, { decidedBy: "cli" })).result).toBe("delivered");
      const resolved = await world.waitFor(isResolved, "the person's approval");
      expect(resolved).toMatchObject({ outcome: "approved", decidedBy: "cli" });
    } finally {
      await world.close();
    }
  });

  it("decides a gate that was already waiting when it attached", async () => {
    const outcomes: PolicyOutcome[] = [];
    const { startSimServer } = await import("../../src/sim/index.js");
    const { AgySession } = await import("../../src/session/index.js");
    const sim = await startSimServer({ speed: 0.05 });
    try {
      sim.engine.tuiPort().submitTurn("Run pwd");
      const conversationId = sim.engine.activeConversationId;
      await expect.poll(() => sim.engine.conversation(conversationId)?.waitingIndices().length ?? 0, { timeout: 10_000 }).toBe(1);
      const session = await AgySession.attach({
        url: sim.plainUrl,
        conversationId,
        policy: { policy: POLICY, onDecision: (o) => outcomes.push(o) },
      });
      try {
        await expect.poll(() => outcomes.length, { timeout: 10_000 }).toBe(1);
        expect(outcomes[0]).toMatchObject({ decidedBy: "policy:read-only", result: { result: "delivered" } });
        await expect.poll(() => sim.engine.conversation(conversationId)?.waitingIndices().length ?? -1, { timeout: 10_000 }).toBe(0);
      } finally {
        await session.close();
      }
    } finally {
      await sim.close();
    }
  });

  it("keeps the conversation's history for the first consumer even though the policy subscribed first", async () => {
    const { startSimServer } = await import("../../src/sim/index.js");
    const { AgySession } = await import("../../src/session/index.js");
    const sim = await startSimServer({ speed: 0.05 });
    try {
      const conversationId = sim.engine.activeConversationId;
      sim.engine.tuiPort().submitTurn("Say hello in one short sentence.");
      await expect.poll(() => sim.engine.conversation(conversationId)?.runStatus, { timeout: 10_000 }).toMatch(/IDLE$/);
      const session = await AgySession.attach({ url: sim.plainUrl, conversationId, policy: POLICY });
      try {
        const seen: string[] = [];
        for await (const event of session.events()) {
          seen.push(event.type);
          if (event.type === "history_end") break;
        }
        // The replay (the finished turn) comes before history_end, as for any first consumer.
        expect(seen.slice(0, seen.indexOf("history_end"))).toEqual(expect.arrayContaining(["user_message", "message"]));
      } finally {
        await session.close();
      }
    } finally {
      await sim.close();
    }
  });
});
