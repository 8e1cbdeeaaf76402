/**
 * `agy-bridge demo` as a person runs it: a subprocess that starts the
 * simulated agy (launcher, listeners, token) in its own private tmux server,
 * finds it through discovery, types turns through tmux, answers gates over
 * RPC — and leaves no process and no socket behind.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { MapperEventSchema, type MapperEvent } from "../../src/mapper/index.js";
import { runMain } from "../support/cli-io.js";
import { alive } from "../support/proc-tree.js";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = resolve(ROOT, "src/cli/bin.ts");

type DemoRecord = { demo: string } & Record<string, unknown>;

interface DemoRun {
  code: number | null;
  stdout: string;
  stderr: string;
  events: MapperEvent[];
  records: DemoRecord[];
  /** The CSRF token the launcher was started with, read from its /proc cmdline while it ran. */
  token: string | undefined;
  /** Every process found in the demo's tmux pane while it ran. */
  pids: number[];
}

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Pids whose environment says they run in a pane of the tmux server at `socketPath`. */
function panePids(socketPath: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(name)) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${name}/environ`, "utf8");
    } catch {
      continue;
    }
    if (environ.split("\0").some((kv) => kv.startsWith(`TMUX=${socketPath},`))) out.push(Number(name));
  }
  return out;
}

/**
 * Runs the demo with `--json`. `onRecord` may act on a step record as it
 * arrives (e.g. interrupt the run).
 */
function runDemo(args: string[], onRecord: (record: DemoRecord, child: ReturnType<typeof spawn>) => void = () => undefined): Promise<DemoRun> {
  const cache = mkdtempSync(join(tmpdir(), "agyb-demo-"));
  dirs.push(cache);
  const env: NodeJS.ProcessEnv = { ...process.env, AGY_BRIDGE_CACHE_DIR: cache };
  delete env.TMUX;
  const child = spawn(process.execPath, ["--import", "tsx", BIN, "demo", "--json", ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  const run: DemoRun = { code: null, stdout: "", stderr: "", events: [], records: [], token: undefined, pids: [] };
  const pids = new Set<number>();
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => (run.stderr += chunk));
  const lines = createInterface({ input: child.stdout });
  lines.on("line", (line) => {
    run.stdout += `${line}\n`;
    const value = JSON.parse(line) as Record<string, unknown>;
    if (typeof value.demo !== "string") {
      run.events.push(MapperEventSchema.parse(value));
      return;
    }
    const record = value as DemoRecord;
    run.records.push(record);
    if (record.demo === "discovered" && typeof record.pid === "number") {
      // What discovery itself reads: the launcher's first arguments are `--csrf_token T`.
      const argv = readFileSync(`/proc/${record.pid}/cmdline`, "utf8").split("\0");
      const at = argv.indexOf("--csrf_token");
      if (at >= 0) run.token = argv[at + 1];
    }
    if (record.demo === "tmux" || record.demo === "discovered" || record.demo === "turn") {
      const socketPath = run.records.find((r) => r.demo === "tmux")?.socketPath as string;
      for (const pid of panePids(socketPath)) pids.add(pid);
    }
    onRecord(record, child);
  });
  return new Promise((resolveRun) => {
    child.once("close", (code) => {
      run.code = code;
      run.pids = [...pids];
      resolveRun(run);
    });
  });
}

function recordOf(run: DemoRun, demo: string): DemoRecord {
  const found = run.records.find((r) => r.demo === demo);
  if (found === undefined) throw new Error(`no "${demo}" record; stderr: ${run.stderr}; records: ${JSON.stringify(run.records.map((r) => r.demo))}`);
  return found;
}

function expectCleanedUp(run: DemoRun): void {
  const tmux = recordOf(run, "tmux");
  const socketPath = tmux.socketPath as string;
  expect(socketPath).toContain(tmux.socketName as string);
  expect(existsSync(socketPath)).toBe(false);
  // The pane's node, the bin/agy launcher, the server and the launcher's child were all seen, and all are gone.
  expect(run.pids).toContain(tmux.panePid);
  const found = run.records.find((r) => r.demo === "discovered");
  if (found !== undefined) expect(run.pids).toContain(found.pid);
  expect(run.pids.filter(alive)).toEqual([]);
  expect(panePids(socketPath)).toEqual([]);
  expect(recordOf(run, "cleanup")).toMatchObject({ leftover: [], socketRemoved: true });
}

describe("agy-bridge demo", () => {
  it("supervises the simulated agy through discovery, tmux and RPC, then leaves nothing running", async () => {
    const run = await runDemo([]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);

    const found = recordOf(run, "discovered");
    expect(found.how).toMatch(/the agy in tmux pane %\d+ on -L agy-bridge-demo-/);
    expect(found.csrfTokenPresent).toBe(true);
    expect(run.token).toMatch(/.{8,}/);
    expect(run.stdout + run.stderr).not.toContain(run.token as string);

    const users = run.events.filter((e) => e.type === "user_message").map((e) => e.text);
    expect(users).toEqual(["Say hello in one short sentence.", "Run pwd", "Help me start a project"]);
    expect(run.records.filter((r) => r.demo === "turn").map((r) => r.result)).toEqual(["delivered", "delivered", "delivered"]);

    const deltas = run.events.filter((e) => e.type === "message_delta");
    const hello = run.events.find((e) => e.type === "message" && e.text.startsWith("Hello"));
    expect(
      hello?.type === "message" &&
        deltas
          .filter((d) => d.messageId === hello.messageId)
          .map((d) => d.text)
          .join(""),
    ).toBe(hello?.type === "message" ? hello.text : "no message");

    const requested = run.events.filter((e) => e.type === "interaction_requested");
    expect(requested.map((e) => e.request.kind)).toEqual(["permission", "question"]);
    const resolved = run.events.filter((e) => e.type === "interaction_resolved");
    expect(resolved.map((e) => [e.interactionId, e.outcome])).toEqual(
      requested.map((e) => [e.interactionId, e.request.kind === "permission" ? "approved" : "answered"]),
    );
    const answers = run.records.filter((r) => r.demo === "answer");
    expect(answers.map((r) => [r.interactionId, r.call, r.result])).toEqual([
      [requested[0]?.interactionId, "approve", "delivered"],
      [requested[1]?.interactionId, "answer", "delivered"],
    ]);
    // agy's own dialogs are closed with Escape only: never digits, never Enter (spike-notes §13).
    expect(run.records.filter((r) => r.demo === "prompt_keys").map((r) => r.keys)).toEqual(["Escape", "Escape"]);
    const asked = run.events.find((e) => e.type === "function_call_output" && e.name === "ask_question");
    expect(asked?.type === "function_call_output" && JSON.parse(asked.output)).toMatchObject({ questions: [{ selectedOptionIds: ["1"] }] });
    expect(run.events.find((e) => e.type === "function_call_output" && e.name === "run_command")).toMatchObject({
      isError: false,
      output: "/home/sim/project\n",
    });

    const screen = (recordOf(run, "screen").lines as string[]).join("\n");
    expect(screen).toContain("> Help me start a project");
    expect(screen).not.toContain(run.token as string);
    expect(run.records.at(-1)?.demo).toBe("done");
    expectCleanedUp(run);
  }, 90_000);

  it("stops on SIGINT with one sentence and exit 130, still ending every process it started", async () => {
    const run = await runDemo(["--turn", "Run pwd"], (record, child) => {
      // Twice, as a terminal's Ctrl-C arrives under `npm run demo`: once from the terminal, once relayed by tsx.
      if (record.demo === "discovered") {
        child.kill("SIGINT");
        child.kill("SIGINT");
      }
    });
    expect(run.code).toBe(130);
    expect(run.stderr).toBe("agy-bridge demo: the demo was interrupted.\n");
    expect(recordOf(run, "failed").message).toBe("the demo was interrupted");
    expectCleanedUp(run);
  }, 90_000);

  it("fails with one sentence and exit 1 when a step runs out of time, and cleans up", async () => {
    const run = await runDemo(["--timeout", "1"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^agy-bridge demo: (discovery did not find the simulator|turn 1 \(.*\) did not finish) [^\n]*\n$/);
    expectCleanedUp(run);
  }, 90_000);

  it("refuses an unknown option with a one-line reason and exit 2, starting nothing", async () => {
    const { code, stdout, stderr } = await runMain(["demo", "--bogus"]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toBe("agy-bridge demo: unknown option --bogus; run `agy-bridge demo --help`\n");
  });
});
