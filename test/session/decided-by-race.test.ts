/**
 * `decidedBy` on `interaction_resolved` names the caller whose answer ended
 * the wait — and nobody when something else ended it (found by the chaos
 * suite, test/chaos/): a person answering in the TUI while the caller's RPC
 * answer is in flight, or agy timing the prompt out under it (the answer then
 * lands on agy's retry, whose resolution carries it instead).
 */
import { describe as group, expect, it } from "vitest";
import { isRequested, isTurnEnd, startWorld, wrapClient } from "./support/session-world.js";
import { createAgyRpcClient, type AgyRpcClient } from "../../src/rpc/index.js";
import type { EventOf } from "../../src/mapper/index.js";
import type { SimServer } from "../../src/sim/index.js";
import { ManualTimeouts } from "../sim/support/manual-timeouts.js";
import { until } from "../support/until.js";

type Resolved = EventOf<"interaction_resolved">;

/** A client whose first answer waits for `before` (agy's own move) before it is sent. */
function holdingClient(before: (conversationId: string, stepIndex: number) => Promise<void>) {
  let held = false;
  return (options: Parameters<typeof createAgyRpcClient>[0]): AgyRpcClient => {
    const real = createAgyRpcClient(options);
    return wrapClient(real, {
      handleCascadeUserInteraction: async (...args: Parameters<AgyRpcClient["handleCascadeUserInteraction"]>) => {
        if (!held) {
          held = true;
          await before(args[0].conversationId, args[0].stepIndex);
        }
        return real.handleCascadeUserInteraction(...args);
      },
    });
  };
}

group("who decided an interaction", () => {
  it("is nobody of ours when a person answered in the TUI while our answer was in flight", async () => {
    let sim: SimServer | undefined;
    const clientFactory = holdingClient(async (conversationId, stepIndex) => {
      const conv = sim!.engine.conversation(conversationId)!;
      expect(sim!.engine.tuiPort().answer(stepIndex, { kind: "permission", allow: true })).toBe(true);
      // The turn plays to its end, and its frames reach the session, while our answer is still on its way.
      await until(() => !conv.running, "the turn to finish after the person's answer", { ms: 10_000, everyMs: 10 });
    });
    const world = await startWorld({}, { clientFactory });
    sim = world.sim;
    try {
      world.sim.engine.tuiPort().submitTurn("Run pwd");
      const gate = await world.waitFor(isRequested, "the gate");
      expect(await world.session.approve(gate.interactionId, { decidedBy: "cli" })).toMatchObject({ result: "already_resolved" });
      const resolved = (await world.waitFor((e) => e.type === "interaction_resolved", "the resolution")) as Resolved;
      expect(resolved).toMatchObject({ stepIndex: gate.stepIndex, outcome: "approved" });
      expect(resolved.decidedBy).toBeUndefined();
      await world.waitFor(isTurnEnd, "the end of the turn");
    } finally {
      await world.close();
    }
  });

  it("is ours on agy's retry, not on the prompt that timed out under our answer", async () => {
    let sim: SimServer | undefined;
    const clock = new ManualTimeouts(60_000);
    const clientFactory = holdingClient(async (conversationId, stepIndex) => {
      const conv = sim!.engine.conversation(conversationId)!;
      expect(clock.fireHeld()).toBe(1);
      await until(() => conv.waitingIndices().some((i) => i > stepIndex), "agy's retry of the prompt", { ms: 10_000, everyMs: 10 });
    });
    const world = await startWorld({ clock, interactionTimeoutMs: 600_000 }, { clientFactory });
    sim = world.sim;
    try {
      world.sim.engine.tuiPort().submitTurn("Run pwd");
      const gate = await world.waitFor(isRequested, "the gate");
      const result = await world.session.approve(gate.interactionId, { decidedBy: "cli" });
      expect(result.result).toBe("delivered");
      const retryIndex = result.result === "delivered" ? result.stepIndex : -1;
      expect(retryIndex).toBeGreaterThan(gate.stepIndex);
      await world.waitFor(isTurnEnd, "the end of the turn");
      const resolutions = world.log.filter((e): e is Resolved => e.type === "interaction_resolved");
      expect(resolutions.map((e) => [e.stepIndex, e.outcome, e.decidedBy])).toEqual([
        [gate.stepIndex, "timed_out", undefined],
        [retryIndex, "approved", "cli"],
      ]);
    } finally {
      await world.close();
    }
  });
});
