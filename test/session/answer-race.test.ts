/**
 * A person answers a gate in the TUI while the supervisor's RPC answer to
 * it is on its way (found by the chaos suite, test/chaos/). agy then says
 * "input not registered": the step was answered, not timed out, so the
 * supervisor's verdict belongs to nobody else — least of all the next gate
 * of the same kind that is already waiting.
 */
import { describe as group, expect, it } from "vitest";
import { isRequested, isTurnEnd, startWorld, wrapClient } from "./support/session-world.js";
import { createAgyRpcClient, type AgyRpcClient } from "../../src/rpc/index.js";
import type { MapperEvent } from "../../src/mapper/index.js";
import type { SimServer } from "../../src/sim/index.js";
import { until } from "../support/until.js";

type Requested = Extract<MapperEvent, { type: "interaction_requested" }>;

/** A client whose first answer reaches agy only after the person answered the gate in the TUI (and `then` held). */
function racingClient(sim: () => SimServer, then: (conv: NonNullable<ReturnType<SimServer["engine"]["conversation"]>>, stepIndex: number) => Promise<void>) {
  let raced = false;
  return (options: Parameters<typeof createAgyRpcClient>[0]): AgyRpcClient => {
    const real = createAgyRpcClient(options);
    return wrapClient(real, {
      handleCascadeUserInteraction: async (...args: Parameters<AgyRpcClient["handleCascadeUserInteraction"]>) => {
        if (!raced) {
          raced = true;
          const conv = sim().engine.conversation(args[0].conversationId)!;
          expect(sim().engine.tuiPort().answer(args[0].stepIndex, { kind: "permission", allow: true })).toBe(true);
          await then(conv, args[0].stepIndex);
        }
        return real.handleCascadeUserInteraction(...args);
      },
    });
  };
}

group("an answer racing a person at the TUI", () => {
  it("reports already_resolved, not timed_out, when no other gate waits", async () => {
    let sim: SimServer | undefined;
    const world = await startWorld(
      {},
      {
        clientFactory: racingClient(
          () => sim!,
          async () => undefined,
        ),
      },
    );
    sim = world.sim;
    try {
      world.sim.engine.tuiPort().submitTurn("Run pwd");
      const gate = await world.waitFor(isRequested, "the gate");
      expect(await world.session.approve(gate.interactionId)).toEqual({ result: "already_resolved", stepIndex: gate.stepIndex });
      await world.waitFor(isTurnEnd, "the end of the turn");
    } finally {
      await world.close();
    }
  });

  it("reports already_resolved and leaves the next gate of the same kind alone", async () => {
    let sim: SimServer | undefined;
    let raced = false;
    // The first answer reaches agy only after the person approved the gate in the TUI and the next gate parked.
    const clientFactory = (options: Parameters<typeof createAgyRpcClient>[0]): AgyRpcClient => {
      const real = createAgyRpcClient(options);
      return wrapClient(real, {
        handleCascadeUserInteraction: async (...args: Parameters<AgyRpcClient["handleCascadeUserInteraction"]>) => {
          if (!raced) {
            raced = true;
            const conv = sim!.engine.conversation(args[0].conversationId)!;
            expect(sim!.engine.tuiPort().answer(args[0].stepIndex, { kind: "permission", allow: true })).toBe(true);
            await until(() => conv.waitingIndices().some((i) => i > args[0].stepIndex), "the second gate", { ms: 10_000, everyMs: 10 });
          }
          return real.handleCascadeUserInteraction(...args);
        },
      });
    };
    const world = await startWorld({}, { clientFactory });
    sim = world.sim;
    try {
      world.sim.engine.tuiPort().submitTurn("Show git status and recent commits");
      const first = await world.waitFor(isRequested, "the first gate");
      const result = await world.session.approve(first.interactionId);
      expect(result).toEqual({ result: "already_resolved", stepIndex: first.stepIndex });
      const conv = world.sim.engine.conversation(world.session.conversationId)!;
      const second = conv.waitingIndices()[0];
      expect(second, "the second gate still waits for its own answer").toBeGreaterThan(first.stepIndex);
      expect(conv.steps[second!]!.completedInteractions).toBeUndefined();
      const next = (await world.waitFor((e): e is Requested => isRequested(e) && e.stepIndex === second, "the second gate's request")) as Requested;
      expect(await world.session.approve(next.interactionId)).toMatchObject({ result: "delivered", stepIndex: second });
      await world.waitFor(isTurnEnd, "the end of the turn");
    } finally {
      await world.close();
    }
  });
});
