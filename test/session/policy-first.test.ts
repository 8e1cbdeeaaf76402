/**
 * A session attached with a policy decides each request before it publishes
 * it (issue 34, item 3), against the simulator over real loopback bytes:
 * the event carries the verdict, `pending()` never lists what the policy
 * decided, and any other answer to it is refused with `decided_by_policy`
 * — also one given at once, before the policy's own delivery.
 */
import { describe, expect, it } from "vitest";
import type { MapperEvent } from "../../src/mapper/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import type { AnswerResult } from "../../src/session/index.js";
import { isRequested, isTurnEnd, startWorld } from "./support/session-world.js";

const POLICY = parsePolicy(
  `version: 1
default: ask
rules:
  - id: no-delete
    kind: command
    commands: ["rm *"]
    action: deny
  - id: read-only
    kind: command
    commands: ["pwd"]
    action: approve
`,
  "policy.yaml",
);

type Resolved = Extract<MapperEvent, { type: "interaction_resolved" }>;
const isResolved = (e: MapperEvent): e is Resolved => e.type === "interaction_resolved";

describe("a session's policy decides before it publishes", () => {
  for (const [turn, decision, rule, outcome] of [
    ["Run pwd", "approve", "read-only", "approved"],
    ["Delete the build directory", "deny", "no-delete", "denied"],
  ] as const) {
    it(`${decision}: the event says so, nobody else may answer it, and it is never pending`, async () => {
      const world = await startWorld({}, { policy: { policy: POLICY, context: { workspace: "/home/sim/project", home: "/home/sim" } } });
      try {
        const pendingSeen = new Set<string>();
        let polling = true;
        const poll = (async () => {
          while (polling) for (const p of await world.session.pending()) pendingSeen.add(p.interactionId);
        })();
        world.sim.engine.tuiPort().submitTurn(turn);
        const gate = await world.waitFor(isRequested, "the gate");
        expect(gate.policy).toEqual({ decision, rule });
        // Answered at once, in the same tick the event arrived: refused, whoever is faster.
        const attempts: AnswerResult[] = await Promise.all([
          world.session.approve(gate.interactionId, { decidedBy: "http:default" }),
          world.session.deny(gate.interactionId, { decidedBy: "page" }),
          world.session.answer(gate.interactionId, { optionIds: ["1"], decidedBy: "mcp:bot" }),
        ]);
        for (const attempt of attempts) expect(attempt).toMatchObject({ result: "decided_by_policy", decision, rule });
        const resolved = await world.waitFor(isResolved, "the policy's answer");
        expect(resolved).toMatchObject({ interactionId: gate.interactionId, outcome, decidedBy: `policy:${rule}` });
        await world.waitFor(isTurnEnd, "the end of the turn");
        polling = false;
        await poll;
        expect([...pendingSeen]).toEqual([]);
      } finally {
        await world.close();
      }
    });
  }

  it("ask: the event says so, and a person answers it", async () => {
    const world = await startWorld({}, { policy: { policy: POLICY } });
    try {
      world.sim.engine.tuiPort().submitTurn("Read my shell profile");
      const gate = await world.waitFor(isRequested, "the gate");
      expect(gate.policy).toEqual({ decision: "ask", rule: null });
      expect((await world.session.pending()).map((p) => p.interactionId)).toEqual([gate.interactionId]);
      expect(await world.session.approve(gate.interactionId, { decidedBy: "cli" })).toMatchObject({ result: "delivered" });
    } finally {
      await world.close();
    }
  });
});
