import { afterEach, describe, expect, it } from "vitest";
import { createKeyer, cursorsKey, SESSIONS_STREAM } from "../../src/fleet/index.js";
import type { AgySessionApi } from "../../src/session/index.js";
import type { MapperEvent } from "../../src/mapper/index.js";
import { startRelayWorld, summary, type RelayWorld, type StreamEntry } from "./support/relay-world.js";
import { until } from "../support/until.js";

let world: RelayWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/** The conversation as a fresh reader gets it: its history, keyed. */
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

function duplicates(entries: StreamEntry[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const entry of entries) {
    const key = entry.fields["key"]!;
    if (seen.has(key)) out.push(key);
    seen.add(key);
  }
  return out;
}

/** Runs one "Run pwd" turn to its end, approving its gate with a session of the test's own. */
async function turnWithApproval(w: RelayWorld, answerer: AgySessionApi, log: MapperEvent[], turn: number): Promise<void> {
  w.sim.engine.tuiPort().submitTurn("Run pwd");
  const gate = await until(() => log.filter((e) => e.type === "interaction_requested")[turn], `the gate of turn ${turn + 1}`, {
    ms: 15_000,
    seen: () => log.map((e) => e.type).join(", "),
  });
  if (gate.type !== "interaction_requested") throw new Error("not a gate");
  expect((await answerer.approve(gate.interactionId)).result).toBe("delivered");
  await until(() => log.filter((e) => e.type === "status" && e.reason === "turn_completed")[turn], `the end of turn ${turn + 1}`, {
    ms: 15_000,
    seen: () => log.map((e) => e.type).join(", "),
  });
}

describe("the relay publishes events", () => {
  it("publishes each event of a turn once, with its key, type and the event as watch --json prints it", async () => {
    world = await startRelayWorld();
    const w = world;
    await w.startRelay();
    const watcher = await w.session();
    const log: MapperEvent[] = [];
    void (async () => {
      for await (const event of watcher.events({ history: false })) log.push(event);
    })();
    await turnWithApproval(w, watcher, log, 0);
    const output = log.find((e) => e.type === "function_call_output")!;
    const published = await w.waitForEvent((event) => event["type"] === "function_call_output", "the published tool output");
    expect(JSON.parse(published.fields["event"]!)).toEqual(output);
    expect(published.fields["type"]).toBe("function_call_output");
    expect(published.fields["key"]).toBe(`function_call_output:${(output as { callId: string }).callId}`);
    await w.waitForEvent((event) => event["type"] === "status" && event["reason"] === "turn_completed", "the end of the turn");
    const entries = await w.events();
    expect(duplicates(entries)).toEqual([]);
    expect(entries.some((e) => e.fields["type"] === "history_end")).toBe(false);
    // The last published key is recorded beside the stream.
    expect(await w.bot.hget(cursorsKey(w.host), w.conversationId)).toBe(entries[entries.length - 1]!.fields["key"]);
  });

  it("resumes after a restart without a gap or a duplicate: the stream holds the conversation's history once", async () => {
    world = await startRelayWorld();
    const w = world;
    const first = await w.startRelay();
    const watcher = await w.session();
    const log: MapperEvent[] = [];
    void (async () => {
      for await (const event of watcher.events({ history: false })) log.push(event);
    })();
    await turnWithApproval(w, watcher, log, 0);
    await w.waitForEvent((event) => event["type"] === "status" && event["reason"] === "turn_completed", "the end of turn 1 in Redis");
    const before = await w.events();
    await first.close();

    // A turn while no relay runs: it must appear after the restart, and nothing of turn 1 again.
    await turnWithApproval(w, watcher, log, 1);
    await w.startRelay();
    const secondOutput = log.filter((e) => e.type === "function_call_output")[1] as { callId: string };
    await w.waitForEvent(
      (event) => event["type"] === "function_call_output" && event["callId"] === secondOutput.callId,
      "turn 2's tool output after the restart",
    );
    const reader = await w.session(false);
    const expected = await historyKeys(reader);
    let entries: StreamEntry[] = [];
    await until(
      async () => {
        entries = await w.events();
        const keys = new Set(entries.map((e) => e.fields["key"]));
        return expected.every((key) => keys.has(key)) ? true : undefined;
      },
      "every key of the conversation's history in the stream",
      { ms: 15_000, seen: () => `missing ${expected.filter((key) => !entries.some((e) => e.fields["key"] === key)).join(", ")}; stream: ${summary(entries)}` },
    );
    expect(duplicates(entries)).toEqual([]);
    // What the first relay wrote is untouched and first.
    expect(entries.slice(0, before.length)).toEqual(before);
    expect(await w.bot.hget(cursorsKey(w.host), w.conversationId)).toBe(entries[entries.length - 1]!.fields["key"]);
  });

  it("gives a transition the same key from the live stream and from a later snapshot", async () => {
    world = await startRelayWorld();
    const w = world;
    const watcher = await w.session();
    const keyer = createKeyer();
    const live: string[] = [];
    const log: MapperEvent[] = [];
    void (async () => {
      for await (const event of watcher.events({ history: false })) {
        log.push(event);
        // Deltas and status edges exist only live; the settled transitions are in both read paths.
        if (event.type === "message_delta" || event.type === "reasoning_delta" || event.type === "status" || event.type === "history_end") {
          keyer.key(event);
          continue;
        }
        live.push(keyer.key(event)!);
      }
    })();
    await turnWithApproval(w, watcher, log, 0);
    const replayed = (await historyKeys(await w.session(false))).filter((key) => !key.startsWith("status:"));
    expect(live.length).toBeGreaterThan(3);
    expect(replayed).toEqual(expect.arrayContaining(live));
  });

  it("lists the session in the fleet index: attached with its state, detached when the relay stops", async () => {
    world = await startRelayWorld();
    const w = world;
    const relay = await w.startRelay();
    const attached = await until(
      async () => (await w.entries(SESSIONS_STREAM)).find((e) => e.fields["type"] === "session.attached"),
      "session.attached in agy:sessions",
    );
    expect(attached.fields).toMatchObject({ host: w.host, conversationId: w.conversationId, state: "idle" });
    expect(new Date(attached.fields["time"]!).toISOString()).toBe(attached.fields["time"]);
    w.sim.engine.tuiPort().submitTurn("Run pwd");
    await until(
      async () => (await w.entries(SESSIONS_STREAM)).find((e) => e.fields["type"] === "session.state" && e.fields["state"] === "waiting"),
      "session.state waiting",
    );
    await relay.close();
    const detached = (await w.entries(SESSIONS_STREAM)).find((e) => e.fields["type"] === "session.detached");
    expect(detached?.fields).toMatchObject({ host: w.host, conversationId: w.conversationId, state: "gone" });
  });
});

describe("what the relay shows the audit log", () => {
  it("after a restart, the requests still open and live events — not the decisions of the history again", async () => {
    world = await startRelayWorld();
    const w = world;
    const watcher = await w.session();
    const log: MapperEvent[] = [];
    void (async () => {
      for await (const event of watcher.events({ history: false })) log.push(event);
    })();
    await turnWithApproval(w, watcher, log, 0);
    w.sim.engine.tuiPort().submitTurn("Run pwd");
    const open = await until(() => log.filter((e) => e.type === "interaction_requested")[1], "the second gate");
    const observed: MapperEvent[] = [];
    await w.startRelay({ observe: (event) => observed.push(event) });
    await until(() => observed.find((e) => e.type === "interaction_requested"), "the open request", {
      ms: 15_000,
      seen: () => observed.map((e) => e.type).join(", "),
    });
    expect(observed.filter((e) => e.type === "interaction_requested")).toEqual([open]);
    expect(observed.filter((e) => e.type === "interaction_resolved")).toEqual([]);
  });
});
