/**
 * Discovery among 20 candidate listeners, all real loopback servers: 4
 * simulated agy servers (TLS + plain each, 8 listeners), 4 slow agy-like
 * servers (2 TLS, 2 plain; every answer 100 ms late), 4 plain HTTP services
 * that are not agy (404), and 4 dead ports. Ten fake agy pids hold two
 * listeners each in a hand-made /proc tree, so the whole pipeline runs:
 * process scan, fd ↔ net/tcp attribution, handshakes, Heartbeat and
 * GetAllCascadeTrajectories in parallel, then the owner of one conversation.
 * The servers run in their own process, as agy's do.
 * Goal (docs/architecture.md): ≤ 300 ms for the whole discovery, p50 and max.
 * Baseline: the older clients' way, measured here — one port after another,
 * HTTPS Heartbeat then GetConversationMetadata (2 s deadline each).
 */
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { findServer } from "../src/discovery/index.js";
import { createAgyRpcClient } from "../src/rpc/client.js";
import { createFakeProc, type FakeListener, type FakeProcess } from "../test/discovery/support/fake-proc.js";
import type { BenchRow, BenchSuite, Sample } from "./harness.js";

const RUNS = 25;
const WARMUP = 3;
const SLOW_MS = 100;
const GOAL_MS = 300;
const here = dirname(fileURLToPath(import.meta.url));

interface Listeners {
  sims: Array<[number, number]>;
  slowPorts: number[];
  notAgyPorts: number[];
  deadPorts: number[];
  ownerTlsPort: number;
  conversationId: string;
}

/** Starts `discovery-servers.ts` in its own node process; closing its stdin stops it. */
async function startServers(): Promise<{ listeners: Listeners; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ["--import", "tsx", join(here, "discovery-servers.ts"), String(SLOW_MS)], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  let out = "";
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      if (out.includes("\n")) resolve(out.split("\n")[0] as string);
    });
    child.once("exit", (code) => reject(new Error(`the bench servers exited ${code} before listening`)));
  });
  return {
    listeners: JSON.parse(line) as Listeners,
    async stop() {
      child.stdin.end();
      await exited;
    },
  };
}

function summarize(times: number[]): { p50: Sample; max: Sample } {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  const max = sorted[sorted.length - 1] ?? Number.NaN;
  return { p50: { medianMs: at(0.5), p90Ms: at(0.9), runs: times.length }, max: { medianMs: max, p90Ms: max, runs: times.length } };
}

async function timed(fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  return times;
}

const suite: BenchSuite = {
  title: "Discovery: 20 candidate listeners (TLS, plain, slow, not-agy, dead)",
  async run(): Promise<BenchRow[]> {
    const servers = await startServers();
    const { sims, slowPorts, notAgyPorts, deadPorts, conversationId } = servers.listeners;
    const ports = [...sims.flat(), ...slowPorts, ...notAgyPorts, ...deadPorts];
    const listeners: FakeListener[] = ports.map((port, i) => ({ port, inode: String(50_000 + i) }));
    const processes: FakeProcess[] = [];
    for (let i = 0; i < ports.length; i += 2) {
      processes.push({ pid: 90_000 + i, exe: "/opt/bench/bin/agy", argv: ["/opt/bench/bin/agy"], fds: [String(50_000 + i), String(50_001 + i)] });
    }
    const fake = createFakeProc(processes, listeners);
    try {
      const options = { procRoot: fake.root, tmuxServers: [], logPath: false as const };
      const check = await findServer({ conversationId }, options);
      if (check.pid !== 90_004) throw new Error(`discovery chose pid ${check.pid}, not the owner 90004`);
      const ours = summarize(await timed(() => findServer({ conversationId }, options)));

      const sequential = async () => {
        for (const port of [...ports].sort((a, b) => a - b)) {
          const probe = createAgyRpcClient({ baseUrl: `https://127.0.0.1:${port}` });
          try {
            await probe.heartbeat({}, { timeoutMs: 2_000 });
            const answer = await probe.getConversationMetadata({ conversationId }, { timeoutMs: 2_000 });
            if (answer.metadata?.rootConversationId === conversationId) return port;
          } catch {
            // Not the RPC port, or not the owner: next.
          } finally {
            await probe.close();
          }
        }
        return undefined;
      };
      const baseline = summarize(await timed(sequential));
      const base = { name: "sequential HTTPS probes", sample: baseline.p50 };
      return [
        {
          name: "findServer by conversation, p50 (20 listeners)",
          sample: ours.p50,
          baseline: base,
          goal: `<= ${GOAL_MS} ms`,
          met: ours.p50.medianMs <= GOAL_MS,
        },
        {
          name: `findServer by conversation, max of ${RUNS}`,
          sample: ours.max,
          baseline: { name: "sequential, max", sample: baseline.max },
          goal: `<= ${GOAL_MS} ms`,
          met: ours.max.medianMs <= GOAL_MS,
        },
      ];
    } finally {
      fake.remove();
      await servers.stop();
    }
  },
};

export default suite;
