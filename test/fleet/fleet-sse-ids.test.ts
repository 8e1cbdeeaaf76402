/**
 * The hub and API `serve --redis` is made of, over a real Redis with a relay
 * and a simulated agy publishing host B's conversation: the SSE ids are the
 * stream's entry ids, and the edges of resuming with one —
 * - a serve (just started) that has not read the stream up to the client's id
 *   keeps the client waiting, then sends exactly what follows; it neither
 *   refuses the id nor sends older entries again (the reader is held at a
 *   gate the test opens, so "not read up to it yet" is certain, not timing);
 * - an id older than the replay window, or than the stream's first entry
 *   (trimmed), is a resync rebuilt from the stream, never a silent skip;
 * - the relay's `resync` entry reaches clients as an `events_dropped`
 *   diagnostic carrying that entry's own id.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createFleetClient, eventsStream, type FleetClient } from "../../src/fleet/index.js";
import { compareStreamIds } from "../../src/server/event-id.js";
import type { SseClient, SseMessage } from "../server/support/sse-client.js";
import { serveOverFleet } from "./support/fleet-serve.js";
import { completedTurn, startRelayWorld, type RelayWorld, type StreamEntry } from "./support/relay-world.js";
import { until } from "../support/until.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

const HELLO = "Say hello in one short sentence.";

const eventOf = (entry: StreamEntry) => JSON.parse(entry.fields["event"]!) as { type: string; reason?: string };

async function world(): Promise<RelayWorld> {
  const w = await startRelayWorld();
  cleanups.push(() => w.close());
  await w.startRelay();
  return w;
}

/** One plain-answer turn on host B, to its end as the stream shows it. */
const turn = (w: RelayWorld) => completedTurn(w, HELLO);

/** A client whose event reads stop after `holdAfter` entries until `release`: serve reading the stream slowly after a restart. */
function gated(client: FleetClient, holdAfter: number): { client: FleetClient; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  return {
    release,
    client: {
      ...client,
      events(host, conversationId, options) {
        return (async function* () {
          let n = 0;
          for await (const entry of client.events(host, conversationId, options)) {
            if (n++ === holdAfter) await gate;
            yield entry;
          }
        })();
      },
    },
  };
}

/** Whether a message is not the id-less `history_end` each client gets once (fleet-history-end.test.ts). */
const isEntry = (m: SseMessage) => m.id !== undefined || m.event !== "history_end";

/** Waits until `client` got exactly the stream's entries after `after` (its ids, types and events), after `skip` messages of its own. */
async function receivedExactly(w: RelayWorld, client: SseClient, after: string, what: string, skip = 0): Promise<void> {
  let expected: StreamEntry[] = [];
  const got = () => client.messages.slice(skip).filter(isEntry);
  const ids = () => got().map((m) => m.id ?? `(no id: ${m.event})`);
  await until(
    async () => {
      expected = (await w.events()).filter((e) => compareStreamIds(e.id, after) > 0);
      return expected.length > 0 && JSON.stringify(ids()) === JSON.stringify(expected.map((e) => e.id)) ? true : undefined;
    },
    what,
    { ms: 20_000, seen: () => `client ${ids().join(" ")}; stream after ${after}: ${expected.map((e) => e.id).join(" ")}` },
  );
  expect(got().map((m) => m.event)).toEqual(expected.map((e) => e.fields["type"]));
  expect(got().map((m) => JSON.parse(m.data) as unknown)).toEqual(expected.map((e) => eventOf(e) as unknown));
  expect(client.messages.filter((m) => !isEntry(m)).length).toBeLessThanOrEqual(1);
}

describe("SSE ids of a serve over the fleet", { timeout: 120_000 }, () => {
  it("keeps a client whose id serve has not read up to waiting, then sends exactly the entries after it", async () => {
    const w = await world();
    const entries = await turn(w);
    expect(entries.length).toBeGreaterThan(6);
    const slow = gated(createFleetClient({ redis: w.redis.client(), blockMs: 100 }), 2);
    const serve = await serveOverFleet(w, cleanups, { client: slow.client });
    await serve.read(2);
    const position = entries[5]!.id;
    expect(serve.log().locate(position)).toBe("ahead");
    // Not read yet, but issued by the stream: no 400, and the stream stays open.
    const client = await serve.open(position);
    expect(client.status).toBe(200);
    // One the stream never issued is refused while serve is still behind, naming the stream's newest entry.
    const newest = entries.at(-1)!.id;
    const refused = await serve.call(`${BigInt(newest.split("-")[0]!) + 60_000n}-0`);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { detail: string }).detail).toContain(`the newest entry of the conversation's Redis stream is ${newest}`);
    slow.release();
    await receivedExactly(w, client, position, "the entries after the client's id");
    await turn(w);
    await receivedExactly(w, client, position, "the next turn, live");
  });

  it("resyncs an id older than the replay window from the stream, then goes on live with stream ids", async () => {
    const w = await world();
    const entries = await turn(w);
    const serve = await serveOverFleet(w, cleanups, { replayWindow: 3 });
    await serve.read(entries.length);
    const client = await serve.open(entries[0]!.id);
    const snapshot = entries.filter((e) => !["message_delta", "reasoning_delta"].includes(eventOf(e).type));
    await client.until((c) => c.messages.length >= 1 + snapshot.length, "the resync and the snapshot", 15_000);
    const [resync, ...rest] = client.messages;
    const rebuilt = rest.filter(isEntry);
    expect(resync?.event).toBe("resync");
    expect(JSON.parse(resync!.data)).toEqual({
      conversationId: w.conversationId,
      reason: "outside_window",
      lastEventId: entries[0]!.id,
      oldestEventId: entries.at(-3)!.id,
      events: snapshot.length,
      resumesAfter: entries.at(-1)!.id,
    });
    // The conversation read afresh from the stream, without its deltas; only the last carries an id: the newest entry's.
    expect(rebuilt.map((m) => JSON.parse(m.data) as unknown)).toEqual(snapshot.map((e) => eventOf(e) as unknown));
    expect(rebuilt.map((m) => m.id)).toEqual([...snapshot.slice(1).map(() => undefined), entries.at(-1)!.id]);
    await turn(w);
    await receivedExactly(w, client, entries.at(-1)!.id, "the next turn, with stream ids", 1 + snapshot.length);
  });

  it("resyncs an id older than the stream's first entry (trimmed) and resumes exactly from the first one it still holds", async () => {
    const w = await world();
    const entries = await turn(w);
    // The relay trims with MAXLEN ~ (whole nodes, so not a short stream): trim exactly, as a long conversation would be.
    await w.bot.xtrim(eventsStream(w.host, w.conversationId), "MAXLEN", 3);
    const kept = await w.events();
    expect(kept.map((e) => e.id)).toEqual(entries.slice(-3).map((e) => e.id));
    const serve = await serveOverFleet(w, cleanups);
    await serve.read(3);
    const gone = await serve.open(entries[1]!.id);
    await gone.until((c) => c.messages.length >= 1, "the resync");
    expect(gone.messages[0]?.event).toBe("resync");
    expect(JSON.parse(gone.messages[0]!.data)).toMatchObject({
      reason: "outside_window",
      lastEventId: entries[1]!.id,
      oldestEventId: kept[0]!.id,
      resumesAfter: kept.at(-1)!.id,
    });
    const held = await serve.open(kept[0]!.id);
    await receivedExactly(w, held, kept[0]!.id, "the two entries after the first one kept");
  });

  it("sends the relay's resync entry as an events_dropped diagnostic with that entry's id", async () => {
    const w = await world();
    await turn(w);
    const serve = await serveOverFleet(w, cleanups);
    const live = await serve.open();
    const before = (await w.events()).at(-1)!.id;
    await live.until((c) => c.messages.filter(isEntry).at(-1)?.id === before, "the stream so far");
    // What the relay writes when it dropped events while Redis was away (src/fleet/relay.ts).
    const id = (await w.bot.xadd(
      eventsStream(w.host, w.conversationId),
      "*",
      "key",
      `resync:${new Date().toISOString()}`,
      "type",
      "resync",
      "event",
      JSON.stringify({ type: "resync", reason: "the queue overflowed" }),
    ))!;
    await live.until((c) => c.messages.filter(isEntry).at(-1)?.id === id, "the diagnostic");
    const diagnostic = live.messages.filter(isEntry).at(-1)!;
    expect(diagnostic.event).toBe("diagnostic");
    expect(JSON.parse(diagnostic.data)).toMatchObject({ type: "diagnostic", conversationId: w.conversationId, code: "events_dropped" });
    expect(JSON.parse(diagnostic.data).message).toContain("the queue overflowed");
    const resumed = await serve.open(before);
    // The history serve read ends at `before`, where it resumes: first the (id-less) history_end, then the live diagnostic.
    expect(serve.log().wireIdOf(serve.log().historyEnd!)).toBe(before);
    await resumed.until((c) => c.messages.length >= 2, "history_end and the diagnostic, resumed");
    expect(resumed.messages.map((m) => [m.id, m.event])).toEqual([
      [undefined, "history_end"],
      [id, "diagnostic"],
    ]);
  });
});
