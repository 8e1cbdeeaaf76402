/**
 * The fleet relay on a real redis-server (started here on a private port,
 * killed after): 100 sessions publishing at once — the time from a session
 * emitting an event to a consumer on another connection reading it with
 * `XREAD` (p50, p90, and p99 in the name) — and Redis memory per 1,000
 * published events against the bytes of their JSON.
 * No goal is written for these two in the design; they are for comparison
 * between runs. Then the fleet as a team runs it (issue 36): simulators in
 * private tmux servers, a relay per host, one `serve --redis`, all real
 * processes of the built CLI (bench/fleet-hosts.ts) — serve's and the relays'
 * idle RSS and CPU, event → SSE and approve → delivered latencies, Redis
 * bytes per retained event. Needs `redis-server` and `tmux` on PATH
 * (`.ci/run` installs them).
 */
import { performance } from "node:perf_hooks";
import type { MapperEvent } from "../src/mapper/index.js";
import { createRelay, eventsStream, type FleetSession } from "../src/fleet/index.js";
import { startRedis } from "../test/fleet/support/redis-process.js";
import { ensureBuiltCli } from "./built-cli.js";
import { runFleetHosts } from "./fleet-hosts.js";
import { isQuick, summarize, type BenchRow, type BenchSuite, type Sample } from "./harness.js";

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

const figure = (value: number): Sample => ({ medianMs: value, p90Ms: value, runs: 1 });

/**
 * The fleet as processes (bench/fleet-hosts.ts): hosts × sessions behind one
 * `serve --redis`. Full: 10 hosts of 100 sessions (each simulator also hosts
 * its own default conversation: 101 per host), 20 turns, 20 approvals;
 * `--quick`: 2 hosts of 10. `FLEET_HOSTS`, `FLEET_SESSIONS`, `FLEET_STEPS`,
 * `FLEET_IDLE_S` change the shape.
 */
async function hostRows(): Promise<BenchRow[]> {
  const quick = isQuick();
  const hosts = Number(process.env["FLEET_HOSTS"] ?? (quick ? 2 : 10));
  const sessionsPerHost = Number(process.env["FLEET_SESSIONS"] ?? (quick ? 10 : 100));
  const steps = Number(process.env["FLEET_STEPS"] ?? 50);
  const idleSeconds = Number(process.env["FLEET_IDLE_S"] ?? (quick ? 5 : 30));
  const turns = quick ? 4 : 20;
  const maxLen = 10_000;
  const r = await runFleetHosts({ hosts, sessionsPerHost, steps, idleSeconds, turns, approvals: turns, maxLen, bin: ensureBuiltCli() });
  const what = `serve --redis following ${r.sessions} sessions of ${hosts} relays (listed ${r.listedAfterSeconds.toFixed(0)} s after the relays started)`;
  const latency = summarize(r.latenciesMs);
  const approve = summarize(r.approveMs);
  const relayCpu = Math.max(...r.relays.map((x) => x.cpuPercent));
  const relayRss = Math.max(...r.relays.map((x) => x.rssMb));
  const range = (values: number[]) => `${Math.min(...values).toFixed(1)}-${Math.max(...values).toFixed(1)}`;
  const perEntry = r.redis.streamBytes / r.redis.entries;
  const over = (met: boolean, text: string) => (met ? "" : `; ${text} over`);
  const rows: BenchRow[] = [
    {
      name: `${what}, idle RSS, MB${over(r.serve.rssMb <= 400, `${(r.serve.rssMb - 400).toFixed(0)} MB`)}`,
      sample: figure(r.serve.rssMb),
      goal: "<= 400 MB",
      met: r.serve.rssMb <= 400,
    },
    {
      name: `${what}, idle CPU over ${idleSeconds} s, % of a core${over(r.serve.cpuPercent <= 5, `${(r.serve.cpuPercent - 5).toFixed(1)} points`)}`,
      sample: figure(r.serve.cpuPercent),
      goal: "<= 5 %",
      met: r.serve.cpuPercent <= 5,
    },
    {
      name: `${turns} turns at once over ${hosts} hosts: GENERATING frame → serve's SSE message_delta, ms (p99 ${latency.p99Ms.toFixed(1)}; ${r.latenciesMs.length} deltas)${over(latency.p99Ms <= 100, `${(latency.p99Ms - 100).toFixed(0)} ms`)}`,
      sample: latency,
      goal: "p99 <= 100 ms",
      met: latency.p99Ms <= 100,
    },
    {
      name: `HTTP approve → serve answers delivered (the relay had agy take it over RPC), ms (p99 ${approve.p99Ms.toFixed(1)}; ${r.approveMs.length} gates)${over(approve.p99Ms <= 250, `${(approve.p99Ms - 250).toFixed(0)} ms`)}`,
      sample: approve,
      goal: "p99 <= 250 ms",
      met: approve.p99Ms <= 250,
    },
    {
      name: `each relay idle with ${r.sessions / hosts} sessions: highest CPU over ${idleSeconds} s, % of a core (all: ${range(r.relays.map((x) => x.cpuPercent))})${over(relayCpu <= 2, `${(relayCpu - 2).toFixed(1)} points`)}`,
      sample: figure(relayCpu),
      goal: "<= 2 %",
      met: relayCpu <= 2,
    },
    {
      name: `each relay idle with ${r.sessions / hosts} sessions: highest RSS, MB (all: ${range(r.relays.map((x) => x.rssMb))})${over(relayRss <= 150, `${(relayRss - 150).toFixed(0)} MB`)}`,
      sample: figure(relayRss),
      goal: "<= 150 MB",
      met: relayRss <= 150,
    },
    ...(await aloneRows(sessionsPerHost, steps, idleSeconds)),
    {
      name: `redis-server idle CPU over ${idleSeconds} s with ${r.sessions} sessions published, % of a core`,
      sample: figure(r.redisCpu.idlePercent),
      goal: "reported",
    },
    ...(turns > 0
      ? [
          {
            name: `redis-server CPU while ${turns} turns run (from their sending to their end), % of a core`,
            sample: figure(r.redisCpu.turnsPercent),
            goal: "reported",
          },
        ]
      : []),
    {
      name: `Redis memory per retained event, bytes (${r.redis.entries} entries in ${r.sessions} streams, MAXLEN ~${maxLen} each; used_memory ${(r.redis.usedMemoryBytes / 1024 / 1024).toFixed(1)} MB)`,
      sample: figure(perEntry),
      goal: "reported",
    },
  ];
  return rows;
}

/** What docs/fleet.md suggests a relay's unit set: a young generation that the attach burst cannot grow to 16 MB a semi-space. */
const RELAY_NODE_OPTIONS = "--max-semi-space-size=2";

/**
 * One relay on a machine of its own, as each host of a fleet runs it: the
 * rows above put ten hosts' simulators and relays on one 2-core machine,
 * where each relay's figures include the others' load (its discovery sees
 * every host's agy, and all of them share two cores).
 */
async function aloneRows(sessionsPerHost: number, steps: number, idleSeconds: number): Promise<BenchRow[]> {
  const over = (met: boolean, text: string) => (met ? "" : `; ${text} over`);
  const rows: BenchRow[] = [];
  // As a relay runs by default, and with the young generation docs/fleet.md suggests for a relay's unit.
  for (const relayNodeOptions of [undefined, RELAY_NODE_OPTIONS]) {
    const r = await runFleetHosts({
      hosts: 1,
      sessionsPerHost,
      steps,
      idleSeconds,
      turns: 0,
      approvals: 0,
      maxLen: 10_000,
      bin: ensureBuiltCli(),
      ...(relayNodeOptions === undefined ? {} : { relayNodeOptions }),
    });
    const relay = r.relays[0]!;
    const how = relayNodeOptions === undefined ? "" : ` with NODE_OPTIONS=${relayNodeOptions}`;
    rows.push(
      {
        name: `one relay alone${how} with ${r.sessions} sessions (one host, nothing else running): idle CPU over ${idleSeconds} s, % of a core${over(relay.cpuPercent <= 2, `${(relay.cpuPercent - 2).toFixed(1)} points`)}`,
        sample: figure(relay.cpuPercent),
        goal: "<= 2 %",
        met: relay.cpuPercent <= 2,
      },
      {
        name: `one relay alone${how} with ${r.sessions} sessions: idle RSS, MB${over(relay.rssMb <= 150, `${(relay.rssMb - 150).toFixed(0)} MB`)}`,
        sample: figure(relay.rssMb),
        goal: "<= 150 MB",
        met: relay.rssMb <= 150,
      },
    );
  }
  return rows;
}

const suite: BenchSuite = {
  title: "fleet relay (Redis Streams)",
  async run() {
    // FLEET_ROWS=relay,memory,hosts picks groups of rows (default all).
    const wanted = new Set((process.env["FLEET_ROWS"] ?? "relay,memory,hosts").split(","));
    const rows: BenchRow[] = [];
    if (wanted.has("relay")) rows.push(await latencyRow());
    if (wanted.has("memory")) rows.push(await memoryRow());
    if (wanted.has("hosts")) rows.push(...(await hostRows()));
    return rows;
  },
};
export default suite;
