/**
 * The fleet relay on a real redis-server (started here on a private port,
 * killed after): 100 sessions publishing at once — the time from a session
 * emitting an event to a consumer on another connection reading it with
 * `XREAD` (p50, p90, and p99 in the name) — and Redis memory per 1,000
 * published events against the bytes of their JSON.
 * No goal is written for these in the design; the rows are for comparison
 * between runs. Needs `redis-server` on PATH (`.ci/run` installs it).
 */
import { performance } from "node:perf_hooks";
import type { MapperEvent } from "../src/mapper/index.js";
import { createRelay, eventsStream, type FleetSession } from "../src/fleet/index.js";
import { startRedis } from "../test/fleet/support/redis-process.js";
import type { BenchRow, BenchSuite, Sample } from "./harness.js";

const SESSIONS = 100;
const ROUNDS = 40;
const HOST = "bench";

/** A session whose events the bench pushes: no history, then what is pushed. */
function pushingSession(conversationId: string): FleetSession & { push(event: MapperEvent): void } {
  const backlog: MapperEvent[] = [{ type: "history_end", conversationId }];
  let wake: (() => void) | undefined;
  let closed = false;
  const refuse = async (): Promise<never> => {
    throw new Error("not in the bench");
  };
  return {
    conversationId,
    push(event) {
      backlog.push(event);
      wake?.();
    },
    async *events() {
      let next = 0;
      while (!closed) {
        if (next < backlog.length) {
          yield backlog[next++]!;
          continue;
        }
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
    approve: refuse,
    deny: refuse,
    answer: refuse,
    sendTurn: refuse,
    interrupt: refuse,
    async close() {
      closed = true;
      wake?.();
    },
  };
}

function message(conversationId: string, n: number): MapperEvent {
  return {
    type: "message",
    conversationId,
    trajectoryId: "t",
    stepIndex: n,
    messageId: `m-${conversationId}-${n}`,
    role: "assistant",
    text: `reply ${n}: ${"lorem ipsum ".repeat(20)}`,
    failed: false,
  };
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

async function latencyRow(): Promise<BenchRow> {
  const redis = await startRedis();
  try {
    const sessions = new Map(Array.from({ length: SESSIONS }, (_, i) => [`conv-${i}`, pushingSession(`conv-${i}`)]));
    const relay = createRelay({
      redis: redis.client(),
      host: HOST,
      instanceId: "bench-1",
      list: async () => [...sessions.keys()],
      attach: async (id) => sessions.get(id)!,
    });
    await relay.start();
    const consumer = redis.client();
    const streams = [...sessions.keys()].map((id) => eventsStream(HOST, id));
    const last = new Map(streams.map((s) => [s, "0-0"]));
    const sentAt = new Map<string, number>();
    const latencies: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      for (const [id, session] of sessions) {
        sentAt.set(`message:m-${id}-${round}`, performance.now());
        session.push(message(id, round));
      }
      let seen = 0;
      while (seen < SESSIONS) {
        const reply = (await consumer.xread("COUNT", 1000, "BLOCK", 5000, "STREAMS", ...streams, ...streams.map((s) => last.get(s)!))) as
          | [string, [string, string[]][]][]
          | null;
        if (reply === null) throw new Error(`round ${round}: only ${seen} of ${SESSIONS} events arrived within 5 s`);
        const now = performance.now();
        for (const [stream, entries] of reply) {
          for (const [entryId, flat] of entries) {
            last.set(stream, entryId);
            const key = flat[flat.indexOf("key") + 1]!;
            const start = sentAt.get(key);
            if (start === undefined) continue;
            latencies.push(now - start);
            seen++;
          }
        }
      }
    }
    await relay.close();
    latencies.sort((a, b) => a - b);
    const sample: Sample = { medianMs: quantile(latencies, 0.5), p90Ms: quantile(latencies, 0.9), runs: latencies.length };
    return { name: `${SESSIONS} sessions publishing at once: event → consumer XREAD (p99 ${quantile(latencies, 0.99).toFixed(2)} ms)`, sample };
  } finally {
    await redis.stop();
  }
}

async function memoryRow(): Promise<BenchRow> {
  const redis = await startRedis();
  try {
    const admin = redis.client();
    const used = async () => Number(/used_memory:(\d+)/.exec(await admin.info("memory"))?.[1]);
    const session = pushingSession("mem-conv");
    const relay = createRelay({ redis: redis.client(), host: HOST, instanceId: "bench-2", list: async () => ["mem-conv"], attach: async () => session });
    await relay.start();
    const before = await used();
    let bytes = 0;
    for (let n = 1; n <= 1000; n++) {
      const event = message("mem-conv", n);
      bytes += JSON.stringify(event).length;
      session.push(event);
    }
    const stream = eventsStream(HOST, "mem-conv");
    const deadline = Date.now() + 30_000;
    while ((await admin.xlen(stream)) < 1000) {
      if (Date.now() > deadline) throw new Error("the 1,000 events were not published within 30 s");
      await new Promise((r) => setTimeout(r, 20));
    }
    const grown = (await used()) - before;
    await relay.close();
    // Reported as "ms" columns by the shared table: the value is KiB here, said in the name.
    const kib = grown / 1024;
    return {
      name: `Redis memory per 1,000 events: ${kib.toFixed(0)} KiB (their JSON: ${(bytes / 1024).toFixed(0)} KiB)`,
      sample: { medianMs: kib, p90Ms: kib, runs: 1 },
      baseline: { name: "JSON bytes (KiB)", sample: { medianMs: bytes / 1024, p90Ms: bytes / 1024, runs: 1 } },
    };
  } finally {
    await redis.stop();
  }
}

const suite: BenchSuite = {
  title: "fleet relay (Redis Streams)",
  async run() {
    return [await latencyRow(), await memoryRow()];
  },
};
export default suite;
