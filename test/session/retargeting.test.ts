import { describe as group, expect, it } from "vitest";
import { isRequested, isTurnEnd, startWorld, wrapClient } from "./support/session-world.js";
import { createAgyRpcClient, type AgyRpcClient } from "../../src/rpc/index.js";
import type { MapperEvent } from "../../src/mapper/index.js";
import type { SimServer } from "../../src/sim/index.js";
import { until } from "../support/until.js";

type Requested = Extract<MapperEvent, { type: "interaction_requested" }>;

group("retargeting an answer", () => {
  it("delivers to agy's retry step when the captured prompt timed out", async () => {
    const world = await startWorld({ interactionTimeoutMs: 300 });
    try {
      world.sim.engine.tuiPort().submitTurn("Run pwd");
      const first = await world.waitFor(isRequested, "the first gate");
      const retry = (await world.waitFor((e): e is Requested => isRequested(e) && e.stepIndex > first.stepIndex, "the retried gate")) as Requested;
      expect(world.log.find((e) => e.type === "interaction_resolved")).toMatchObject({ outcome: "timed_out", stepIndex: first.stepIndex });
      const result = await world.session.approve(first.interactionId);
      expect(result).toEqual({ result: "delivered", stepIndex: retry.stepIndex });
      await world.waitFor(isTurnEnd, "the end of the turn");
    } finally {
      await world.close();
    }
  });

  it("retargets a strictly higher retry after 'input not registered'", async () => {
    let sim: SimServer | undefined;
    let held = 0;
    // A client whose first answer reaches agy only after the prompt timed out: agy then says "input not registered".
    const clientFactory = (options: Parameters<typeof createAgyRpcClient>[0]): AgyRpcClient => {
      const real = createAgyRpcClient(options);
      return wrapClient(real, {
        handleCascadeUserInteraction: async (...args: Parameters<AgyRpcClient["handleCascadeUserInteraction"]>) => {
          if (held++ === 0) {
            const conv = sim!.engine.conversation(args[0].conversationId)!;
            await until(() => conv.waitingIndices().some((i) => i > args[0].stepIndex), "the retry step", { ms: 10_000, everyMs: 10 });
          }
          return real.handleCascadeUserInteraction(...args);
        },
      });
    };
    const world = await startWorld({ interactionTimeoutMs: 400 }, { clientFactory });
    sim = world.sim;
    try {
      world.sim.engine.tuiPort().submitTurn("Run pwd");
      const first = await world.waitFor(isRequested, "the first gate");
      const result = await world.session.approve(first.interactionId);
      expect(result.result).toBe("delivered");
      if (result.result !== "delivered") return;
      expect(result.stepIndex).toBeGreaterThan(first.stepIndex);
      expect(held).toBe(2);
      await world.waitFor(isTurnEnd, "the end of the turn");
    } finally {
      await world.close();
    }
  });

  it("reports timed_out when the prompt timed out and no retry waits", async () => {
    let sim: SimServer | undefined;
    const clientFactory = (options: Parameters<typeof createAgyRpcClient>[0]): AgyRpcClient => {
      const real = createAgyRpcClient(options);
      return wrapClient(real, {
        handleCascadeUserInteraction: async (...args: Parameters<AgyRpcClient["handleCascadeUserInteraction"]>) => {
          // Stop the turn while the answer is on its way: the step leaves WAITING and nothing retries it.
          await fetch(`${sim!.plainUrl}/exa.language_server_pb.LanguageServerService/ForceStopCascadeTree`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ conversationId: args[0].conversationId }),
          });
          return real.handleCascadeUserInteraction(...args);
        },
      });
    };
    const world = await startWorld({}, { clientFactory });
    sim = world.sim;
    try {
      world.sim.engine.tuiPort().submitTurn("Run pwd");
      const first = await world.waitFor(isRequested, "the gate");
      const result = await world.session.approve(first.interactionId);
      expect(result).toEqual({ result: "timed_out", stepIndex: first.stepIndex });
    } finally {
      await world.close();
    }
  });
});
