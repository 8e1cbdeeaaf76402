/**
 * What a person waits for at the command line (issue #36): whole CLI
 * processes from the built CLI (`dist/bin/agy-bridge.js`, rebuilt first when src/ is
 * newer), each run paired with `agy-bridge --help` — row, baseline, row,
 * baseline, the order alternating — so load from other processes falls on
 * both alike. The ratio is the median of the pairs' ratios, with the min and
 * max beside it; "min-max ms" is the row's own spread.
 *
 * Rows (goal in brackets):
 * - `approve --url … --help`: the help alone, none of the command's
 *   runtime [≤ 2×];
 * - `approve` / `deny` / `answer` / `interrupt` with `--url` against a
 *   simulator in this process, nothing pending [≤ 2× `--help` wall];
 * - the same with one pending gate (a permission, or a question for
 *   `answer`), made afresh before each run and checked delivered after it
 *   [≤ 2×];
 * - `screen --file` on a saved screen [≤ 1.2×];
 * - `sessions --json` with one simulator process running as agy
 *   (`sim --as-agy --headless`) [≤ 3×]; other agy processes on the machine
 *   are found too, and the row says how many servers the command listed;
 * - `approve` / `deny` / `answer` / `interrupt` through discovery (no
 *   `--url`, only `--conversation`) against that process, nothing pending
 *   [≤ 4×]; the first, unmeasured round leaves what discovery keeps
 *   (docs/discovery.md, "The discovery cache") in the run's cache directory;
 * - `watch --json --url …` on a conversation of 1,000 settled steps (the
 *   simulator's `--populate 1,1000`): from the process's start to its
 *   `history_end` line [≤ 1,000 ms], unpaired.
 *
 * Each process's exit code and output are checked, so a failure is never
 * what is measured. Each row's name carries the 1-minute load average before
 * and after it. `--quick` runs each row once (after one unmeasured run).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { conversationsOf } from "../src/discovery/conversations.js";
import { createAgyRpcClient } from "../src/rpc/client.js";
import { startSimServer, type SimServer } from "../src/sim/index.js";
import { firstLine } from "../test/support/first-line.js";
import { until } from "../test/support/until.js";
import { ensureBuiltCli } from "./built-cli.js";
import { runsFor, summarize, type BenchRow, type BenchSuite } from "./harness.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const TOKEN = "b3nchb3nchb3nchb3nchb3nchb3nch00";
const PAIRS = 7;

interface Ran {
  ms: number;
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node CLI ARGS` to its end: wall time from spawn to close, with what it printed. */
function runCli(cli: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(process.execPath, [cli, ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.once("error", reject);
    child.once("close", (code) => resolve({ ms: performance.now() - start, code, stdout, stderr }));
  });
}

interface Case {
  name: string;
  args: readonly string[];
  goal: number;
  /** Untimed, before each run of the row: e.g. make a gate wait. */
  before?: () => Promise<void>;
  /** Untimed, after each run: throws when the run did not do what the row measures. */
  check: (ran: Ran) => void | Promise<void>;
}

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

async function pairedRow(cli: string, env: NodeJS.ProcessEnv, c: Case): Promise<BenchRow> {
  const help = ["--help"];
  const rowTimes: number[] = [];
  const baseTimes: number[] = [];
  const ratios: number[] = [];
  const pairs = runsFor(PAIRS);
  // The load average beside the figures: on a shared machine it says how far they can be trusted.
  const loadBefore = (loadavg()[0] ?? 0).toFixed(2);
  // One unmeasured round first: the page cache and the JIT of this process settle.
  for (let round = 0; round < pairs + 1; round++) {
    await c.before?.();
    const rowFirst = round % 2 === 0;
    let row: Ran | undefined;
    let base: Ran | undefined;
    if (rowFirst) row = await runCli(cli, c.args, env);
    base = await runCli(cli, help, env);
    if (!rowFirst) row = await runCli(cli, c.args, env);
    if (row === undefined) throw new Error("bench: a row was not run");
    if (base.code !== 0) throw new Error(`bench: agy-bridge --help exited ${base.code}: ${base.stderr.slice(0, 300)}`);
    await c.check(row);
    if (round === 0) continue;
    rowTimes.push(row.ms);
    baseTimes.push(base.ms);
    ratios.push(row.ms / base.ms);
  }
  const sorted = [...ratios].sort((a, b) => a - b);
  const pairedRatio = { min: sorted[0] ?? Number.NaN, median: median(ratios), max: sorted.at(-1) ?? Number.NaN };
  return {
    name: `${c.name} (load ${loadBefore}, after ${(loadavg()[0] ?? 0).toFixed(2)})`,
    sample: summarize(rowTimes),
    baseline: { name: "agy-bridge --help", sample: summarize(baseTimes) },
    goal: `<= ${c.goal}x --help wall`,
    pairedRatio,
    met: pairedRatio.median <= c.goal,
    limit: c.goal,
  };
}

function expectExit(ran: Ran, code: number, what: string, pattern?: RegExp): void {
  if (ran.code !== code || (pattern !== undefined && !pattern.test(ran.stdout + ran.stderr))) {
    throw new Error(
      `bench: ${what}: expected exit ${code}${pattern === undefined ? "" : ` and ${pattern}`}, got exit ${ran.code}: ${(ran.stdout + ran.stderr).slice(0, 400)}`,
    );
  }
}

/** The answer-command rows against one in-process simulator. */
async function answerRows(cli: string, env: NodeJS.ProcessEnv, sim: SimServer): Promise<BenchRow[]> {
  const conversationId = sim.engine.activeConversationId;
  const conv = sim.engine.conversation(conversationId);
  if (conv === undefined) throw new Error("bench: the simulator has no active conversation");
  const conn = ["--url", sim.tlsUrl, "--csrf-token", TOKEN, "--conversation", conversationId, "--json"];
  const idle = async (): Promise<void> => {
    await until(() => (conv.running ? undefined : true), "the simulated turn to end", { ms: 30_000, everyMs: 10 });
  };
  const gate = (turn: string) => async () => {
    await idle();
    sim.engine.tuiPort().submitTurn(turn);
    await until(() => conv.waitingIndices()[0], `a gate after "${turn}"`, { ms: 30_000, everyMs: 10 });
  };
  const permission = gate("Run pwd");
  const question = gate("Help me start a project");
  const delivered = (what: string) => async (ran: Ran) => {
    expectExit(ran, 0, what, /"delivered"|"denied"/);
    await idle();
  };
  const cases: Case[] = [
    {
      name: "approve --url … --help",
      args: ["approve", ...conn, "--help"],
      goal: 2,
      check: (r) => expectExit(r, 0, "approve --help", /Usage: agy-bridge approve/),
    },
    {
      name: "approve --url, nothing pending",
      args: ["approve", ...conn],
      goal: 2,
      before: idle,
      check: (r) => expectExit(r, 1, "approve with nothing pending", /none_pending/),
    },
    {
      name: "deny --url, nothing pending",
      args: ["deny", ...conn],
      goal: 2,
      before: idle,
      check: (r) => expectExit(r, 1, "deny with nothing pending", /none_pending/),
    },
    {
      name: "answer --url --option 1, nothing pending",
      args: ["answer", ...conn, "--option", "1"],
      goal: 2,
      before: idle,
      check: (r) => expectExit(r, 1, "answer with nothing pending", /none_pending/),
    },
    { name: "interrupt --url, idle", args: ["interrupt", ...conn], goal: 2, before: idle, check: (r) => expectExit(r, 0, "interrupt when idle", /"idle"/) },
    {
      name: "approve --url, one pending permission",
      args: ["approve", ...conn],
      goal: 2,
      before: permission,
      check: delivered("approve of a pending permission"),
    },
    { name: "deny --url, one pending permission", args: ["deny", ...conn], goal: 2, before: permission, check: delivered("deny of a pending permission") },
    {
      name: "answer --url --option 1, one pending question",
      args: ["answer", ...conn, "--option", "1"],
      goal: 2,
      before: question,
      check: delivered("answer of a pending question"),
    },
    {
      name: "interrupt --url, one pending permission",
      args: ["interrupt", ...conn],
      goal: 2,
      before: permission,
      check: delivered("interrupt of a pending permission"),
    },
  ];
  const rows: BenchRow[] = [];
  for (const c of cases) rows.push(await pairedRow(cli, env, c));
  return rows;
}

function screenFixture(): string {
  const dir = join(ROOT, "fixtures", "screens");
  const names = readdirSync(dir)
    .filter((f) => f.endsWith(".txt"))
    .sort();
  const name = names.find((f) => f.startsWith("dialog-command-1.1")) ?? names[0];
  if (name === undefined) throw new Error(`bench: no saved screen (*.txt) in ${dir}`);
  return join(dir, name);
}

interface AgySim {
  child: ChildProcess;
  port: number;
  info: { conversationId: string; plainUrl: string; tlsUrl: string; agyPid: number };
}

/** A simulator process that discovery finds as agy, with one extra conversation of 1,000 settled steps; resolves once it has said where it listens. */
async function startAgySim(env: NodeJS.ProcessEnv): Promise<AgySim> {
  const args = [
    "--import",
    "tsx",
    join(ROOT, "src", "cli", "bin.ts"),
    "sim",
    "--as-agy",
    "--headless",
    "--csrf-token",
    TOKEN,
    "--speed",
    "0.05",
    "--populate",
    "1,1000",
  ];
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const info = JSON.parse(await firstLine(child.stdout!, "the simulator (sim --as-agy --headless)", 60_000, () => stderr.slice(0, 500))) as AgySim["info"];
  return { child, port: Number(new URL(info.plainUrl).port), info };
}

/** The simulator's conversation of at least `steps` steps (from `--populate`), asked over RPC. */
async function longConversation(agy: AgySim, steps: number): Promise<string> {
  const client = createAgyRpcClient({ baseUrl: agy.info.tlsUrl, csrfToken: TOKEN });
  try {
    const answer = await client.getAllCascadeTrajectories({});
    const found = conversationsOf(answer).find((c) => (c.stepCount ?? 0) >= steps);
    if (found === undefined) throw new Error(`bench: the simulator hosts no conversation of ${steps} steps (--populate 1,${steps})`);
    return found.conversationId;
  } finally {
    await client.close();
  }
}

/** Through discovery: the answer commands given only the conversation, nothing pending. */
async function discoveryRows(cli: string, env: NodeJS.ProcessEnv, agy: AgySim): Promise<BenchRow[]> {
  const conv = ["--conversation", agy.info.conversationId, "--json"];
  const cases: Case[] = [
    { name: "approve through discovery, nothing pending", args: ["approve", ...conv], goal: 4, check: (r) => expectExit(r, 1, "approve", /none_pending/) },
    { name: "deny through discovery, nothing pending", args: ["deny", ...conv], goal: 4, check: (r) => expectExit(r, 1, "deny", /none_pending/) },
    {
      name: "answer --option 1 through discovery, nothing pending",
      args: ["answer", ...conv, "--option", "1"],
      goal: 4,
      check: (r) => expectExit(r, 1, "answer", /none_pending/),
    },
    { name: "interrupt through discovery, idle", args: ["interrupt", ...conv], goal: 4, check: (r) => expectExit(r, 0, "interrupt", /"idle"/) },
  ];
  const rows: BenchRow[] = [];
  for (const c of cases) rows.push(await pairedRow(cli, env, c));
  return rows;
}

/** Spawns `node CLI ARGS` and resolves with the milliseconds from spawn to the first stdout line matching `until`; then stops it. */
function timeToLine(cli: string, args: readonly string[], env: NodeJS.ProcessEnv, until: RegExp): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(process.execPath, [cli, ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let at: number | undefined;
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      if (at === undefined && until.test(stdout)) {
        at = performance.now() - start;
        child.kill("SIGTERM");
      }
    });
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      if (at !== undefined) resolve(at);
      else reject(new Error(`bench: ${args[0]} exited ${code} without a line matching ${until}: ${(stdout + stderr).slice(0, 400)}`));
    });
  });
}

/** `watch --json` on a 1,000-step conversation: process start → `history_end`. */
async function watchRow(cli: string, env: NodeJS.ProcessEnv, agy: AgySim): Promise<BenchRow> {
  const conversationId = await longConversation(agy, 1000);
  const args = ["watch", "--url", agy.info.tlsUrl, "--csrf-token", TOKEN, "--conversation", conversationId, "--json"];
  const times: number[] = [];
  const runs = runsFor(PAIRS);
  for (let i = 0; i < runs + 1; i++) {
    const ms = await timeToLine(cli, args, env, /"type":"history_end"/);
    if (i > 0) times.push(ms);
  }
  const sample = summarize(times);
  return {
    name: `watch --json --url, 1,000-step conversation: start → history_end (load ${(loadavg()[0] ?? 0).toFixed(2)})`,
    sample,
    goal: "<= 1000 ms",
    met: sample.medianMs <= 1000,
  };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  child.kill("SIGTERM");
  await closed;
}

const suite: BenchSuite = {
  title: "CLI start-up: whole processes of the built CLI against `agy-bridge --help` in the same run (wall; ratio = median of paired ratios (min-max))",
  async run() {
    const cli = ensureBuiltCli();
    const dir = mkdtempSync(join(tmpdir(), "agy-bridge-cli-bench-"));
    // A private state and config directory: the answers' audit records land here.
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      XDG_STATE_HOME: join(dir, "state"),
      XDG_CONFIG_HOME: join(dir, "config"),
      AGY_BRIDGE_CACHE_DIR: join(dir, "cache"),
    };
    const rows: BenchRow[] = [];
    try {
      const sim = await startSimServer({ speed: 0.05, csrfToken: TOKEN });
      try {
        rows.push(...(await answerRows(cli, env, sim)));
      } finally {
        await sim.close();
      }

      const screen = screenFixture();
      rows.push(
        await pairedRow(cli, env, {
          name: "screen --file SAVED --json",
          args: ["screen", "--file", screen, "--json"],
          goal: 1.2,
          check: (r) => expectExit(r, 0, "screen --file", /"state"/),
        }),
      );

      const agy = await startAgySim(env);
      try {
        let listed = 0;
        const sessions: Case = {
          name: "sessions --json, one simulator started (N servers listed)",
          args: ["sessions", "--json"],
          goal: 3,
          check: (r) => {
            expectExit(r, 0, "sessions --json");
            const servers = JSON.parse(r.stdout) as Array<{ listeners?: Array<{ port?: number }> }>;
            if (!servers.some((s) => s.listeners?.some((l) => l.port === agy.port) === true)) {
              throw new Error(`bench: sessions --json did not list the simulator (port ${agy.port}): ${r.stdout.slice(0, 300)}`);
            }
            listed = servers.length;
          },
        };
        const row = await pairedRow(cli, env, sessions);
        rows.push({ ...row, name: row.name.replace("N servers", `${listed} server${listed === 1 ? "" : "s"}`) });
        rows.push(...(await discoveryRows(cli, env, agy)));
        rows.push(await watchRow(cli, env, agy));
      } finally {
        await stop(agy.child);
      }
      return rows;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

export default suite;
