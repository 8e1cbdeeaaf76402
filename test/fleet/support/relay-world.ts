/**
 * A private redis-server, a simulated agy and relays started in this process
 * against them, for one test. Everything is torn down by `close`.
 */
import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import { startSimServer, type SimServer } from "../../../src/sim/index.js";
import { AgySession, type AgySessionApi } from "../../../src/session/index.js";
import { createRelay, type Relay, type RelayOptions } from "../../../src/fleet/index.js";
import { eventsStream, resultsStream } from "../../../src/fleet/index.js";
import { startRedis, type RedisProcess, type RedisTls } from "./redis-process.js";
import { until } from "../../support/until.js";

export interface StreamEntry {
  id: string;
  fields: Record<string, string>;
}

export interface RelayWorld {
  redis: RedisProcess;
  /** The test's own client (a bot, a dashboard). */
  bot: Redis;
  sim: SimServer;
  host: string;
  conversationId: string;
  /** A relay following the simulator's conversation; closed by `close` if still open. */
  startRelay(extra?: Partial<RelayOptions>): Promise<Relay>;
  /** A session of the test's own (to answer, or to read the conversation), closed by `close`. */
  session(follow?: boolean): Promise<AgySessionApi>;
  entries(stream: string): Promise<StreamEntry[]>;
  events(): Promise<StreamEntry[]>;
  /** Waits for an events-stream entry matching `match`. */
  waitForEvent(match: (event: Record<string, unknown>, entry: StreamEntry) => boolean, what: string): Promise<StreamEntry>;
  /** Waits for the result of `requestId`. */
  waitForResult(requestId: string): Promise<{ entry: StreamEntry; result: Record<string, unknown> }>;
  close(): Promise<void>;
}

export function asEntries(raw: [string, string[]][]): StreamEntry[] {
  return raw.map(([id, flat]) => {
    const fields: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i]!] = flat[i + 1]!;
    return { id, fields };
  });
}

export function summary(entries: StreamEntry[]): string {
  return entries.map((e) => e.fields["key"] ?? e.fields["type"] ?? e.id).join(", ");
}

/** One plain-answer turn typed into the simulated agy, to its end as the published stream shows it; the stream's entries then. */
export async function completedTurn(w: RelayWorld, text = "Say hello in one short sentence."): Promise<StreamEntry[]> {
  const ends = (entries: StreamEntry[]) =>
    entries.filter((e) => (JSON.parse(e.fields["event"] ?? "{}") as { reason?: string }).reason === "turn_completed").length;
  const before = ends(await w.events());
  w.sim.engine.tuiPort().submitTurn(text);
  let seen: StreamEntry[] = [];
  await until(
    async () => {
      seen = await w.events();
      return ends(seen) > before ? true : undefined;
    },
    "the end of the turn in the stream",
    { ms: 20_000, seen: () => summary(seen) },
  );
  return seen;
}

export async function startRelayWorld(options: { host?: string; appendonly?: boolean; tls?: RedisTls } = {}): Promise<RelayWorld> {
  const redis = await startRedis({ appendonly: options.appendonly === true, ...(options.tls === undefined ? {} : { tls: options.tls }) });
  const sim = await startSimServer({ speed: 0.05 }).catch(async (error: unknown) => {
    await redis.stop();
    throw error;
  });
  const bot = redis.client();
  const host = options.host ?? `host-${randomBytes(3).toString("hex")}`;
  const conversationId = sim.engine.activeConversationId;
  const relays: Relay[] = [];
  const sessions: AgySessionApi[] = [];
  const entries = async (stream: string) => asEntries((await bot.xrange(stream, "-", "+")) as [string, string[]][]);
  const events = () => entries(eventsStream(host, conversationId));
  return {
    redis,
    bot,
    sim,
    host,
    conversationId,
    async startRelay(extra = {}) {
      const relay = createRelay({
        redis: redis.client(),
        host,
        instanceId: `test-${randomBytes(3).toString("hex")}`,
        claimIdleMs: 300,
        blockMs: 100,
        list: async () => [conversationId],
        attach: (id) => AgySession.attach({ url: sim.plainUrl, conversationId: id }),
        ...extra,
      });
      relays.push(relay);
      await relay.start();
      return relay;
    },
    async session(follow = true) {
      const session = await AgySession.attach({ url: sim.plainUrl, conversationId, follow });
      sessions.push(session);
      return session;
    },
    entries,
    events,
    async waitForEvent(match, what) {
      let seen: StreamEntry[] = [];
      return until(
        async () => {
          seen = await events();
          return seen.find((entry) => match(JSON.parse(entry.fields["event"] ?? "{}") as Record<string, unknown>, entry));
        },
        what,
        { ms: 15_000, seen: () => summary(seen) },
      );
    },
    async waitForResult(requestId) {
      let seen: StreamEntry[] = [];
      const entry = await until(
        async () => {
          seen = await entries(resultsStream(host));
          return seen.find((e) => e.fields["requestId"] === requestId);
        },
        `the result of ${requestId}`,
        { ms: 15_000, seen: () => seen.map((e) => `${e.fields["requestId"]}=${e.fields["result"]}`).join(", ") },
      );
      return { entry, result: JSON.parse(entry.fields["result"]!) as Record<string, unknown> };
    },
    async close() {
      for (const relay of relays) await relay.close().catch(() => undefined);
      for (const session of sessions) await session.close().catch(() => undefined);
      await sim.close();
      await redis.stop();
    },
  };
}
