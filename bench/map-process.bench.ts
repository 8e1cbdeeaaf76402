/**
 * `agy-bridge map` as a whole process: the built CLI (`dist/bin/agy-bridge.js`)
 * mapping a 10,000-step `GetCascadeTrajectorySteps` answer built from the
 * agy 1.0.10 captures (the same way as rpc-snapshot.bench.ts), against a bare
 * Node process that `JSON.parse`s the same file and writes one line per step.
 * Goal (issue 36): <= 1.3x, the median of 9 paired runs. Whole processes, so
 * start-up, module loading, reading, validation, mapping, serialising and
 * writing all count.
 *
 * Each round runs both processes (order alternating) and takes the ratio of
 * that pair, so load from other processes on a shared machine falls on both
 * sides of a ratio alike; the row shows the median, min and max of the 9
 * pairs' ratios, and the load average before and after. `--quick` runs one
 * pair. dist/ is rebuilt first when any file under src/ is newer than it.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { ratio, runsFor, summarize, type BenchRow, type BenchSuite } from "./harness.js";
import { loadNote, pairedRatio } from "./paired-ratio.js";
import { buildCaptureSnapshot } from "./capture-snapshot.js";
import { ensureBuiltCli } from "./built-cli.js";

const STEP_COUNT = 10_000;
const ROUNDS = runsFor(9);
const GOAL = 1.3;

const BASELINE_SCRIPT = `import { readFileSync } from "node:fs";
const doc = JSON.parse(readFileSync(process.argv[2], "utf8"));
let out = "";
for (const [i, s] of doc.steps.entries()) out += JSON.stringify({ stepIndex: i, type: s.type, status: s.status }) + "\\n";
process.stdout.write(out);
`;

function buildSnapshot(): string {
  return buildCaptureSnapshot(STEP_COUNT);
}

/**
 * Runs one process to completion; resolves with its wall time and, when
 * `count` is set, how many lines it wrote. Timed runs write to /dev/null, so
 * the time is the process's own, not this reader's.
 */
function timeProcess(args: readonly string[], count: boolean): Promise<{ ms: number; lines: number }> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(process.execPath, args, { stdio: ["ignore", count ? "pipe" : "ignore", "pipe"] });
    let lines = 0;
    let stderr = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) lines++;
    });
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.once("error", reject);
    child.once("close", (code) => {
      const ms = performance.now() - start;
      if (code !== 0) reject(new Error(`${args.join(" ")} exited ${code}: ${stderr.slice(0, 500)}`));
      else resolve({ ms, lines });
    });
  });
}

const suite: BenchSuite = {
  title: `agy-bridge map as a process (${STEP_COUNT} steps, ${ROUNDS} paired runs)`,
  async run() {
    const cliBin = ensureBuiltCli();
    const dir = mkdtempSync(join(tmpdir(), "agy-bridge-map-bench-"));
    try {
      const snapshot = join(dir, "snapshot.json");
      const baselineScript = join(dir, "baseline.mjs");
      const text = buildSnapshot();
      writeFileSync(snapshot, text);
      writeFileSync(baselineScript, BASELINE_SCRIPT);
      const megabytes = (Buffer.byteLength(text) / 1024 / 1024).toFixed(1);
      const cases: Array<{ name: string; args: string[]; times: number[] }> = [
        { name: `node: JSON.parse ${megabytes} MB + one line per step`, args: [baselineScript, snapshot], times: [] },
        { name: "node dist/bin/agy-bridge.js map FILE", args: [cliBin, "map", snapshot], times: [] },
      ];
      // One unmeasured run each, read back to check both really did the work.
      for (const c of cases) {
        const { lines } = await timeProcess(c.args, true);
        if (lines < STEP_COUNT) throw new Error(`${c.name} wrote ${lines} lines for ${STEP_COUNT} steps`);
      }
      const loadBefore = loadNote();
      for (let round = 0; round < ROUNDS; round++) {
        for (let k = 0; k < cases.length; k++) {
          const c = cases[(k + round) % cases.length];
          if (c === undefined) continue;
          c.times.push((await timeProcess(c.args, false)).ms);
        }
      }
      const [base, map] = cases;
      if (base === undefined || map === undefined) throw new Error("a case was not measured");
      const row: BenchRow = {
        name: `${map.name} (${loadBefore}, after ${loadNote()})`,
        sample: summarize(map.times),
        baseline: { name: base.name, sample: summarize(base.times) },
        goal: `<= ${GOAL}x node JSON.parse process (median pair)`,
        pairedRatio: pairedRatio(map.times, base.times),
      };
      return [{ ...row, met: (ratio(row) ?? Infinity) <= GOAL, limit: GOAL }];
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

export default suite;
