/**
 * When a capture ends, and what its directory always holds: `--until-idle`
 * ends only on an idle agy's run status confirms (IDLE, nothing waiting) —
 * not when a planner's text closes the turn in the events while agy goes on
 * to a gate that parks without a frame — and `answers.ndjson` is there even
 * when nothing was answered. Each test its own simulator (in-process, real
 * loopback listeners) and directory.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { createCaptureSink } from "../../src/capture/capture-sink.js";
import { recordCapture, type CaptureResult } from "../../src/capture/recorder.js";
import { createRedactor } from "../../src/capture/redaction/redactor.js";
import { STEP_STATUS } from "../../src/protocol/wire-names.js";
import { createAgyRpcClient } from "../../src/rpc/client.js";
import { startSimServer, type Scenario } from "../../src/sim/index.js";
import { until } from "../support/until.js";

/** A planner's text closes the turn in the events; agy then thinks a while and parks a gate without a frame. */
const TEXT_THEN_SILENT_GATE = {
  name: "text-then-silent-gate",
  description: "Planner text, a pause, then a command gate that parks without a frame.",
  match: { text: "Check, then clean up" },
  steps: [
    { kind: "planner", text: "Let me check first.", chunks: 1 },
    { kind: "delay", ms: 1_500 },
    { kind: "command", commandLine: "rm -rf build", silentGate: true, output: "" },
    { kind: "planner", text: "Cleaned up.", chunks: 1 },
  ],
} as Scenario;

const TEXT_ONLY = {
  name: "text-only",
  description: "One planner answer, no gate.",
  match: { text: "Say hello" },
  steps: [{ kind: "planner", text: "Hello there.", chunks: 2 }],
} as Scenario;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

async function world(scenario: Scenario) {
  const sim = await startSimServer({ speed: 1, scenarios: [scenario] });
  onTestFinished(() => sim.close());
  const client = createAgyRpcClient({ baseUrl: sim.plainUrl });
  onTestFinished(() => client.close());
  const dir = join(mkdtempSync(join(tmpdir(), "agyb-capture-idle-")), "cap");
  onTestFinished(() => rmSync(join(dir, ".."), { recursive: true, force: true }));
  const controller = new AbortController();
  onTestFinished(() => controller.abort());
  let result: CaptureResult | undefined;
  const recording = recordCapture({
    client,
    conversationId: sim.engine.activeConversationId,
    sink: createCaptureSink(dir),
    redactor: createRedactor(),
    clock: { now: () => Date.now(), sleep },
    untilIdle: true,
    durationMs: 60_000,
    signal: controller.signal,
    meta: { agyVersion: null, platform: "test", agyBridgeVersion: "test", listeners: [] },
  }).then((r) => (result = r));
  return { sim, dir, recording, ended: () => result };
}

/** The capture read its first snapshot: a turn typed now runs during the capture. */
function started(dir: string): Promise<unknown> {
  return until(() => existsSync(join(dir, "steps")) && readdirSync(join(dir, "steps")).length > 0, "the capture's first snapshot", { ms: 10_000 });
}

describe("capture --until-idle", () => {
  it("keeps recording while agy's run status says RUNNING, through a gate that parks without a frame, and ends once agy says IDLE", async () => {
    const { sim, dir, recording, ended } = await world(TEXT_THEN_SILENT_GATE);
    await started(dir);
    sim.engine.tuiPort().submitTurn("Check, then clean up");
    const conv = sim.engine.conversation(sim.engine.activeConversationId)!;
    const gate = await until(
      () => {
        const index = conv.steps.findIndex((s) => s.status === STEP_STATUS.WAITING);
        return index >= 0 ? index : undefined;
      },
      "the silent gate to park",
      { ms: 20_000 },
    );
    // The planner's text closed the turn in the events long before; agy was RUNNING all along.
    expect(ended(), "the capture ended while agy was still running").toBeUndefined();
    expect(sim.engine.tuiPort().answer(gate, { kind: "permission", allow: true })).toBe(true);
    const result = await recording;
    expect(result).toMatchObject({ ended: "idle", answers: 1 });
    expect(conv.running).toBe(false);
    const answers = readFileSync(join(dir, "answers.ndjson"), "utf8").trim().split("\n");
    expect(answers.map((l) => (JSON.parse(l) as { outcome: string }).outcome)).toEqual(["approved"]);
  }, 60_000);

  it("writes answers.ndjson, empty, when nothing was answered", async () => {
    const { sim, dir, recording } = await world(TEXT_ONLY);
    await started(dir);
    sim.engine.tuiPort().submitTurn("Say hello");
    expect(await recording).toMatchObject({ ended: "idle", answers: 0 });
    expect(readFileSync(join(dir, "answers.ndjson"), "utf8")).toBe("");
  }, 60_000);
});
