/**
 * SSE replay is a bounded window per conversation (issue 23): a client
 * inside the window resumes exactly; one whose `Last-Event-ID` fell out of
 * it (or that sends none once the start was dropped) gets a `resync` event,
 * the conversation rebuilt from a fresh read, and then the later events —
 * never a silent skip, never an event twice. Real loopback HTTP against
 * scripted sessions.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { MapperEvent } from "../../src/mapper/index.js";
import { createEventLog } from "../../src/server/event-log.js";
import { startApiHarness, type ApiHarness } from "./support/api-harness.js";
import { permissionRequested, userMessage } from "./support/scripted-session.js";
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

async function world(window: number, snapshot?: () => Promise<MapperEvent[]>) {
  const h = await startApiHarness({}, { replayWindow: window });
  harness = h;
  const session = h.addSession(CONV);
  if (snapshot !== undefined) session.snapshot = snapshot;
  await h.hub.refresh();
  const log = () => h.hub.get(CONV)!.log;
  const push = async (...events: MapperEvent[]) => {
    const target = log().lastId + events.length;
    for (const e of events) session.push(e);
    await h.untilLogAt(CONV, target);
  };
  const open = async (lastEventId?: string) => {
    const client = await h.openEvents(CONV, lastEventId);
    clients.push(client);
    return client;
  };
  return { h, session, log, push, open, id: (seq: number) => `${h.hub.epoch}-${seq}` };
}

const texts = (client: SseClient) =>
  client.messages.map((m) => (m.event === "resync" ? "resync" : ((JSON.parse(m.data) as { text?: string; interactionId?: string }).text ?? m.event)));

describe("the event log's window", () => {
  it("keeps only the newest events, says what it covers, and returns exactly the held ones after a position", () => {
    const log = createEventLog({ epoch: "e1", window: 3 });
    for (let i = 1; i <= 5; i++) log.append(say(`m${i}`, i));
    expect([log.oldestId, log.lastId, log.startId]).toEqual([3, 5, 1]);
    expect(log.covers(2)).toBe(true);
    expect(log.covers(1)).toBe(false);
    expect(log.since(2).map((e) => [e.id, (e.event as { text: string }).text])).toEqual([
      [3, "m3"],
      [4, "m4"],
      [5, "m5"],
    ]);
    expect(log.since(4).map((e) => e.id)).toEqual([5]);
    expect(log.since(5)).toEqual([]);
    expect(log.since(3)[0]!.frame).toBe(`id: e1-4\nevent: user_message\ndata: ${JSON.stringify(say("m4", 4))}\n\n`);
  });

  it("stays bounded however many events pass through it", () => {
    const log = createEventLog({ epoch: "e1", window: 10 });
    for (let i = 1; i <= 10_000; i++) log.append(say("x", i));
    expect(log.since(0).map((e) => e.id)).toEqual(Array.from({ length: 10 }, (_, i) => 9_991 + i));
  });
});

describe("SSE resume against the window", () => {
  it("resumes a client inside the window with exactly what it missed, and no resync", async () => {
    const w = await world(3);
    await w.push(say("m1", 1), say("m2", 2), say("m3", 3), say("m4", 4));
    const client = await w.open(w.id(2));
    await client.until((c) => c.messages.length >= 2, "the two missed events");
    expect(client.messages.map((m) => m.id)).toEqual([w.id(3), w.id(4)]);
    expect(texts(client)).toEqual(["m3", "m4"]);
  });

  it("rebuilds a client whose Last-Event-ID fell out of the window from a fresh read, announced by resync, then goes on live without repeating the snapshot", async () => {
    let reads = 0;
    const gate = permissionRequested(CONV, 5, "rm -rf build");
    // The fresh read: the whole conversation as agy holds it now (m5 and the gate included).
    const w = await world(3, async () => {
      reads++;
      return [say("m1", 1), say("m2", 2), say("m3", 3), say("m4", 4), say("m5", 5), gate];
    });
    await w.push(say("m1", 1), say("m2", 2), say("m3", 3), say("m4", 4), say("m5", 5), gate);
    const client = await w.open(w.id(1));
    await client.until((c) => c.messages.length >= 7, "the resync and the snapshot");
    const [resync, ...snapshot] = client.messages;
    expect(resync?.event).toBe("resync");
    expect(resync?.id).toBeUndefined();
    expect(JSON.parse(resync!.data)).toEqual({
      conversationId: CONV,
      reason: "outside_window",
      lastEventId: w.id(1),
      oldestEventId: w.id(4),
      events: 6,
      resumesAfter: w.id(6),
    });
    expect(reads).toBe(1);
    expect(snapshot.map((m) => m.event)).toEqual(["user_message", "user_message", "user_message", "user_message", "user_message", "interaction_requested"]);
    // Only the last snapshot event carries an id: a client cut off mid-snapshot resyncs again.
    expect(snapshot.map((m) => m.id)).toEqual([undefined, undefined, undefined, undefined, undefined, w.id(6)]);
    await w.push(say("m6", 6));
    await client.until((c) => c.messages.length >= 8, "the next live event");
    expect(client.messages.slice(7).map((m) => [m.id, JSON.parse(m.data).text])).toEqual([[w.id(7), "m6"]]);
  });

  it("ends a resync's rebuilt history with one id-less history_end when the log's history had ended, and never adds one to a history still being read", async () => {
    const historyEnd = { type: "history_end", conversationId: CONV } as MapperEvent;
    const w = await world(3, async () => [say("m1", 1), say("m2", 2), say("m3", 3), say("m4", 4)]);
    await w.push(say("m1", 1), say("m2", 2));
    // The window dropped the start before the history ended: this client's resync point is inside the history.
    await w.push(say("m3", 3), say("m4", 4));
    const during = await w.open(w.id(0));
    await during.until((c) => c.messages.length >= 5, "the resync and the snapshot");
    await w.push(historyEnd, say("m5", 5));
    await during.until((c) => texts(c).includes("m5"), "the live event");
    // The logged history_end, with its id, once.
    expect(texts(during)).toEqual(["resync", "m1", "m2", "m3", "m4", "history_end", "m5"]);
    expect(during.messages.find((m) => m.event === "history_end")?.id).toBe(w.id(5));

    const after = await w.open(w.id(1));
    await after.until((c) => c.messages.length >= 6, "the resync, the snapshot and the boundary");
    await w.push(say("m6", 6));
    await after.until((c) => texts(c).includes("m6"), "the next live event");
    // The snapshot (this test's fresh read holds m1–m4), the boundary, then live: m5 was read with the snapshot's resume point.
    expect(texts(after)).toEqual(["resync", "m1", "m2", "m3", "m4", "history_end", "m6"]);
    // Id-less: the client's Last-Event-ID stays the snapshot's last.
    expect(after.messages.find((m) => m.event === "history_end")?.id).toBeUndefined();
  });

  it("skips the events the log appended while the snapshot was read, when the snapshot already showed them", async () => {
    let release: (() => void) | undefined;
    const w = await world(2, async () => {
      await new Promise<void>((r) => (release = r));
      return [say("m1", 1), say("m2", 2), say("m3", 3), say("m4", 4)];
    });
    await w.push(say("m1", 1), say("m2", 2), say("m3", 3));
    const client = await w.open(w.id(0));
    const deadline = Date.now() + 5000;
    while (release === undefined && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    // m4 reaches the log while the read is under way, and the read sees it too; m5 is newer than the read.
    await w.push(say("m4", 4));
    release!();
    await client.until((c) => c.messages.length >= 5, "the resync and the snapshot");
    await w.push(say("m5", 5));
    await client.until((c) => texts(c).includes("m5"), "the event after the read");
    expect(texts(client)).toEqual(["resync", "m1", "m2", "m3", "m4", "m5"]);
    expect(client.messages.at(-1)?.id).toBe(w.id(5));
  });

  it("resyncs a new client without Last-Event-ID once the window dropped the start, and replays from the start while it has not", async () => {
    const w = await world(3, async () => [say("m1", 1), say("m2", 2), say("m3", 3), say("m4", 4)]);
    await w.push(say("m1", 1), say("m2", 2), say("m3", 3));
    const early = await w.open();
    await early.until((c) => c.messages.length >= 3, "the whole log");
    expect(texts(early)).toEqual(["m1", "m2", "m3"]);
    await w.push(say("m4", 4));
    const late = await w.open();
    await late.until((c) => c.messages.length >= 5, "the resync and the snapshot");
    expect(texts(late)).toEqual(["resync", "m1", "m2", "m3", "m4"]);
    expect(JSON.parse(late.messages[0]!.data)).toMatchObject({ reason: "outside_window", lastEventId: null, events: 4, resumesAfter: w.id(4) });
    // The read began after m4 reached the log: the stream resumes after it.
    expect(late.messages.at(-1)?.id).toBe(w.id(4));
  });

  it("resyncs a session without a snapshot with its open interactions only", async () => {
    const w = await world(2);
    const gate = permissionRequested(CONV, 3, "pwd");
    await w.push(say("m1", 1), say("m2", 2), gate, say("m4", 4));
    const client = await w.open(w.id(0));
    await client.until((c) => c.messages.length >= 2, "the resync");
    expect(texts(client)).toEqual(["resync", "interaction_requested"]);
    expect(JSON.parse(client.messages[1]!.data)).toEqual(gate);
  });
});
