/**
 * A session costs kilobytes, one serve supervises a hundred (issue 23;
 * docs/scale.md). Rows:
 *
 * - heap retained by one tracker after a 10,000-step capture-built
 *   conversation, after GC (goal ≤ 2 MB), against holding the parsed steps;
 * - heap retained by one idle `AgySession` following it (goal ≤ 3 MB),
 *   against the same session on a 10-step conversation;
 * - one `serve` following 100 conversations of 1,000 steps hosted by one
 *   simulator process, idle: RSS (goal ≤ 250 MB) and CPU over 30 s (goal
 *   ≤ 5 % of a core), measured from /proc;
 * - the same with 10 turns running at once: event → SSE subscriber p99
 *   (goal ≤ 50 ms);
 * - reconcile after a reconnect with 3 changed steps at 10,000 steps of
 *   history against 10 (goal ≤ 1.5×, flat).
 *
 * Heap rows run in child processes with `--expose-gc` (bench/heap-probe.ts),
 * the median of three. Memory rows print megabytes in the "median ms" and
 * "p90 ms" columns (the harness has no other); the case name says so.
 * `SCALE_CONVERSATIONS`, `SCALE_STEPS`, `SCALE_IDLE_S` shrink the serve rows
 * for a quick look; serve runs from the built CLI (rebuilt when src/ is
 * newer, bench/built-cli.ts), `SCALE_SERVE_BIN=…` names another build and
 * `SCALE_SERVE_SOURCE=1` runs the sources through tsx instead;
 * `SCALE_ROWS=heap,reconcile,serve` picks groups of rows.
 */
import { execFile } from "node:child_process";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createTrajectoryTracker } from "../src/mapper/index.js";
import { STEP_STATUS } from "../src/protocol/wire-names.js";
import { createAgyRpcClient } from "../src/rpc/index.js";
import { pageStart, StepFrontier } from "../src/session/step-frontier.js";
import { startSimServer } from "../src/sim/index.js";
import type { WireStep } from "../src/sim/engine/step-factory.js";
import type { BenchRow, BenchSuite, Sample } from "./harness.js";
import { ensureBuiltCli } from "./built-cli.js";
import { runServeFleet } from "./serve-fleet.js";

const here = dirname(fileURLToPath(import.meta.url));
const MB = 1024 * 1024;

/** A "sample" of one figure (the harness prints medians and p90s; here they are the same number). */
const figure = (value: number, runs = 1): Sample => ({ medianMs: value, p90Ms: value, runs });

function percentile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

/** Retained bytes as `heap-probe.ts` reports them, from a fresh child process. */
async function probe(what: string, count: number): Promise<number> {
  const { stdout } = await promisify(execFile)(process.execPath, ["--expose-gc", "--import", "tsx", join(here, "heap-probe.ts"), what, String(count)], {
    cwd: join(here, ".."),
    maxBuffer: 1 << 20,
  });
  const line = stdout.trim().split("\n").at(-1) ?? "";
  return (JSON.parse(line) as { retained: number }).retained;
}

async function medianOf(times: number, run: () => Promise<number>): Promise<{ median: number; all: number[] }> {
  const all: number[] = [];
  for (let i = 0; i < times; i++) all.push(await run());
  return { median: percentile(all, 0.5), all };
}

const mb = (bytes: number) => bytes / MB;
const shown = (values: number[]) => values.map((v) => mb(v).toFixed(2)).join(", ");

async function heapRows(): Promise<BenchRow[]> {
  const tracker = await medianOf(3, () => probe("tracker", 10_000));
  const steps = await probe("baseline", 10_000);
  const session = await medianOf(3, () => probe("session", 10_000));
  const small = await probe("session", 10);
  const trackerMet = tracker.median <= 2 * MB;
  const sessionMet = session.median <= 3 * MB;
  return [
    {
      name: `heap retained by one tracker, 10,000 capture-built steps, MB (runs: ${shown(tracker.all)})${trackerMet ? "" : `; ${mb(tracker.median - 2 * MB).toFixed(2)} MB over`}`,
      sample: figure(mb(tracker.median), 3),
      baseline: { name: "the parsed steps themselves, MB", sample: figure(mb(steps)) },
      goal: "<= 2 MB",
      met: trackerMet,
    },
    {
      name: `heap retained by one idle AgySession on it, MB (runs: ${shown(session.all)})${sessionMet ? "" : `; ${mb(session.median - 3 * MB).toFixed(2)} MB over`}`,
      sample: figure(mb(session.median), 3),
      baseline: { name: "the same on 10 steps, MB", sample: figure(mb(small)) },
      goal: "<= 3 MB",
      met: sessionMet,
    },
  ];
}

/** A settled tool step as the simulator writes it (the 10-step history may have none of its own). */
async function toolStep(): Promise<WireStep> {
  const sim = await startSimServer({ speed: 0, populate: { conversations: 1, steps: 60 } });
  try {
    const step = sim.engine
      .conversation(sim.populatedIds[0]!)!
      .steps.find((s) => s.type === "CORTEX_STEP_TYPE_LIST_DIRECTORY" || s.type === "CORTEX_STEP_TYPE_VIEW_FILE");
    if (step === undefined) throw new Error("bench: the simulator's template has no tool step to copy");
    return structuredClone(step);
  } finally {
    await sim.close();
  }
}

/**
 * The reader's reconcile (markReconnected, a `stepOffset` page from the
 * frontier, apply) after 3 steps changed while the connection was down. One
 * tracker follows the whole run: each round, 3 new tool steps are seen
 * RUNNING, then finish on the server while the reader is away.
 */
async function reconcileSample(steps: number, runs: number): Promise<Sample> {
  const sim = await startSimServer({ speed: 0, populate: { conversations: 1, steps } });
  const client = createAgyRpcClient({ baseUrl: sim.plainUrl });
  try {
    const id = sim.populatedIds[0]!;
    const conversation = sim.engine.conversation(id)!;
    const tool = await toolStep();
    const tracker = createTrajectoryTracker({ conversationId: id });
    const frontier = new StepFrontier();
    const first = await client.getCascadeTrajectorySteps({ conversationId: id });
    frontier.observePage(first.steps, 0);
    tracker.applySnapshot({ steps: first.steps });
    const times: number[] = [];
    for (let r = 0; r < runs + 3; r++) {
      // Three new steps, seen running before the connection is lost...
      const at = conversation.steps.length;
      const fresh = [0, 1, 2].map((k) => {
        const step = structuredClone(tool);
        step.status = STEP_STATUS.RUNNING;
        (step.metadata.sourceTrajectoryStepInfo as { stepIndex?: number }).stepIndex = at + k;
        conversation.steps.push(step);
        return structuredClone(step);
      });
      frontier.observePage(fresh as never, at);
      tracker.applySnapshot({ steps: fresh, stepOffset: at });
      // ...finish while it is down.
      for (let k = 0; k < 3; k++) conversation.steps[at + k]!.status = STEP_STATUS.DONE;
      await new Promise((resolve) => setTimeout(resolve, 5));
      const start = performance.now();
      tracker.markReconnected();
      const from = frontier.frontier;
      const page = await client.getCascadeTrajectorySteps({ conversationId: id, stepOffset: from });
      const pageAt = pageStart(page.steps, from);
      frontier.observePage(page.steps, pageAt);
      const events = tracker.applySnapshot({ steps: page.steps, stepOffset: pageAt });
      const elapsed = performance.now() - start;
      if (page.steps.length !== 3 || events.length === 0)
        throw new Error(`bench: the reconcile read ${page.steps.length} steps and gave ${events.length} events, not the 3 changed steps`);
      if (r >= 3) times.push(elapsed);
    }
    return { medianMs: percentile(times, 0.5), p90Ms: percentile(times, 0.9), runs };
  } finally {
    await client.close();
    await sim.close();
  }
}

async function reconcileRows(): Promise<BenchRow[]> {
  const small = await reconcileSample(10, 30);
  const large = await reconcileSample(10_000, 30);
  return [
    {
      name: "reconcile after a reconnect, 3 changed steps, 10,000-step history",
      sample: large,
      baseline: { name: "the same, 10-step history", sample: small },
      goal: "<= 1.5x (flat)",
      met: large.medianMs <= 1.5 * small.medianMs,
    },
  ];
}

async function serveRows(): Promise<BenchRow[]> {
  const conversations = Number(process.env.SCALE_CONVERSATIONS ?? 100);
  const steps = Number(process.env.SCALE_STEPS ?? 1000);
  const idleSeconds = Number(process.env.SCALE_IDLE_S ?? 30);
  // The built CLI, as users run it, unless SCALE_SERVE_SOURCE=1 asks for the sources through tsx (whose loader costs memory).
  const builtBin = process.env.SCALE_SERVE_SOURCE === "1" ? undefined : (process.env.SCALE_SERVE_BIN ?? ensureBuiltCli());
  const fleet = await runServeFleet({ conversations, steps, idleSeconds, turns: 10, ...(builtBin === undefined ? {} : { builtBin }) });
  const p50 = percentile(fleet.latenciesMs, 0.5);
  const p90 = percentile(fleet.latenciesMs, 0.9);
  const p99 = percentile(fleet.latenciesMs, 0.99);
  const what = `serve${builtBin === undefined ? " (from source, tsx)" : " (built JS)"} following ${fleet.followed} conversations of ${steps} steps (one simulator)`;
  const rssMet = fleet.idleRssMb <= 250;
  const cpuMet = fleet.idleCpuPercent <= 5;
  const latencyMet = p99 <= 50;
  return [
    {
      name: `${what}, idle RSS, MB${rssMet ? "" : `; ${(fleet.idleRssMb - 250).toFixed(0)} MB over`}`,
      sample: figure(fleet.idleRssMb),
      goal: "<= 250 MB",
      met: rssMet,
    },
    {
      name: `${what}, idle CPU over ${fleet.idleSeconds} s, % of a core${cpuMet ? "" : `; ${(fleet.idleCpuPercent - 5).toFixed(1)} points over`}`,
      sample: figure(fleet.idleCpuPercent),
      goal: "<= 5 %",
      met: cpuMet,
    },
    {
      name: `${fleet.turns} turns at once: GENERATING frame → SSE message_delta, ms (p99 ${p99.toFixed(1)}; ${fleet.latenciesMs.length} deltas; serve holds ${fleet.fds} fds)${latencyMet ? "" : `; p99 ${(p99 - 50).toFixed(0)} ms over`}`,
      sample: { medianMs: p50, p90Ms: p90, runs: fleet.latenciesMs.length },
      goal: "p99 <= 50 ms",
      met: latencyMet,
    },
  ];
}

const suite: BenchSuite = {
  title: "scale: memory per session, one serve for a hundred (issue 23)",
  async run() {
    // SCALE_ROWS=heap,reconcile,serve picks groups of rows (default all).
    const wanted = new Set((process.env.SCALE_ROWS ?? "heap,reconcile,serve").split(","));
    const rows: BenchRow[] = [];
    if (wanted.has("heap")) rows.push(...(await heapRows()));
    if (wanted.has("reconcile")) rows.push(...(await reconcileRows()));
    if (wanted.has("serve")) rows.push(...(await serveRows()));
    return rows;
  },
};

export default suite;
