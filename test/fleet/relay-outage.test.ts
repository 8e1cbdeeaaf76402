import { afterEach, describe, expect, it } from "vitest";
import { createKeyer } from "../../src/fleet/index.js";
import type { AgySessionApi } from "../../src/session/index.js";
import type { MapperEvent } from "../../src/mapper/index.js";
import { startRelayWorld, summary, type RelayWorld, type StreamEntry } from "./support/relay-world.js";
import { until } from "../support/until.js";

let world: RelayWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

async function historyKeys(session: AgySessionApi): Promise<string[]> {
  const keyer = createKeyer();
  const keys: string[] = [];
  for await (const event of session.events({ history: true })) {
    if (event.type === "history_end") break;
    const key = keyer.key(event);
    if (key !== undefined) keys.push(key);
  }
  return keys;
}

/** Redis is killed while the gate waits, the turn is answered and ends, then Redis comes back (AOF: what it acknowledged survives). */
async function turnDuringOutage(w: RelayWorld): Promise<StreamEntry[]> {
  const watcher = await w.session();
  const log: MapperEvent[] = [];
  void (async () => {
    for await (const event of watcher.events({ history: false })) log.push(event);
  })();
  w.sim.engine.tuiPort().submitTurn("Run pwd");
  const gate = JSON.parse((await w.waitForEvent((event) => event["type"] === "interaction_requested", "the published gate")).fields["event"]!) as {
    interactionId: string;
  };
  await w.redis.kill();
  expect((await watcher.approve(gate.interactionId)).result).toBe("delivered");
  await until(() => log.find((e) => e.type === "status" && e.reason === "turn_completed"), "the end of the turn while Redis is away", {
    ms: 15_000,
    seen: () => log.map((e) => e.type).join(", "),
  });
  await w.redis.start();
  const expected = await historyKeys(await w.session(false));
  let entries: StreamEntry[] = [];
  await until(
    async () => {
      entries = await w.events();
      const keys = new Set(entries.map((e) => e.fields["key"]));
      return expected.every((key) => keys.has(key)) && keys.has(expected[expected.length - 1]) ? true : undefined;
    },
    "every key of the conversation in the stream after Redis came back",
    { ms: 20_000, seen: () => `missing ${expected.filter((key) => !entries.some((e) => e.fields["key"] === key)).join(", ")}; stream: ${summary(entries)}` },
  );
  const keys = entries.map((e) => e.fields["key"]);
  expect(keys.filter((key, i) => keys.indexOf(key) !== i)).toEqual([]);
  return entries;
}

describe("the relay while Redis is away", { timeout: 60_000 }, () => {
  it("holds the events and publishes them when Redis is back, without a resync marker", async () => {
    world = await startRelayWorld({ appendonly: true });
    await world.startRelay();
    const entries = await turnDuringOutage(world);
    expect(entries.filter((e) => e.fields["type"] === "resync")).toEqual([]);
  });

  it("past its buffer, marks the gap with one resync entry and fills it from the conversation", async () => {
    world = await startRelayWorld({ appendonly: true });
    await world.startRelay({ bufferLimit: 2 });
    const entries = await turnDuringOutage(world);
    const resyncs = entries.filter((e) => e.fields["type"] === "resync");
    expect(resyncs).toHaveLength(1);
    expect(JSON.parse(resyncs[0]!.fields["event"]!)).toEqual({
      type: "resync",
      reason: expect.stringMatching(/away or too slow while more than 2 events waited/),
    });
  });
});
