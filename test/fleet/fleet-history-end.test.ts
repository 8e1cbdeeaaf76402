/**
 * `history_end` for fleet sessions (`serve --redis`): the relay does not
 * publish it (each reader gets the boundary itself), so serve's hub records
 * where the history ended — the stream's newest entry when it began reading —
 * and each SSE client gets one id-less `history_end` there: after the
 * history's entries, before the live ones; a client resuming with a
 * Last-Event-ID gets it too, once, after its backlog. Real Redis on a private
 * port, a relay and a simulated agy (host B), and serve's hub and API.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createFleetClient, eventsStream, type FleetClient } from "../../src/fleet/index.js";
import type { SseClient, SseMessage } from "../server/support/sse-client.js";
import { serveOverFleet } from "./support/fleet-serve.js";
import { completedTurn, startRelayWorld, type RelayWorld, type StreamEntry } from "./support/relay-world.js";
import { until } from "../support/until.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

const eventOf = (entry: StreamEntry) => JSON.parse(entry.fields["event"]!) as { type: string; status?: string; reason?: string };
const show = (messages: SseMessage[]) => messages.map((m) => `${m.id ?? "(no id)"}:${m.event}`).join(" ");
const boundaries = (client: SseClient) => client.messages.filter((m) => m.event === "history_end");

async function world(): Promise<RelayWorld> {
  const w = await startRelayWorld();
  cleanups.push(() => w.close());
  await w.startRelay();
  return w;
}

/** One plain-answer turn on host B, to its end as the stream shows it. */
const turn = (w: RelayWorld) => completedTurn(w, "Say hello in one short sentence.");

/**
 * Waits until `client` got exactly the stream's entries after `after` (by
 * id) with one id-less `history_end` after the first `history` of them.
 */
async function receivedWithBoundary(w: RelayWorld, client: SseClient, after: string | undefined, history: number, what: string): Promise<StreamEntry[]> {
  let expected: string[] = [];
  let stream: StreamEntry[] = [];
  await until(
    async () => {
      stream = await w.events();
      const from = after === undefined ? 0 : stream.findIndex((e) => e.id === after) + 1;
      const ids = stream.slice(from).map((e) => e.id);
      expected = [...ids.slice(0, history), "(no id):history_end", ...ids.slice(history)];
      const got = client.messages.map((m) => (m.id === undefined ? `(no id):${m.event}` : m.id));
      return JSON.stringify(got) === JSON.stringify(expected) ? true : undefined;
    },
    what,
    { ms: 20_000, seen: () => `client ${show(client.messages)}; expected ${expected.join(" ")}` },
  );
  return stream;
}

describe("history_end for a fleet session's SSE clients", { timeout: 120_000 }, () => {
  it("comes once, id-less, after the history's entries and before the live events", async () => {
    const w = await world();
    const history = await turn(w);
    const serve = await serveOverFleet(w, cleanups);
    const client = await serve.open();
    await receivedWithBoundary(w, client, undefined, history.length, "the history, then history_end");
    const boundary = boundaries(client)[0]!;
    expect(boundary.id).toBeUndefined();
    expect(JSON.parse(boundary.data)).toEqual({ type: "history_end", conversationId: w.conversationId });
    // Nothing waits, and the listing says what the stream says.
    const lastStatus = history
      .map(eventOf)
      .filter((e) => e.type === "status")
      .at(-1)?.status;
    expect(lastStatus).toBeDefined();
    expect((await serve.sessions()).map(({ conversationId, status, pending }) => ({ conversationId, status, pending }))).toEqual([
      { conversationId: w.conversationId, status: lastStatus, pending: 0 },
    ]);
    // A live turn: its entries come after the one boundary, with their ids; no second boundary.
    const all = await turn(w);
    expect(all.length).toBeGreaterThan(history.length);
    await receivedWithBoundary(w, client, undefined, history.length, "the live turn after history_end");
    expect(boundaries(client)).toHaveLength(1);
  });

  it("comes once to a client resuming with a Last-Event-ID: after its backlog, or at once when it has none", async () => {
    const w = await world();
    const history = await turn(w);
    const serve = await serveOverFleet(w, cleanups);
    // The hub has read the history and recorded its end.
    await until(() => (serve.hub.get(w.conversationId)?.log.historyEnd !== undefined ? true : undefined), "serve to read the history", {
      ms: 15_000,
      seen: () => `read ${serve.hub.get(w.conversationId)?.log.lastId ?? "nothing"}`,
    });
    const middle = history[3]!.id;
    const behind = await serve.open(middle);
    await receivedWithBoundary(w, behind, middle, history.length - 4, "the backlog after the id, then history_end");
    const caughtUp = await serve.open(history.at(-1)!.id);
    await receivedWithBoundary(w, caughtUp, history.at(-1)!.id, 0, "history_end at once");
    await turn(w);
    await receivedWithBoundary(w, behind, middle, history.length - 4, "the live turn, resumed mid-history");
    await receivedWithBoundary(w, caughtUp, history.at(-1)!.id, 0, "the live turn, resumed at the end");
    expect(boundaries(behind)).toHaveLength(1);
    expect(boundaries(caughtUp)).toHaveLength(1);
  });

  it("ends the history at the stream's newest entry when serve began reading, before an entry written just after", async () => {
    const w = await world();
    const history = await turn(w);
    const base = createFleetClient({ redis: w.redis.client(), blockMs: 100 });
    let written: string | undefined;
    // Right after serve asked for the newest entry, and before it reads any, another entry arrives: it is live.
    const client: FleetClient = {
      ...base,
      async newest(host, conversationId) {
        const newest = await base.newest(host, conversationId);
        written ??= (await w.bot.xadd(
          eventsStream(w.host, w.conversationId),
          "*",
          "key",
          "resync:test",
          "type",
          "resync",
          "event",
          JSON.stringify({ type: "resync", reason: "written after serve asked" }),
        ))!;
        return newest;
      },
    };
    const serve = await serveOverFleet(w, cleanups, { client });
    const sse = await serve.open();
    const stream = await receivedWithBoundary(w, sse, undefined, history.length, "the history, history_end, then the entry written after");
    expect(stream.at(-1)!.id).toBe(written);
    expect(sse.messages.at(-1)).toMatchObject({ id: written, event: "diagnostic" });
  });
});
