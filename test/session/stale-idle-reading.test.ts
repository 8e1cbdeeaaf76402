/**
 * A run-status reading can be overtaken by the stream: the
 * `GetAllCascadeTrajectories` answer taken just before a turn began may
 * arrive after the session saw the turn start (found by the chaos suite,
 * test/chaos/, with a stalled response). Such a reading says nothing about
 * the turn that began since, so it never closes it.
 */
import { describe as group, expect, it } from "vitest";
import { isTurnEnd, startWorld, wrapClient, type World } from "./support/session-world.js";
import { createAgyRpcClient, type AgyRpcClient } from "../../src/rpc/index.js";
import { until } from "../support/until.js";

group("a run-status reading older than the turn", () => {
  it("does not close a turn that began after it was taken", async () => {
    let world: World | undefined;
    let readings = 0;
    let hold: "off" | "armed" | "holding" = "off";
    const clientFactory = (options: Parameters<typeof createAgyRpcClient>[0]): AgyRpcClient => {
      const real = createAgyRpcClient(options);
      return wrapClient(real, {
        getAllCascadeTrajectories: async (...args: Parameters<AgyRpcClient["getAllCascadeTrajectories"]>) => {
          const answer = await real.getAllCascadeTrajectories(...args);
          readings++;
          if (hold === "armed") {
            // Taken while idle, delivered once the session streams the next turn's answer.
            hold = "holding";
            await until(() => world!.log.some((e) => e.type === "message_delta"), "the next turn's first delta", { ms: 10_000, everyMs: 5 });
          }
          return answer;
        },
      });
    };
    world = await startWorld({ speed: 1 }, { clientFactory, idleCheckIntervalMs: 20 });
    try {
      await until(() => readings >= 2, "two idle readings", { ms: 10_000, everyMs: 5 });
      hold = "armed";
      await until(() => hold === "holding", "a reading taken while idle", { ms: 10_000, everyMs: 5 });
      world.sim.engine.tuiPort().submitTurn("Write a long essay about patience");
      const end = await world.waitFor(isTurnEnd, "the end of the turn", 15_000);
      expect(end).toMatchObject({ status: "idle", reason: "turn_completed" });
      expect(world.log.findIndex((e) => e.type === "message")).toBeLessThan(world.log.indexOf(end));
    } finally {
      await world.close();
    }
  }, 30_000);
});
