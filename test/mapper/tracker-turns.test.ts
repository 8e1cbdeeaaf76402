/** Turn boundaries, usage, model changes and exactly-once over our fixtures. */
import { describe, expect, it } from "vitest";
import { createTrajectoryTracker, type MapperEvent } from "../../src/mapper/index.js";
import { CID, TID, clone, fixture, fixtureNames } from "./load.js";

const tracker = () => createTrajectoryTracker({ conversationId: CID });
const types = (events: MapperEvent[]) => events.map((e) => (e.type === "status" ? `status:${e.status}` : e.type));
const snapshot = () => fixture("snapshot_two_turns.json")["steps"] as unknown[];

function planner(stepIndex: number, status: string, body: Record<string, unknown>, extraMeta: Record<string, unknown> = {}) {
  return {
    type: "CORTEX_STEP_TYPE_PLANNER_RESPONSE",
    status: `CORTEX_STEP_STATUS_${status}`,
    metadata: { sourceTrajectoryStepInfo: { trajectoryId: TID, stepIndex, cascadeId: CID }, ...extraMeta },
    plannerResponse: body,
  };
}

function userInput(executionId: string, text: string, plannerConfig: Record<string, unknown> = { planModel: "MODEL_A" }) {
  return {
    type: "CORTEX_STEP_TYPE_USER_INPUT",
    status: "CORTEX_STEP_STATUS_DONE",
    metadata: { executionId, createdAt: `2026-07-14T10:00:00.${executionId.length}Z`, sourceTrajectoryStepInfo: { trajectoryId: TID, cascadeId: CID } },
    userInput: { items: [{ text }], userResponse: text, userConfig: { plannerConfig } },
  };
}

describe("a two-turn snapshot", () => {
  it("emits each turn as running, its items, then idle, in step order", () => {
    const events = tracker().applySnapshot({ steps: snapshot() });
    expect(types(events)).toEqual([
      "status:running",
      "model_changed",
      "user_message",
      "message",
      "usage",
      "status:idle",
      "status:running",
      "model_changed",
      "user_message",
      "usage",
      "interaction_requested",
      "status:waiting",
      "interaction_resolved",
      "status:running",
      "function_call",
      "function_call_output",
      "message",
      "usage",
      "status:idle",
    ]);
  });

  it("takes the USER_INPUT index from its position in the snapshot", () => {
    const events = tracker().applySnapshot({ steps: snapshot() });
    const users = events.filter((e) => e.type === "user_message");
    expect(users.map((e) => e.stepIndex)).toEqual([0, 4]);
  });

  it("posts usage as running totals and never counts the checkpoint's summariser", () => {
    const usage = tracker()
      .applySnapshot({ steps: snapshot() })
      .filter((e) => e.type === "usage");
    expect(usage.map((e) => [e.inputTokens, e.outputTokens, e.cacheReadTokens])).toEqual([
      [12040, 52, 0],
      [12040 + 980, 52 + 390, 15800],
      [12040 + 980 + 1500, 52 + 390 + 40, 15800 + 16000],
    ]);
  });

  it("reports the second turn's model switch with the previous model", () => {
    const changes = tracker()
      .applySnapshot({ steps: snapshot() })
      .filter((e) => e.type === "model_changed");
    expect(changes.map((e) => [e.model, e.previousModel])).toEqual([
      ["MODEL_PLACEHOLDER_M20", undefined],
      ["MODEL_PLACEHOLDER_M26", "MODEL_PLACEHOLDER_M20"],
    ]);
  });

  it("re-emits nothing when the same snapshot, pages of it, or single steps arrive again", () => {
    const t = tracker();
    t.applySnapshot({ steps: snapshot() });
    expect(t.applySnapshot({ steps: snapshot() })).toEqual([]);
    expect(t.applySnapshot({ steps: snapshot().slice(4), stepOffset: 4 })).toEqual([]);
    expect(t.markReconnected()).toEqual([]);
    expect(t.applySteps(snapshot())).toEqual([]);
  });

  it("emits the same events whether the snapshot arrives whole or in pages", () => {
    const whole = tracker().applySnapshot({ steps: snapshot() });
    const t = tracker();
    const paged = [0, 3, 6].flatMap((offset) => t.applySnapshot({ steps: snapshot().slice(offset, offset + 3), stepOffset: offset }));
    expect(paged).toEqual(whole);
  });

  it("keeps the type and status of every step it saw, readable by trajectory and index", () => {
    const t = tracker();
    t.applySnapshot({ steps: snapshot() });
    expect(t.stepState(TID, 6)).toEqual({ stepType: "RUN_COMMAND", status: "DONE", settled: true });
    expect(t.stepState(TID, 4)).toEqual({ stepType: "USER_INPUT", status: "DONE", settled: true });
    expect(t.stepState(TID, 99)).toBeUndefined();
    expect(t.turnActive).toBe(false);
  });
});

describe("turn boundaries", () => {
  it("does not reopen the turn for a second USER_INPUT mid-turn (a steer)", () => {
    const events = tracker().applySteps([userInput("exec-1", "first"), userInput("exec-1b", "also this")]);
    expect(types(events)).toEqual(["status:running", "model_changed", "user_message", "user_message"]);
  });

  it("tells apart USER_INPUT steps without an index by their execution id", () => {
    const t = tracker();
    t.applySteps([userInput("exec-1", "one"), planner(2, "DONE", { modifiedResponse: "done one" })]);
    const second = t.applySteps([userInput("exec-2", "two")]);
    expect(types(second)).toEqual(["status:running", "user_message"]);
  });

  it("never closes a turn on a DONE planner without text (a streamed tool dispatch)", () => {
    const t = tracker();
    t.applySteps([userInput("exec-1", "go"), planner(2, "DONE", { messageId: "bot-1" })]);
    expect(t.turnActive).toBe(true);
  });

  it("does not close a turn on a planner whose text comes with tool calls", () => {
    const t = tracker();
    const events = t.applySteps([userInput("exec-1", "go"), planner(2, "DONE", { modifiedResponse: "Let me look.", toolCalls: [{ id: "x" }] })]);
    expect(types(events)).toContain("message");
    expect(t.turnActive).toBe(true);
  });

  it("keeps a tool turn running until the final answer arrives", () => {
    const t = tracker();
    const during = t.applySnapshot({ steps: snapshot().slice(4, 7), stepOffset: 4 });
    expect(types(during)).not.toContain("status:idle");
    expect(t.turnActive).toBe(true);
    expect(types(t.applySnapshot({ steps: snapshot().slice(7), stepOffset: 7 }))).toContain("status:idle");
  });

  it("treats a waiting step as a turn in progress when the tracker joined mid-turn", () => {
    const t = tracker();
    t.applySteps([fixture("run_command_waiting.json")]);
    const events = t.applySteps([fixture("run_command_done.json"), planner(7, "DONE", { modifiedResponse: "It printed the directory." })]);
    expect(types(events)).toEqual(["interaction_resolved", "status:running", "function_call", "function_call_output", "message", "status:idle"]);
  });

  it("commits a failure message and fails the turn when the planner ends in ERROR", () => {
    const t = tracker();
    t.applySteps([userInput("exec-1", "go")]);
    const events = t.applySteps([planner(2, "ERROR", { errorMessage: "quota exhausted" })]);
    expect(events).toEqual([
      {
        type: "message",
        conversationId: CID,
        trajectoryId: TID,
        stepIndex: 2,
        messageId: `agy_msg_${TID}_2`,
        role: "assistant",
        failed: true,
        text: "[agy-bridge: the model did not complete this turn (status ERROR): quota exhausted]",
      },
      { type: "status", conversationId: CID, trajectoryId: TID, stepIndex: 2, status: "failed", reason: "turn_failed" },
    ]);
  });

  it("prefers modifiedResponse, and falls back to response when it is empty", () => {
    const a = tracker().applySteps([planner(2, "DONE", { response: "raw", modifiedResponse: "moderated" })]);
    const b = tracker().applySteps([planner(2, "DONE", { response: "raw", modifiedResponse: "" })]);
    expect([a[0], b[0]].map((e) => e && "text" in e && e.text)).toEqual(["moderated", "raw"]);
  });

  it("reads the legacy requestedModel and stays quiet when the model does not change", () => {
    const t = tracker();
    const first = t.applySteps([userInput("e1", "a", { requestedModel: { model: "MODEL_OLD" } })]);
    const second = t.applySteps([userInput("e2", "b", { requestedModel: { model: "MODEL_OLD" } })]);
    expect(first.filter((e) => e.type === "model_changed")).toHaveLength(1);
    expect(second.filter((e) => e.type === "model_changed")).toHaveLength(0);
  });

  it("leaves a non-numeric token field out of the totals and says so", () => {
    const events = tracker().applySteps([
      planner(2, "DONE", { messageId: "m" }, { modelUsage: { inputTokens: "12", outputTokens: "lots", cacheReadTokens: 3 } }),
    ]);
    expect(events.map((e) => (e.type === "diagnostic" ? e.code : e.type))).toEqual(["invalid_number", "usage"]);
    expect(events[1]).toMatchObject({ type: "usage", inputTokens: 12, outputTokens: 0, cacheReadTokens: 3, thinkingOutputTokens: 0 });
  });

  it("maps a step at index 0 (agy omits the zero index) and accepts a string index", () => {
    const zero = tracker().applySteps([planner(0, "DONE", { modifiedResponse: "hi" })]);
    const stringy = planner(0, "DONE", { modifiedResponse: "hi" });
    (stringy.metadata.sourceTrajectoryStepInfo as Record<string, unknown>)["stepIndex"] = "7";
    expect(zero[0]).toMatchObject({ stepIndex: 0 });
    expect(tracker().applySteps([stringy])[0]).toMatchObject({ stepIndex: 7 });
  });
});

describe("the run-status idle backstop", () => {
  const runStatus = (status: string, fullyIdle: boolean) => ({ conversationId: CID, status, fullyIdle });

  it("closes an open turn when agy reports IDLE and fully idle with nothing waiting", () => {
    const t = tracker();
    t.applySteps([userInput("e1", "go")]);
    expect(t.applyStreamUpdate(runStatus("CASCADE_RUN_STATUS_RUNNING", false))).toEqual([]);
    expect(t.applyStreamUpdate(runStatus("CASCADE_RUN_STATUS_IDLE", false))).toEqual([]);
    expect(t.applyStreamUpdate(runStatus("CASCADE_RUN_STATUS_IDLE", true))).toEqual([
      { type: "status", conversationId: CID, status: "idle", reason: "run_idle" },
    ]);
    expect(t.applyRunStatus({ status: "CASCADE_RUN_STATUS_IDLE", fullyIdle: true })).toEqual([]);
  });

  it("does not close a turn while a step waits on the user", () => {
    const t = tracker();
    t.applySteps([userInput("e1", "go"), fixture("run_command_waiting.json")]);
    expect(t.applyRunStatus({ status: "CASCADE_RUN_STATUS_IDLE", fullyIdle: true })).toEqual([]);
    expect(t.turnActive).toBe(true);
  });
});

describe("our fixtures", () => {
  /** Fixtures whose point is a diagnostic. */
  const DIAGNOSED = new Set(["error_message_hidden.json", "generic_invalid_arguments_error.json"]);
  it.each(fixtureNames().filter((n) => !DIAGNOSED.has(n)))("map %s without diagnostics (the _provenance key is ignored)", (name) => {
    const data = fixture(name);
    const t = tracker();
    const events = Array.isArray(data["steps"]) ? t.applySnapshot({ steps: data["steps"] as unknown[] }) : t.applySteps([data]);
    expect(events.filter((e) => e.type === "diagnostic")).toEqual([]);
  });

  it("never mutates the steps it reads", () => {
    const steps = snapshot();
    const before = clone(steps);
    const t = tracker();
    t.applySnapshot({ steps });
    t.applySteps([fixture("ask_question_multi_select_waiting.json")]);
    expect(steps).toEqual(before);
  });
});

describe("an interrupted answer", () => {
  const stopped = (status: string) => planner(7, status, { modifiedResponse: "Half of the answer" });

  it.each(["CANCELED", "INTERRUPTED", "CLEARED"])("commits what agy had of a planner stopped %s, marked interrupted", (status) => {
    const events = tracker().applySnapshot({ steps: [stopped(status)], stepOffset: 7 });
    expect(events).toEqual([
      {
        type: "message",
        conversationId: CID,
        trajectoryId: TID,
        stepIndex: 7,
        messageId: `agy_msg_${TID}_7`,
        role: "assistant",
        text: "Half of the answer",
        failed: false,
        interrupted: true,
      },
    ]);
  });

  it("gives a live reader the same message after the deltas it streamed, and closes no turn", () => {
    const t = tracker();
    const live = [
      ...t.applySnapshot({ steps: [planner(7, "GENERATING", { modifiedResponse: "Half of" })], stepOffset: 7 }),
      ...t.applySnapshot({ steps: [stopped("CANCELED")], stepOffset: 7 }),
    ];
    expect(types(live)).toEqual(["message_delta", "message_delta", "message"]);
    expect(live.at(-1)).toEqual(tracker().applySnapshot({ steps: [stopped("CANCELED")], stepOffset: 7 })[0]);
  });

  it("commits nothing for a stopped planner without text", () => {
    expect(tracker().applySnapshot({ steps: [planner(7, "CANCELED", {})], stepOffset: 7 })).toEqual([]);
  });
});
