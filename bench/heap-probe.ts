/**
 * Run in a child process with `--expose-gc` (see `heapRetained`): builds one
 * object the way a supervisor holds it, drops everything else, collects
 * garbage and prints the heap it retains as JSON on stdout.
 *
 *   node --expose-gc --import tsx bench/heap-probe.ts tracker 10000
 *   node --expose-gc --import tsx bench/heap-probe.ts session 10000
 *   node --expose-gc --import tsx bench/heap-probe.ts baseline 10000
 *
 * `baseline` keeps the parsed steps themselves: what holding raw steps costs.
 */
import { createTrajectoryTracker } from "../src/mapper/index.js";
import { buildCaptureSnapshot } from "./capture-snapshot.js";
import { retainedBySession } from "./heap-session.js";

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("heap-probe needs node --expose-gc");

function settledHeap(): number {
  for (let i = 0; i < 4; i++) gc!();
  return process.memoryUsage().heapUsed;
}

const [what = "tracker", countText = "10000"] = process.argv.slice(2);
const count = Number(countText);
const keep: unknown[] = [];

/** A tracker that applied `page`; its events are dropped when this returns. */
function trackerAfter(page: { steps: unknown[] }): unknown {
  const tracker = createTrajectoryTracker({ conversationId: "bench-conversation" });
  if (tracker.applySnapshot(page).length === 0) throw new Error("the capture-built history gave no events");
  return tracker;
}

async function build(): Promise<number> {
  if (what === "session") return retainedBySession(count, settledHeap, keep);
  const before = settledHeap();
  let text: string | undefined = buildCaptureSnapshot(count);
  const jsonBytes = text.length;
  let page: { steps: unknown[] } | undefined = JSON.parse(text) as { steps: unknown[] };
  text = undefined;
  if (what === "baseline") keep.push(page);
  else keep.push(trackerAfter(page));
  page = undefined;
  const retained = settledHeap() - before;
  process.stdout.write(`${JSON.stringify({ what, count, jsonBytes, retained })}\n`);
  return retained;
}

await build();
