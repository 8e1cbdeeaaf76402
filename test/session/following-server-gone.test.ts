import { describe, expect, it } from "vitest";
import { AgySession } from "../../src/session/index.js";
import { startSimServer } from "../../src/sim/index.js";
import type { MapperEvent } from "../../src/mapper/index.js";
import { describe as describeEvent, isTurnEnd } from "./support/session-world.js";
import { until } from "../support/until.js";

const isGone = (e: MapperEvent) => e.type === "status" && e.status === "failed" && e.reason === "server_gone";

describe("a session whose server is gone", () => {
  it("says server_gone once and ends its events when the server stops answering", async () => {
    const sim = await startSimServer({ speed: 0.05 });
    const session = await AgySession.attach({ url: sim.plainUrl, conversationId: sim.engine.activeConversationId, pollIntervalMs: 20 });
    const log: MapperEvent[] = [];
    let ended = false;
    const reading = (async () => {
      for await (const event of session.events()) log.push(event);
      ended = true;
    })();
    try {
      sim.engine.tuiPort().submitTurn("Say hello in one short sentence.");
      await until(() => log.some(isTurnEnd), "the turn's end", { everyMs: 10, seen: () => log.map(describeEvent).join(", ") });
      await sim.close();
      await until(() => ended, "the events to end after the server went away", { everyMs: 10, seen: () => log.map(describeEvent).join(", ") });
      expect(log.filter(isGone)).toHaveLength(1);
      expect(log.at(-1)).toMatchObject({ type: "status", status: "failed", reason: "server_gone", conversationId: session.conversationId });
    } finally {
      await session.close();
      await reading;
      await sim.close();
    }
  });

  it("says it as soon as locate finds no server, and with relocate: true goes on once the server is back", async () => {
    const sim = await startSimServer({ speed: 0.05 });
    let findable = true;
    const session = await AgySession.attach({
      url: sim.plainUrl,
      conversationId: sim.engine.activeConversationId,
      goneAfterFailures: 1_000, // only locate's answer can say gone here
      relocateAfterFailures: 1,
      pollIntervalMs: 20,
      relocate: true,
      locate: async () => {
        if (!findable) throw new Error("no agy process owns the conversation");
        return { url: sim.plainUrl, how: "test" };
      },
    });
    const log: MapperEvent[] = [];
    const reading = (async () => {
      for await (const event of session.events()) log.push(event);
    })();
    const seen = () => log.map(describeEvent).join(", ");
    try {
      findable = false;
      await sim.restart(); // new ports: the old URL refuses connections
      await until(() => log.some(isGone), "server_gone", { everyMs: 10, seen });
      findable = true;
      await until(() => session.url === sim.plainUrl, "the session to find the restarted server", { everyMs: 10, seen });
      sim.engine.tuiPort().submitTurn("Say hello in one short sentence.");
      await until(() => log.some((e) => e.type === "message" && !e.failed), "the answer after the server came back", { everyMs: 10, seen });
      expect(log.filter(isGone)).toHaveLength(1);
    } finally {
      await session.close();
      await reading;
      await sim.close();
    }
  });
});
