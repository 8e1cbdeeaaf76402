import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createSimEngine, type SimEngine } from "../../src/sim/engine/engine.js";
import type { Scenario } from "../../src/sim/engine/scenario-schema.js";
import { loadScenarios } from "../../src/sim/engine/scenarios.js";
import type { SimTuiPort } from "../../src/sim/tui/tui-port.js";
import { FakeClock } from "./support/fake-clock.js";

let scenarios: Scenario[];
let engine: SimEngine;
let clock: FakeClock;
let port: SimTuiPort;

beforeAll(async () => {
  scenarios = await loadScenarios();
});
afterEach(() => engine.close());

function start(interactionTimeoutMs = 60_000): void {
  clock = new FakeClock();
  engine = createSimEngine({ scenarios, clock, speed: 1, interactionTimeoutMs });
  port = engine.tuiPort();
}

const stepsOf = (id = engine.activeConversationId) => engine.conversation(id)?.steps ?? [];

describe("the engine behind the fake TUI", () => {
  it("plays a typed turn into the TUI transcript and stamps steps with the injected clock (9 fractional digits)", async () => {
    start();
    const changes: number[] = [];
    port.subscribe(() => changes.push(1));
    port.submitTurn("Say hello in one short sentence.");
    expect(port.view().running).toBe(true);
    await clock.advance(10_000);
    const view = port.view();
    expect(view.running).toBe(false);
    expect(view.transcript).toEqual([
      { role: "user", text: "Say hello in one short sentence." },
      { role: "assistant", text: "Hello! I am the simulated agy, ready to help with your code." },
    ]);
    expect(changes.length).toBeGreaterThan(3);
    expect(stepsOf()[0]?.metadata.createdAt).toMatch(/^2026-08-02T04:49:08\.449\d{6}Z$/);
  });

  it("shows the growing text of a GENERATING planner in the transcript", async () => {
    start();
    port.submitTurn("Write a long essay please");
    await clock.advance(200);
    const partial = port.view().transcript.at(-1);
    expect(partial?.role).toBe("assistant");
    expect(partial?.text.length).toBeGreaterThan(0);
    expect(stepsOf().at(-1)?.status).toBe("CORTEX_STEP_STATUS_GENERATING");
  });

  it("shows a permission prompt keyed by the WAITING step and runs the command when allowed in the TUI (spike-notes §5.4)", async () => {
    start();
    port.submitTurn("Run pwd");
    await clock.advance(1_000);
    const pending = port.view().pending;
    expect(pending).toMatchObject({ kind: "permission", target: "pwd", description: "Running pwd command", suggestedPersistPattern: "pwd" });
    expect(port.view().running).toBe(true);
    if (pending?.kind !== "permission") throw new Error("no permission prompt");
    expect(pending.trajectoryId).toBe(engine.conversation(engine.activeConversationId)?.trajectoryId);
    expect(port.answer(pending.stepIndex, { kind: "permission", allow: true })).toBe(true);
    expect(port.answer(pending.stepIndex, { kind: "permission", allow: true })).toBe(false);
    await clock.advance(10_000);
    expect(port.view().pending).toBeUndefined();
    expect(port.view().transcript.map((e) => e.role)).toEqual(["user", "tool", "assistant"]);
    expect(port.view().transcript[1]).toEqual({ role: "tool", text: "/home/sim/project", call: { name: "Bash", arg: "pwd", expandable: true } });
  });

  it("reads multiSelect for the TUI from the tool call's argumentsJson and skips on dismiss (spike-notes §5.1)", async () => {
    start();
    port.submitTurn("Which features should I add?");
    await clock.advance(1_000);
    const pending = port.view().pending;
    if (pending?.kind !== "question") throw new Error("no question prompt");
    expect(pending.questions[0]?.multiSelect).toBe(true);
    expect(pending.questions[0]?.options.map((o) => o.id)).toEqual(["1", "2", "3", "4"]);
    expect(port.answer(pending.stepIndex, { kind: "dismiss" })).toBe(true);
    await clock.advance(10_000);
    const step = stepsOf()[pending.stepIndex];
    expect(step?.status).toBe("CORTEX_STEP_STATUS_DONE");
    expect((step?.completedInteractions as { response: unknown }[])[0]?.response).toEqual({
      trajectoryId: pending.trajectoryId,
      stepIndex: pending.stepIndex,
      askQuestion: {},
    });
  });

  it("times an unanswered prompt out to ERROR and retries it as a new WAITING step at a higher index (spike-notes §5.3)", async () => {
    start(60_000);
    port.submitTurn("Run pwd");
    await clock.advance(1_000);
    const first = port.view().pending;
    if (first?.kind !== "permission") throw new Error("no permission prompt");
    await clock.advance(60_000);
    expect(stepsOf()[first.stepIndex]?.status).toBe("CORTEX_STEP_STATUS_ERROR");
    const retry = port.view().pending;
    if (retry?.kind !== "permission") throw new Error("no retried prompt");
    expect(retry.stepIndex).toBeGreaterThan(first.stepIndex);
    expect(retry.target).toBe("pwd");
    const retried = stepsOf()[retry.stepIndex];
    expect((retried?.metadata.sourceTrajectoryStepInfo as { stepIndex: number }).stepIndex).toBe(retry.stepIndex);
    expect(port.answer(first.stepIndex, { kind: "permission", allow: true })).toBe(false);
    expect(port.answer(retry.stepIndex, { kind: "permission", allow: true })).toBe(true);
    await clock.advance(10_000);
    expect(stepsOf()[retry.stepIndex]?.status).toBe("CORTEX_STEP_STATUS_DONE");
    expect(engine.conversation(engine.activeConversationId)?.running).toBe(false);
  });

  it("queues a turn submitted mid-turn and plays it next", async () => {
    start();
    port.submitTurn("Run pwd");
    await clock.advance(1_000);
    port.submitTurn("Say hello in one short sentence.");
    await clock.advance(1_000);
    const users = () => stepsOf().filter((s) => s.type === "CORTEX_STEP_TYPE_USER_INPUT");
    expect(users()).toHaveLength(1);
    const pending = port.view().pending;
    if (pending === undefined) throw new Error("no prompt");
    port.answer(pending.stepIndex, { kind: "permission", allow: true });
    await clock.advance(10_000);
    expect(users()).toHaveLength(2);
    const secondUser = stepsOf().findIndex((s, i) => i > 0 && s.type === "CORTEX_STEP_TYPE_USER_INPUT");
    expect(stepsOf()[secondUser - 1]?.type).toBe("CORTEX_STEP_TYPE_PLANNER_RESPONSE");
    expect(stepsOf()[secondUser - 1]?.status).toBe("CORTEX_STEP_STATUS_DONE");
    expect(stepsOf()[secondUser]?.metadata.executionId).not.toBe(stepsOf()[0]?.metadata.executionId);
  });

  it("rotates to a new root conversation on /clear and keeps the old one hosted (spike-notes §4.10)", async () => {
    start();
    port.submitTurn("Say hello in one short sentence.");
    await clock.advance(10_000);
    const before = engine.activeConversationId;
    let notified = 0;
    port.subscribe(() => (notified += 1));
    port.clear();
    expect(notified).toBe(1);
    expect(engine.activeConversationId).not.toBe(before);
    expect(port.view()).toEqual({ conversationId: engine.activeConversationId, running: false, transcript: [], model: "MODEL_PLACEHOLDER_M20" });
    expect(engine.conversation(before)?.steps.length).toBe(4);
    port.submitTurn("hello again");
    await clock.advance(10_000);
    expect(stepsOf()[0]?.type).toBe("CORTEX_STEP_TYPE_USER_INPUT");
    expect(engine.conversation(before)?.steps.length).toBe(4);
  });

  it("interrupts a generating answer on Esc but leaves a parked prompt alone (spike-notes §3.6)", async () => {
    start();
    port.submitTurn("Write a long essay now");
    await clock.advance(200);
    port.cancel();
    await clock.advance(10);
    expect(port.view().running).toBe(false);
    expect(stepsOf().at(-1)?.status).toBe("CORTEX_STEP_STATUS_CANCELED");
    port.submitTurn("Run pwd");
    await clock.advance(1_000);
    port.cancel();
    await clock.advance(1_000);
    expect(port.view().pending?.kind).toBe("permission");
    expect(port.view().running).toBe(true);
  });

  it("changes nothing while a gate is parked, and tells listeners the chained second gate's WAITING move is quiet (spike-notes §5.2)", async () => {
    start(600_000);
    const conversation = engine.conversation(engine.activeConversationId);
    if (conversation === undefined) throw new Error("no conversation");
    const changes: { indices: number[]; quiet: boolean; statuses: string[] }[] = [];
    conversation.subscribe((indices, quiet) => changes.push({ indices, quiet, statuses: indices.map((i) => stepsOf()[i]?.status ?? "") }));
    port.submitTurn("Show git status and recent commits");
    await clock.advance(1_000);
    const first = port.view().pending;
    if (first?.kind !== "permission") throw new Error("no first prompt");
    const waitingMoves = () => changes.filter((c) => c.statuses.includes("CORTEX_STEP_STATUS_WAITING"));
    expect(waitingMoves()).toEqual([{ indices: [first.stepIndex], quiet: false, statuses: ["CORTEX_STEP_STATUS_WAITING"] }]);
    const seen = changes.length;
    await clock.advance(300_000);
    expect(changes.length).toBe(seen);
    port.answer(first.stepIndex, { kind: "permission", allow: true });
    await clock.advance(1_000);
    const second = port.view().pending;
    if (second?.kind !== "permission") throw new Error("no second prompt");
    expect(second.target).toBe("git log -n 3 --oneline");
    expect(waitingMoves().at(-1)).toEqual({ indices: [second.stepIndex], quiet: true, statuses: ["CORTEX_STEP_STATUS_WAITING"] });
    expect(changes.filter((c) => c.quiet)).toHaveLength(1);
  });

  it("answers a filePermission gate from the TUI in its own variant", async () => {
    start();
    port.submitTurn("Read my shell profile");
    await clock.advance(1_000);
    const pending = port.view().pending;
    expect(pending).toMatchObject({ kind: "permission", target: "/home/sim/.bashrc", description: "Read /home/sim/.bashrc" });
    if (pending?.kind !== "permission") throw new Error("no prompt");
    expect(port.answer(pending.stepIndex, { kind: "permission", allow: true })).toBe(true);
    await clock.advance(10_000);
    const step = stepsOf()[pending.stepIndex];
    expect((step?.completedInteractions as { response: unknown }[])[0]?.response).toEqual({
      trajectoryId: pending.trajectoryId,
      stepIndex: pending.stepIndex,
      filePermission: { allow: true },
    });
    expect(port.view().transcript).toContainEqual({ role: "tool", text: "", call: { name: "Read", arg: "/home/sim/.bashrc", expandable: true } });
  });

  it("shows a failed planner's step.error and a shown ERROR_MESSAGE step as errors in the TUI", async () => {
    start();
    port.submitTurn("Read the missing config");
    await clock.advance(10_000);
    port.submitTurn("Trigger a model error");
    await clock.advance(10_000);
    const errors = port
      .view()
      .transcript.filter((e) => e.role === "error")
      .map((e) => e.text);
    expect(errors).toEqual(["config.yaml could not be read: no such file.", "The model is overloaded. Please try again later."]);
  });
});
