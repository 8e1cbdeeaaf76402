import { afterEach, describe, expect, it } from "vitest";
import { startSimServer, type SimServer } from "../../src/sim/index.js";
import { AgySession } from "../../src/session/index.js";
import { commandsStream, createRelay, eventsStream, resultsStream, SESSIONS_STREAM, type Relay } from "../../src/fleet/index.js";
import { startRedis, type RedisProcess } from "./support/redis-process.js";
import { asEntries, type StreamEntry } from "./support/relay-world.js";
import { until } from "../support/until.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function hostWith(redis: RedisProcess, host: string): Promise<{ sim: SimServer; relay: Relay; conversationId: string }> {
  const sim = await startSimServer({ speed: 0.05 });
  cleanups.push(() => sim.close());
  const conversationId = sim.engine.activeConversationId;
  const relay = createRelay({
    redis: redis.client(),
    host,
    instanceId: `${host}-1`,
    claimIdleMs: 300,
    blockMs: 100,
    list: async () => [conversationId],
    attach: (id) => AgySession.attach({ url: sim.plainUrl, conversationId: id }),
  });
  cleanups.push(() => relay.close());
  await relay.start();
  return { sim, relay, conversationId };
}

describe("two hosts on one Redis", () => {
  it("lets a bot find a gate on host B through the fleet index and answer it through B's command stream", async () => {
    const redis = await startRedis();
    cleanups.push(() => redis.stop());
    const bot = redis.client();
    const a = await hostWith(redis, "host-a");
    const b = await hostWith(redis, "host-b");
    const read = async (stream: string): Promise<StreamEntry[]> => asEntries((await bot.xrange(stream, "-", "+")) as [string, string[]][]);

    // The bot knows only the index: which host follows which conversation.
    const index = await until(async () => {
      const entries = (await read(SESSIONS_STREAM)).filter((e) => e.fields["type"] === "session.attached");
      return entries.length === 2 ? entries : undefined;
    }, "both hosts in agy:sessions");
    const onB = index.find((e) => e.fields["host"] === "host-b")!.fields["conversationId"]!;
    expect(onB).toBe(b.conversationId);

    b.sim.engine.tuiPort().submitTurn("Run pwd");
    const gate = await until(
      async () => (await read(eventsStream("host-b", onB))).find((e) => e.fields["type"] === "interaction_requested"),
      "the gate on host B",
    );
    const interactionId = (JSON.parse(gate.fields["event"]!) as { interactionId: string }).interactionId;

    // Sent to the wrong host, it is refused by that host's relay, not lost.
    await bot.xadd(
      commandsStream("host-a"),
      "*",
      "requestId",
      "wrong-host",
      "type",
      "approve",
      "conversationId",
      onB,
      "interactionId",
      interactionId,
      "body",
      "{}",
      "principal",
      "bot",
    );
    const refused = await until(async () => (await read(resultsStream("host-a"))).find((e) => e.fields["requestId"] === "wrong-host"), "host A's refusal");
    expect(JSON.parse(refused.fields["result"]!)).toMatchObject({ result: "unknown_conversation" });

    await bot.xadd(
      commandsStream("host-b"),
      "*",
      "requestId",
      "right-host",
      "type",
      "approve",
      "conversationId",
      onB,
      "interactionId",
      interactionId,
      "body",
      "{}",
      "principal",
      "bot",
    );
    const result = await until(async () => (await read(resultsStream("host-b"))).find((e) => e.fields["requestId"] === "right-host"), "host B's result");
    expect(JSON.parse(result.fields["result"]!)).toMatchObject({ result: "delivered", interactionId });
    await until(
      async () => (await read(eventsStream("host-b", onB))).find((e) => e.fields["type"] === "function_call_output"),
      "the command's output on host B",
    );
    // Host A's conversation saw none of it.
    expect((await read(eventsStream("host-a", a.conversationId))).some((e) => e.fields["type"] === "interaction_requested")).toBe(false);
  });
});
