/**
 * `agy-bridge serve --redis` SSE ids are the Redis stream entry ids of
 * `agy:events:<host>:<conversationId>`: a client resumes with the last one
 * it got — on the same serve, or on one killed and started again — and gets
 * exactly the entries after it, compared with a clean read of the stream. A
 * real serve process, a relay and a simulated agy for host B, Redis on a
 * private port.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { compareStreamIds } from "../../src/server/event-id.js";
import { openSse, type SseClient } from "../server/support/sse-client.js";
import { startServeProcess, type ServeProcess } from "../server/support/serve-process.js";
import { startRelayWorld, type RelayWorld, type StreamEntry } from "./support/relay-world.js";
import { until } from "../support/until.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

const HELLO = "Say hello in one short sentence.";

/** The messages that are stream entries: all but the one id-less `history_end` each client gets (fleet-history-end.test.ts). */
const entriesOf = (client: SseClient) => client.messages.filter((m) => m.id !== undefined || m.event !== "history_end");

/** Waits until `client` got exactly the stream's entries after `after` (all of them without), then checks their content too. */
async function receivedExactly(w: RelayWorld, client: SseClient, after: string | undefined, what: string): Promise<StreamEntry[]> {
  let expected: StreamEntry[] = [];
  const ids = () => entriesOf(client).map((m) => m.id ?? `(no id: ${m.event})`);
  await until(
    async () => {
      expected = (await w.events()).filter((e) => after === undefined || compareStreamIds(e.id, after) > 0);
      return expected.length > 0 && JSON.stringify(ids()) === JSON.stringify(expected.map((e) => e.id)) ? true : undefined;
    },
    what,
    { ms: 20_000, seen: () => `client ${ids().join(" ")}; stream after ${after ?? "the start"}: ${expected.map((e) => e.id).join(" ")}` },
  );
  expect(entriesOf(client).map((m) => m.event)).toEqual(expected.map((e) => e.fields["type"]));
  expect(entriesOf(client).map((m) => JSON.parse(m.data) as unknown)).toEqual(expected.map((e) => JSON.parse(e.fields["event"]!) as unknown));
  expect(client.messages.length - entriesOf(client).length).toBeLessThanOrEqual(1);
  return expected;
}

/** One plain-answer turn on host B, to its end as the stream shows it. */
async function turn(w: RelayWorld, n: number): Promise<void> {
  const ends = async () => (await w.events()).filter((e) => (JSON.parse(e.fields["event"] ?? "{}") as { reason?: string }).reason === "turn_completed").length;
  const before = await ends();
  w.sim.engine.tuiPort().submitTurn(HELLO);
  await until(async () => ((await ends()) > before ? true : undefined), `the end of turn ${n} in the stream`, { ms: 20_000 });
}

describe("agy-bridge serve --redis: SSE ids are the stream's entry ids", { timeout: 180_000 }, () => {
  it("resumes a client on the same serve and on a serve killed and started again with exactly the entries after its id", async () => {
    const w = await startRelayWorld();
    cleanups.push(() => w.close());
    await w.startRelay();
    const dir = await mkdtemp(join(tmpdir(), "agyb-serve-resume-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const serves: ServeProcess[] = [];
    cleanups.push(async () => {
      for (const s of serves) await s.stop();
    });
    const startServe = async () => {
      const serve = await startServeProcess({ configHome: dir, args: ["--redis", w.redis.url, "--refresh-ms", "200"] });
      serves.push(serve);
      await until(
        async () => {
          const res = await fetch(`${serve.url}/v1/sessions`, { headers: { authorization: `Bearer ${serve.token}` } });
          const { sessions } = (await res.json()) as { sessions: { conversationId: string }[] };
          return sessions.some((s) => s.conversationId === w.conversationId) ? true : undefined;
        },
        "host B's session on serve",
        { ms: 20_000, seen: () => serve.stderr() },
      );
      return serve;
    };
    const open = async (serve: ServeProcess, lastEventId?: string) => {
      const client = await openSse(`${serve.url}/v1/sessions/${w.conversationId}/events`, {
        authorization: `Bearer ${serve.token}`,
        ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId }),
      });
      cleanups.push(async () => client.close());
      expect(client.status).toBe(200);
      return client;
    };

    await turn(w, 1);
    let serve = await startServe();
    const first = await open(serve);
    const firstSeen = await receivedExactly(w, first, undefined, "the whole stream, with its entry ids");
    first.close();
    expect(firstSeen.length).toBeGreaterThan(3);

    // (1) The same serve, mid-conversation: from an id in the middle, then live.
    const middle = firstSeen[Math.floor(firstSeen.length / 2)]!.id;
    const second = await open(serve, middle);
    await turn(w, 2);
    await receivedExactly(w, second, middle, "the entries after the middle one, then turn 2 live");
    second.close();
    const lastSeen = entriesOf(second).at(-1)!.id!;

    // (2) serve is killed; turn 3 happens while it is down; a new serve reads the stream afresh.
    serve.child.kill("SIGKILL");
    await until(() => serve.exited(), "serve to die");
    await turn(w, 3);
    serve = await startServe();
    const third = await open(serve, lastSeen);
    const missed = await receivedExactly(w, third, lastSeen, "exactly the entries of turn 3 from the restarted serve");
    expect(missed.some((e) => JSON.parse(e.fields["event"]!).type === "user_message")).toBe(true);

    // An id of the new serve's own kind (a run before stream ids) replays from the start; one beyond the stream is refused.
    const call = (lastEventId: string) =>
      fetch(`${serve.url}/v1/sessions/${w.conversationId}/events`, { headers: { authorization: `Bearer ${serve.token}`, "last-event-id": lastEventId } });
    const newest = (await w.events()).at(-1)!.id;
    const beyond = `${BigInt(newest.split("-")[0]!) + 60_000n}-0`;
    const refused = await call(beyond);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { detail: string }).detail).toContain(`the newest entry of the conversation's Redis stream is ${newest}`);
    const malformed = await call("not an id");
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { detail: string }).detail).toMatch(/^Last-Event-ID must be an event id this API sent/);
    const older = await open(serve, "mfz3k1q07f3a-41");
    await receivedExactly(w, older, undefined, "everything, for an id of serve's own kind");
    expect(serve.stderr()).not.toContain(serve.token);
  });
});
