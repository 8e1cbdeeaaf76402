/**
 * Mapper benchmarks:
 * - snapshot ingestion of a 10,000-step trajectory (bytes → events) against
 *   JSON.parse of the same bytes (goal, issue 36: ≤ 1.3×, the median of
 *   paired runs, shown with the min and max pair and the load average). The steps are
 *   synthetic turns of user, planner, tool, planner, all settled, with no
 *   WAITING step; rpc-snapshot.bench.ts measures the same goal on a snapshot
 *   built from real captures, which has 1,111;
 * - a ~100 KB GENERATING message updated 1,000 times on the stream: frames
 *   901–1000 against frames 1–100, and frames behind a 10,000-step history
 *   against the same frames on an empty tracker (goal: cost per frame follows
 *   the frame, not the history, ratio ≈ 1).
 */
import { performance } from "node:perf_hooks";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { createTrajectoryTracker } from "../src/mapper/index.js";
import type { StreamUpdate } from "../src/protocol/wire-schemas.js";
import { runsFor, summarize, type BenchRow, type BenchSuite, type Sample } from "./harness.js";
import { loadNote, pairedRatio } from "./paired-ratio.js";

const CID = "bench-conversation";
const TID = "bench-trajectory";
const SIGNATURE = "x".repeat(1500);
const info = (stepIndex: number) => ({ trajectoryId: TID, stepIndex, cascadeId: CID });
const transitions = (...s: string[]) => ({
  statusTransitions: s.map((updatedStatus) => ({ updatedStatus: `CORTEX_STEP_STATUS_${updatedStatus}`, timestamp: "2026-07-14T09:12:01.104233Z" })),
});

/** A plausible poll-projection step for position i (turns of user, planner, tool, planner). */
function step(i: number): Record<string, unknown> {
  const meta = { createdAt: "2026-07-14T09:12:01.104233Z", executionId: `exec-${Math.floor(i / 4)}`, sourceTrajectoryStepInfo: info(i) };
  switch (i % 4) {
    case 0:
      return {
        type: "CORTEX_STEP_TYPE_USER_INPUT",
        status: "CORTEX_STEP_STATUS_DONE",
        metadata: { ...meta, sourceTrajectoryStepInfo: { trajectoryId: TID, cascadeId: CID }, internalMetadata: transitions("DONE") },
        userInput: {
          items: [{ text: `Request ${i}: list the files.` }],
          userResponse: `Request ${i}: list the files.`,
          userConfig: { plannerConfig: { planModel: "MODEL_PLACEHOLDER_M20" } },
        },
      };
    case 1:
      return {
        type: "CORTEX_STEP_TYPE_PLANNER_RESPONSE",
        status: "CORTEX_STEP_STATUS_DONE",
        metadata: {
          ...meta,
          modelUsage: { model: "MODEL_PLACEHOLDER_M20", inputTokens: "1200", outputTokens: "300", cacheReadTokens: "9000" },
          internalMetadata: transitions("GENERATING", "DONE"),
        },
        plannerResponse: {
          messageId: `bot-${i}`,
          thinkingSignature: SIGNATURE,
          toolCalls: [{ id: "abcd1234", name: "run_command", argumentsJson: '{"CommandLine":"ls -la","Cwd":"/home/dev"}', thinkingSignature: SIGNATURE }],
        },
      };
    case 2:
      return {
        type: "CORTEX_STEP_TYPE_RUN_COMMAND",
        status: "CORTEX_STEP_STATUS_DONE",
        metadata: {
          ...meta,
          toolCall: {
            id: "abcd1234",
            name: "run_command",
            argumentsJson: '{"CommandLine":"ls -la","Cwd":"/home/dev","toolAction":"Listing","toolSummary":"ls"}',
            thinkingSignature: SIGNATURE,
          },
          argumentsOrder: ["CommandLine", "Cwd", "toolAction", "toolSummary"],
          toolAction: "Listing",
          toolSummary: "ls",
          internalMetadata: transitions("PENDING", "RUNNING", "DONE"),
        },
        runCommand: { commandLine: "ls -la", cwd: "/home/dev", exitCode: 0, combinedOutput: { full: "total 8\r\ndrwxr-xr-x 2 dev dev 4096 .\r\n".repeat(4) } },
      };
    default:
      return {
        type: "CORTEX_STEP_TYPE_PLANNER_RESPONSE",
        status: "CORTEX_STEP_STATUS_DONE",
        metadata: {
          ...meta,
          modelUsage: { model: "MODEL_PLACEHOLDER_M20", inputTokens: "1500", outputTokens: "120" },
          internalMetadata: transitions("GENERATING", "DONE"),
        },
        plannerResponse: {
          response: `Here are the files of turn ${i}.`,
          modifiedResponse: `Here are the files of turn ${i}.`,
          messageId: `bot-${i}`,
          thinkingSignature: SIGNATURE,
        },
      };
  }
}

const FRAMES = 1000;
const GROWTH = 10;
const BASE = 90_000;
const TEXT = "lorem ipsum dolor sit amet, ".repeat(Math.ceil((BASE + FRAMES * GROWTH) / 28));
const STREAM_INDEX = 10_001;

/** The bytes of stream frame n: the whole step re-sent with a longer text, as agy does. */
function frameText(n: number): string {
  const step = {
    type: "CORTEX_STEP_TYPE_PLANNER_RESPONSE",
    status: "CORTEX_STEP_STATUS_GENERATING",
    metadata: { sourceTrajectoryStepInfo: info(STREAM_INDEX) },
    plannerResponse: { modifiedResponse: "@TEXT@" },
  };
  const frame = { update: { conversationId: CID, mainTrajectoryUpdate: { stepsUpdate: { indices: [STREAM_INDEX], steps: [step] } } } };
  const [head, tail] = JSON.stringify(frame).split("@TEXT@") as [string, string];
  // TEXT needs no JSON escaping, so concatenation gives valid JSON without copying here.
  return head + TEXT.slice(0, BASE + n * GROWTH) + tail;
}

const applyFrame = (tracker: ReturnType<typeof createTrajectoryTracker>, n: number) =>
  tracker.applyStreamUpdate((JSON.parse(frameText(n)) as { update: StreamUpdate }).update);

// Collect the priming garbage before each timed window, so a window measures
// its own frames and not the collection of a 10,000-step snapshot's leftovers.
setFlagsFromString("--expose-gc");
const collect = runInNewContext("gc") as () => void;

/**
 * Times `a` and `b` in alternation (after a collection each), so load from
 * other processes on a shared machine hits both sides alike.
 */
function alternating(a: () => unknown, b: () => unknown, runs = runsFor(15), warmup = runsFor(3)): [Sample, Sample, number[], number[]] {
  const ta: number[] = [];
  const tb: number[] = [];
  for (let r = 0; r < runs + warmup; r++) {
    for (const [fn, times] of [
      [a, ta],
      [b, tb],
    ] as const) {
      collect();
      const start = performance.now();
      fn();
      if (r >= warmup) times.push(performance.now() - start);
    }
  }
  return [summarize(ta), summarize(tb), ta, tb];
}

/** Times `run` on a fresh `prepare()` result each time, the preparation untimed. */
function timed<T>(runs: number, prepare: () => T, run: (prepared: T) => unknown): Sample {
  const times: number[] = [];
  const warmup = runsFor(3);
  for (let r = 0; r < runs + warmup; r++) {
    const prepared = prepare();
    collect();
    const start = performance.now();
    run(prepared);
    if (r >= warmup) times.push(performance.now() - start);
  }
  return summarize(times);
}

/** Median time of frames [from, to) (bytes → events) over `runs` fresh trackers, each primed untimed. */
function frameWindow(from: number, to: number, history: unknown[] | undefined, runs = runsFor(15)): Sample {
  const times: number[] = [];
  const warmup = runsFor(3);
  for (let r = 0; r < runs + warmup; r++) {
    const tracker = createTrajectoryTracker({ conversationId: CID });
    if (history) tracker.applySnapshot({ steps: history });
    for (let i = 0; i < from; i++) applyFrame(tracker, i + 1);
    collect();
    const start = performance.now();
    for (let i = from; i < to; i++) applyFrame(tracker, i + 1);
    if (r >= warmup) times.push(performance.now() - start);
  }
  return summarize(times);
}

const suite: BenchSuite = {
  title: "mapper",
  async run(): Promise<BenchRow[]> {
    const steps = Array.from({ length: 10_000 }, (_, i) => step(i));
    const bytes = Buffer.from(JSON.stringify({ steps }));
    const loadBefore = loadNote();
    const [parse, ingest, parseTimes, ingestTimes] = alternating(
      () => JSON.parse(bytes.toString("utf8")),
      () => {
        const response = JSON.parse(bytes.toString("utf8")) as { steps: unknown[] };
        return createTrajectoryTracker({ conversationId: CID }).applySnapshot({ steps: response.steps });
      },
    );
    const snapshotLoad = `${loadBefore}, after ${loadNote()}`;
    const mapOnly = timed(
      runsFor(15),
      () => (JSON.parse(bytes.toString("utf8")) as { steps: unknown[] }).steps,
      (parsed) => createTrajectoryTracker({ conversationId: CID }).applySnapshot({ steps: parsed }),
    );
    const parseRow: BenchRow = { name: `JSON.parse of the 10,000-step snapshot (${(bytes.length / 1e6).toFixed(1)} MB)`, sample: parse };
    const snapshotPairs = pairedRatio(ingestTimes, parseTimes);

    const early = frameWindow(0, 100, undefined);
    const late = frameWindow(900, 1000, undefined);
    // Both primed with 100 frames, so the history's own garbage is collected before the window.
    const emptyTracker = frameWindow(100, 200, undefined);
    const behindHistory = frameWindow(100, 200, steps);
    const lateRatio = late.medianMs / early.medianMs;
    const historyRatio = behindHistory.medianMs / emptyTracker.medianMs;
    return [
      parseRow,
      {
        name: `bytes → events: JSON.parse + tracker.applySnapshot, 10,000 synthetic steps (${snapshotLoad})`,
        sample: ingest,
        baseline: { name: "JSON.parse", sample: parse },
        pairedRatio: snapshotPairs,
        goal: "<= 1.3x (median pair)",
        met: snapshotPairs.median <= 1.3,
        limit: 1.3,
      },
      {
        name: "tracker.applySnapshot alone on the parsed 10,000 steps (information)",
        sample: mapOnly,
        baseline: { name: "JSON.parse", sample: parse },
      },
      {
        name: `stream bytes → events, frames 901-1000 of a ${Math.round(BASE / 1000)}-${Math.round((BASE + FRAMES * GROWTH) / 1000)} KB GENERATING message`,
        sample: late,
        baseline: { name: "frames 1-100", sample: early },
        goal: "≈ 1 (<= 1.3x)",
        met: lateRatio <= 1.3,
        limit: 1.3,
      },
      {
        name: "stream bytes → events, frames 101-200 behind a 10,000-step history",
        sample: behindHistory,
        baseline: { name: "frames 101-200, no history", sample: emptyTracker },
        goal: "≈ 1 (<= 1.3x)",
        met: historyRatio <= 1.3,
        limit: 1.3,
      },
    ];
  },
};

export default suite;
