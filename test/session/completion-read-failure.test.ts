/**
 * A stream frame whose step needs its full version (a question's
 * multi-select flags, a sub-agent's prompt) is completed with one
 * `GetCascadeTrajectorySteps` read. When that read fails on the wire (found
 * by the chaos suite, test/chaos/: agy restarting, a connection reset), the
 * frame is not applied incomplete: the session reconnects and reads the
 * steps again, so the live events still say what a replay says.
 */
import { describe as group, expect, it } from "vitest";
import { isRequested, isTurnEnd, startWorld, wrapClient } from "./support/session-world.js";
import { createAgyRpcClient, type AgyRpcClient } from "../../src/rpc/index.js";
import { RpcError } from "../../src/errors.js";
import { STEP_TYPE } from "../../src/protocol/wire-names.js";

group("a frame whose completion read fails", () => {
  it("is read again instead of being applied without the fields its events need", async () => {
    let failed = 0;
    const clientFactory = (options: Parameters<typeof createAgyRpcClient>[0]): AgyRpcClient => {
      const real = createAgyRpcClient(options);
      return wrapClient(real, {
        getCascadeTrajectorySteps: async (...args: Parameters<AgyRpcClient["getCascadeTrajectorySteps"]>) => {
          const page = await real.getCascadeTrajectorySteps(...args);
          // The first two reads that would bring the question fail on the wire: its frame's completion read among them.
          if (failed < 2 && page.steps.some((s) => s["type"] === STEP_TYPE.ASK_QUESTION)) {
            failed++;
            throw new RpcError("transport", "GetCascadeTrajectorySteps could not reach agy: ECONNRESET", { method: "GetCascadeTrajectorySteps" });
          }
          return page;
        },
      });
    };
    // No probes: the question is read from the stream, so its frame is the one completed.
    const world = await startWorld({}, { clientFactory, probeIntervalMs: 60_000 });
    try {
      world.sim.engine.tuiPort().submitTurn("Which features should I add?");
      const gate = await world.waitFor(isRequested, "the question");
      expect(failed, "the question's page was read, and failed").toBeGreaterThan(0);
      expect(gate.request.kind === "question" && gate.request.questions[0]?.multiSelect).toBe(true);
      expect((await world.session.answer(gate.interactionId, { optionIds: ["1"] })).result).toBe("delivered");
      await world.waitFor(isTurnEnd, "the end of the turn");
      expect(world.log.filter((e) => e.type === "diagnostic" && e.code === "incomplete_step")).toEqual([]);
    } finally {
      await world.close();
    }
  });
});
