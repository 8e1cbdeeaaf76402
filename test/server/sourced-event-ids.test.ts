/**
 * SSE ids of a session whose source ids its events (`serve --redis`: the
 * Redis stream entry ids): the log writes them as the `id:`, and a client
 * resumes with one — to this log or to one a restarted serve fills again
 * from the stream — getting exactly the entries after it. A log that has not
 * read up to the id keeps the client waiting; an id the source never issued
 * is a 400; one older than what the log holds is a resync. Real loopback HTTP
 * against a scripted session (the Redis side is test/fleet/serve-resume.test.ts).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { MapperEvent } from "../../src/mapper/index.js";
import { compareStreamIds, isStreamId } from "../../src/server/event-id.js";
import { createEventLog } from "../../src/server/event-log.js";
import { followLog, type StreamSink } from "../../src/server/event-stream.js";
import type { SupervisedSession } from "../../src/server/session-hub.js";
import { startApiHarness, type ApiHarness } from "./support/api-harness.js";
import { createScriptedSession, userMessage, type ScriptedSession } from "./support/scripted-session.js";
import type { SseClient } from "./support/sse-client.js";

let harness: ApiHarness | undefined;
const clients: SseClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await harness?.close();
  harness = undefined;
});

const CONV = "conv-a";
const say = (text: string, stepIndex: number): MapperEvent => ({ ...userMessage(CONV, text), stepIndex }) as MapperEvent;
/** The id of the i-th entry of a made-up stream: two entries per millisecond, so both parts of the id count. */
const sid = (i: number) => `${1733050000000 + Math.floor(i / 2)}-${i % 2}`;

interface SourcedSession extends ScriptedSession {
  /** The source issued entry `i` and the session read it. */
  read(i: number): void;
  /** What the source says its newest entry is (default: the newest read). */
  newest: string | undefined;
}

function sourcedSession(): SourcedSession {
  const base = createScriptedSession(CONV);
  const ids: string[] = [];
  const session = base as SourcedSession & Required<Pick<SupervisedSession, "eventEntries" | "newestEntryId">>;
  session.newest = undefined;
  session.read = (i) => {
    ids.push(sid(i));
    if (session.newest === undefined || compareStreamIds(sid(i), session.newest) > 0) session.newest = sid(i);
    base.push(say(`m${i}`, i));
  };
  session.eventEntries = async function* ({ signal }) {
    let n = 0;
    for await (const event of base.events({ signal })) yield { id: ids[n++]!, event };
  };
  session.newestEntryId = async () => session.newest;
  return session;
}

async function world(window?: number) {
  const h = await startApiHarness({}, window === undefined ? {} : { replayWindow: window });
  harness = h;
  const session = sourcedSession();
  h.addSession(CONV, session);
  await h.hub.refresh();
  const log = () => h.hub.get(CONV)!.log;
  const read = async (...indices: number[]) => {
    const target = log().lastId + indices.length;
    for (const i of indices) session.read(i);
    await h.untilLogAt(CONV, target);
  };
  const open = async (lastEventId?: string) => {
    const client = await h.openEvents(CONV, lastEventId);
    clients.push(client);
    return client;
  };
  const events = (lastEventId: string) => h.fetch(`/v1/sessions/${CONV}/events`, { headers: { "last-event-id": lastEventId } });
  return { h, session, log, read, open, events };
}

const shown = (client: SseClient) =>
  client.messages.map((m) => (m.event === "resync" ? "resync" : `${m.id ?? "-"} ${(JSON.parse(m.data) as { text?: string }).text}`));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => from + k);

describe("stream entry ids", () => {
  it("compares ids as Redis does: milliseconds, then sequence, as numbers", () => {
    expect(compareStreamIds("9-0", "10-0")).toBeLessThan(0);
    expect(compareStreamIds("10-2", "10-10")).toBeLessThan(0);
    expect(compareStreamIds("1733050000000-0", "1733050000000-0")).toBe(0);
    expect(compareStreamIds("18446744073709551615-1", "18446744073709551615-0")).toBeGreaterThan(0);
    expect(["1733050000000-0", "0-1"].every(isStreamId)).toBe(true);
    expect(["mfz3k1q07f3a-41", "41", "1-", "-1", "18446744073709551616-0", "1-2-3", ""].some(isStreamId)).toBe(false);
  });
});

describe("a sourced event log", () => {
  it("writes the source's ids as the frames' ids and locates a client's position among them", () => {
    const log = createEventLog({ epoch: "e1", window: 3, sourced: true });
    expect(log.locate(sid(0))).toBe("ahead");
    for (let i = 1; i <= 6; i++) log.append(say(`m${i}`, i), sid(i * 2));
    // Held: m4 (sid 8), m5 (sid 10), m6 (sid 12).
    expect(log.since(0).map((e) => [e.id, e.wireId])).toEqual([
      [4, sid(8)],
      [5, sid(10)],
      [6, sid(12)],
    ]);
    expect(log.since(4)[0]!.frame.startsWith(`id: ${sid(10)}\nevent: user_message\n`)).toBe(true);
    expect(log.locate(sid(8))).toBe(4);
    expect(log.locate(sid(9))).toBe(4); // between two entries: after the older one
    expect(log.locate(sid(12))).toBe(6);
    expect(log.locate(sid(13))).toBe("ahead");
    expect(log.locate(sid(7))).toBe("behind");
    expect([log.wireIdOf(4), log.wireIdOf(6), log.wireIdOf(2)]).toEqual([sid(8), sid(12), undefined]);
    expect(() => log.append(say("old", 7), sid(12))).toThrow(/not after the log's newest/);
    expect(() => log.append(say("none", 7))).toThrow(/needs a stream entry id/);
  });

  it("resyncs a follower that fell out of the window mid-stream, naming the last stream id it got", async () => {
    const log = createEventLog({ epoch: "e1", window: 2, sourced: true });
    log.append(say("m1", 1), sid(1));
    const frames: string[] = [];
    let room = 1;
    const sink: StreamSink = {
      closed: false,
      write(frame) {
        frames.push(frame);
        return --room > 0;
      },
      end() {},
    };
    const follower = followLog({
      source: { conversationId: CONV, log, snapshot: async () => [say("m1", 1), say("m2", 2), say("m3", 3)] },
      sink,
      lastEventId: undefined,
      start: { after: 0 },
      signal: new AbortController().signal,
    });
    follower.flush();
    for (let i = 2; i <= 4; i++) log.append(say(`m${i}`, i), sid(i));
    room = 100;
    follower.drained();
    const deadline = Date.now() + 5000;
    while (frames.length < 5 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    expect(frames[0]!.startsWith(`id: ${sid(1)}\n`)).toBe(true);
    const resync = JSON.parse(frames[1]!.slice(frames[1]!.indexOf("data: ") + 6)) as Record<string, unknown>;
    expect(frames[1]!.startsWith("event: resync\n"), frames.join("")).toBe(true);
    expect(resync).toEqual({ conversationId: CONV, reason: "outside_window", lastEventId: sid(1), oldestEventId: sid(3), events: 3, resumesAfter: sid(4) });
    expect(frames.at(-1)!.startsWith(`id: ${sid(4)}\n`)).toBe(true);
  });
});

describe("SSE of a sourced session", () => {
  it("sends the source's ids, and resumes after any of them with exactly what follows", async () => {
    const w = await world();
    await w.read(1, 2, 3, 4);
    const all = await w.open();
    await all.until((c) => c.messages.length >= 4, "the four entries");
    expect(shown(all)).toEqual(range(1, 4).map((i) => `${sid(i)} m${i}`));
    const resumed = await w.open(sid(2));
    await w.read(5);
    await resumed.until((c) => c.messages.length >= 3, "the entries after the id, then the live one");
    expect(shown(resumed)).toEqual([3, 4, 5].map((i) => `${sid(i)} m${i}`));
    // An id between two entries (a client of a stream some entries were never sent from) resumes after the older one.
    const between = await w.open(`${1733050000000 + 1}-7`);
    await between.until((c) => c.messages.length >= 2, "the entries after the gap");
    expect(shown(between)).toEqual([4, 5].map((i) => `${sid(i)} m${i}`));
  });

  it("keeps a client whose id the log has not read up to yet waiting, then sends exactly what follows it", async () => {
    const w = await world();
    // A restarted serve reading the stream again: the source holds up to entry 8, the log has read 2.
    w.session.newest = sid(8);
    await w.read(1, 2);
    const client = await w.open(sid(5));
    expect(client.status).toBe(200);
    await w.read(3, 4, 5);
    await w.read(6, 7, 8);
    await client.until((c) => c.messages.length >= 3, "the entries after the id");
    await w.read(9);
    await client.until((c) => c.messages.length >= 4, "the live entry");
    expect(shown(client)).toEqual([6, 7, 8, 9].map((i) => `${sid(i)} m${i}`));
  });

  it("refuses an id the source never issued, and a malformed one, with 400 and a sentence", async () => {
    const w = await world();
    await w.read(1, 2);
    w.session.newest = sid(4);
    const beyond = await w.events(sid(9));
    expect(beyond.status).toBe(400);
    expect(((await beyond.json()) as { detail: string }).detail).toBe(
      `Last-Event-ID ${sid(9)} was never sent: the newest entry of the conversation's Redis stream is ${sid(4)}; resume with an id you received, or omit the header to get the conversation from the start`,
    );
    const malformed = await w.events("yesterday");
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { detail: string }).detail).toMatch(
      /^Last-Event-ID must be an event id this API sent: the Redis stream entry id of the event \(like \d+-0\)/,
    );
  });

  it("replays from the start for an id of serve's own kind (a run before stream ids)", async () => {
    const w = await world();
    await w.read(1, 2);
    const client = await w.open("mfz3k1q07f3a-41");
    await client.until((c) => c.messages.length >= 2, "the whole log");
    expect(shown(client)).toEqual([1, 2].map((i) => `${sid(i)} m${i}`));
  });

  it("resyncs an id older than the window holds, with stream ids in the resync and on the last snapshot event", async () => {
    const w = await world(3);
    w.session.snapshot = async () => range(1, 5).map((i) => say(`m${i}`, i));
    await w.read(1, 2, 3, 4, 5);
    const client = await w.open(sid(1));
    await client.until((c) => c.messages.length >= 6, "the resync and the snapshot");
    expect(JSON.parse(client.messages[0]!.data)).toEqual({
      conversationId: CONV,
      reason: "outside_window",
      lastEventId: sid(1),
      oldestEventId: sid(3),
      events: 5,
      resumesAfter: sid(5),
    });
    expect(shown(client)).toEqual(["resync", ...range(1, 4).map((i) => `- m${i}`), `${sid(5)} m5`]);
    await w.read(6);
    await client.until((c) => c.messages.length >= 7, "the live entry");
    expect(shown(client).at(-1)).toBe(`${sid(6)} m6`);
  });
});
