/** Stream frames: deltas, rewrites, interactions, bad frames. */
import { describe, expect, it } from "vitest";
import { createTrajectoryTracker, type EventOf, type MapperEvent } from "../../src/mapper/index.js";
import type { StreamUpdate } from "../../src/protocol/wire-schemas.js";
import { CID, TID, fixture, frames } from "./load.js";

const tracker = () => createTrajectoryTracker({ conversationId: CID });
const run = (updates: Record<string, unknown>[], t = tracker()) => updates.flatMap((u) => t.applyStreamUpdate(u as StreamUpdate));
const of = <T extends MapperEvent["type"]>(events: MapperEvent[], type: T) => events.filter((e): e is EventOf<T> => e.type === type);

function generating(stepIndex: number, text: string | undefined, thinking?: string) {
  return {
    type: "CORTEX_STEP_TYPE_PLANNER_RESPONSE",
    status: "CORTEX_STEP_STATUS_GENERATING",
    metadata: { sourceTrajectoryStepInfo: { trajectoryId: TID, stepIndex, cascadeId: CID } },
    plannerResponse: { ...(text === undefined ? {} : { modifiedResponse: text }), ...(thinking === undefined ? {} : { thinking }) },
  };
}
function done(stepIndex: number, text: string) {
  return { ...generating(stepIndex, text), status: "CORTEX_STEP_STATUS_DONE" };
}
function frame(indices: number[], steps: unknown[], extra: Record<string, unknown> = {}) {
  return { conversationId: CID, trajectoryId: TID, mainTrajectoryUpdate: { stepsUpdate: { indices, steps, totalLength: 10 } }, ...extra };
}
/** What a consumer shows after applying the deltas of one message. */
function rendered(deltas: { text: string; replace: boolean }[]): string {
  return deltas.reduce((acc, d) => (d.replace ? d.text : acc + d.text), "");
}

describe("a GENERATING planner on the stream", () => {
  const events = run(frames("stream_planner_generating.ndjson"));

  it("sends text deltas that join to the committed message, with increasing indices and one final", () => {
    const deltas = of(events, "message_delta");
    const message = of(events, "message")[0];
    expect(rendered(deltas)).toBe(message?.text);
    expect(deltas.map((d) => d.index)).toEqual(deltas.map((_, i) => i));
    expect(deltas.map((d) => d.final)).toEqual([false, false, false, true]);
    expect(deltas.map((d) => d.text)).toEqual([
      "A monad is a type",
      " that wraps values",
      " and chains computations on them.",
      " It gives sequencing, failure or state a uniform interface.",
    ]);
    expect(new Set(deltas.map((d) => d.messageId))).toEqual(new Set([message?.messageId]));
  });

  it("sends reasoning before text, marks the first reasoning delta started, and commits no reasoning", () => {
    const order = events.map((e) => e.type).filter((t) => t.endsWith("_delta"));
    expect(order.slice(0, 2)).toEqual(["reasoning_delta", "reasoning_delta"]);
    expect(of(events, "reasoning_delta").map((d) => [d.text, d.started])).toEqual([
      ["The user wants", true],
      [" a short definition.", false],
    ]);
  });

  it("emits the committed message once and closes the turn before the IDLE frame could", () => {
    expect(events.map((e) => (e.type === "status" ? `${e.status}:${e.reason}` : e.type)).filter((t) => !t.endsWith("_delta"))).toEqual([
      "running:turn_started",
      "model_changed",
      "user_message",
      "message",
      "usage",
      "idle:turn_completed",
    ]);
  });

  it("re-emits nothing when every frame is delivered again", () => {
    const t = tracker();
    run(frames("stream_planner_generating.ndjson"), t);
    expect(run(frames("stream_planner_generating.ndjson"), t)).toEqual([]);
  });
});

describe("text rewrites", () => {
  it("does not duplicate text after a transient shrink", () => {
    const events = run([
      frame([3], [generating(3, "Hello wor")]),
      frame([3], [generating(3, "Hello")]),
      frame([3], [generating(3, "Hello world")]),
      frame([3], [done(3, "Hello world!")]),
    ]);
    const deltas = of(events, "message_delta");
    expect(deltas.map((d) => [d.text, d.replace, d.final])).toEqual([
      ["Hello wor", false, false],
      ["ld", false, false],
      ["!", false, true],
    ]);
    expect(of(events, "diagnostic")).toEqual([]);
  });

  it("replaces instead of slicing when agy rewrites the text, with a diagnostic", () => {
    const events = run([frame([3], [generating(3, "The answer is 4")]), frame([3], [generating(3, "The result: 4")]), frame([3], [done(3, "The result: 4.")])]);
    expect(of(events, "message_delta").map((d) => [d.text, d.replace, d.index])).toEqual([
      ["The answer is 4", false, 0],
      ["The result: 4", true, 1],
      [".", false, 2],
    ]);
    expect(of(events, "diagnostic").map((d) => d.code)).toEqual(["non_prefix_rewrite"]);
  });

  it("closes the live block with a replacing final delta when the committed text shrank", () => {
    const events = run([frame([3], [generating(3, "Draft that grew long")]), frame([3], [done(3, "Draft")])]);
    const deltas = of(events, "message_delta");
    expect(deltas.at(-1)).toMatchObject({ text: "Draft", replace: true, final: true });
    expect(rendered(deltas)).toBe("Draft");
  });

  it("sends an empty final delta when the committed text adds nothing", () => {
    const events = run([frame([3], [generating(3, "All done.")]), frame([3], [done(3, "All done.")])]);
    expect(of(events, "message_delta").at(-1)).toMatchObject({ text: "", final: true, index: 1 });
  });

  it("sends no deltas for a GENERATING planner whose index is unknown", () => {
    const t = tracker();
    const orphan = generating(0, "text");
    delete (orphan.metadata.sourceTrajectoryStepInfo as Record<string, unknown>)["stepIndex"];
    expect(t.applySteps([orphan])).toEqual([]);
  });

  it("continues the same diff after a reconnect and a reconcile snapshot", () => {
    const t = tracker();
    run([frame([3], [generating(3, "Part one")])], t);
    expect(t.markReconnected()).toEqual([]);
    const events = t.applySnapshot({ steps: [generating(3, "Part one, part two")], stepOffset: 3 });
    expect(of(events, "message_delta").map((d) => [d.text, d.index])).toEqual([[", part two", 1]]);
  });

  it("starts fresh when a planner first seen DONE was never streamed", () => {
    const events = run([frame([3], [done(3, "Complete.")])]);
    expect(of(events, "message_delta")).toEqual([]);
    expect(of(events, "message").map((m) => m.text)).toEqual(["Complete."]);
  });
});

describe("interactions on the stream", () => {
  it("treats agy's timeout retry at a higher index as a new interaction", () => {
    const events = run(frames("stream_question_timeout_retry.ndjson"));
    const requested = of(events, "interaction_requested");
    const resolved = of(events, "interaction_resolved");
    expect(requested.map((r) => r.stepIndex)).toEqual([4, 5]);
    expect(requested[0]?.interactionId).not.toBe(requested[1]?.interactionId);
    expect(resolved.map((r) => [r.interactionId, r.outcome])).toEqual([
      [requested[0]?.interactionId, "timed_out"],
      [requested[1]?.interactionId, "answered"],
    ]);
    expect(resolved[1]?.response).toEqual({
      trajectoryId: TID,
      stepIndex: 5,
      askQuestion: { responses: [{ question: "Which file should I clean up first?", selectedOptionIds: ["1"] }] },
    });
    expect(of(events, "function_call_output").map((o) => [o.stepIndex, o.isError])).toEqual([
      [4, true],
      [5, false],
    ]);
  });

  it("keeps the waiting status until the retried question is resolved", () => {
    const events = run(frames("stream_question_timeout_retry.ndjson"));
    const statuses = of(events, "status").map((s) => `${s.status}:${s.reason}`);
    expect(statuses).toEqual([
      "running:turn_started",
      "waiting:interaction_pending",
      "running:interaction_resolved",
      "waiting:interaction_pending",
      "running:interaction_resolved",
      "idle:turn_completed",
    ]);
  });

  it("lists the pending question with what is needed to answer it, then forgets it", () => {
    const t = tracker();
    const all = frames("stream_question_timeout_retry.ndjson");
    run(all.slice(0, 4), t);
    expect(t.pendingInteractions()).toEqual([
      expect.objectContaining({
        trajectoryId: TID,
        stepIndex: 5,
        stepType: "ASK_QUESTION",
        callId: `agy_call_${TID}_5`,
        request: {
          kind: "question",
          questions: [
            {
              question: "Which file should I clean up first?",
              multiSelect: false,
              options: [
                { id: "1", text: "notes.txt" },
                { id: "2", text: "draft.md" },
              ],
            },
          ],
        },
      }),
    ]);
    run(all.slice(4), t);
    expect(t.pendingInteractions()).toEqual([]);
  });

  it("merges is_multi_select from the tool call arguments, question by question", () => {
    const [requested] = tracker().applySteps([fixture("ask_question_multi_select_waiting.json")]);
    expect(requested).toMatchObject({
      type: "interaction_requested",
      request: {
        kind: "question",
        questions: [
          { multiSelect: true },
          {
            multiSelect: false,
            options: [
              { id: "1", text: "Yes" },
              { id: "2", text: "No" },
            ],
          },
        ],
      },
    });
  });

  it("defaults multiSelect to false when the arguments JSON is malformed", () => {
    const step = fixture("ask_question_multi_select_waiting.json");
    ((step["metadata"] as Record<string, unknown>)["toolCall"] as Record<string, unknown>)["argumentsJson"] = "{not json";
    const [requested] = tracker().applySteps([step]);
    expect(requested).toMatchObject({ request: { questions: [{ multiSelect: false }, { multiSelect: false }] } });
  });

  it("replays a DONE step that still carries its requestedInteraction as requested and resolved at once, leaving nothing pending", () => {
    const t = tracker();
    const events = t.applySteps([fixture("run_command_done.json")]);
    const [requested] = of(events, "interaction_requested");
    expect(of(events, "interaction_resolved")).toEqual([
      expect.objectContaining({ interactionId: requested?.interactionId, outcome: "approved", stepStatus: "DONE" }),
    ]);
    expect(t.pendingInteractions()).toEqual([]);
  });

  it("resolves a gate the same way live and in a replay: a deny is denied, an allow approved", () => {
    const waiting = fixture("run_command_waiting.json");
    const denied = {
      ...fixture("run_command_done.json"),
      permissions: { permissionGrants: [{ resource: { action: "command", target: "pwd" } }] },
      completedInteractions: [{ request: {}, response: { trajectoryId: TID, stepIndex: 6, permission: {} } }],
    };
    const running = { ...waiting, status: "CORTEX_STEP_STATUS_RUNNING" };
    // Each version applied on its own, as frames arrive; one tracker per history.
    const outcome = (steps: unknown[]) => {
      const t = tracker();
      return of(
        steps.flatMap((step) => t.applySteps([step])),
        "interaction_resolved",
      ).map((e) => e.outcome);
    };
    expect(outcome([waiting, denied])).toEqual(["denied"]);
    expect(outcome([denied])).toEqual(["denied"]);
    expect(outcome([waiting, running, fixture("run_command_done.json")])).toEqual(["approved"]);
    expect(outcome([fixture("run_command_done.json")])).toEqual(["approved"]);
  });

  it("says a stream question without its multi-select flags needs the full step, until its request is out", () => {
    const poll = fixture("ask_question_multi_select_waiting.json");
    const stream = structuredClone(poll);
    delete (stream["metadata"] as Record<string, unknown>)["toolCall"];
    const index = (poll["metadata"] as { sourceTrajectoryStepInfo: { stepIndex: number } }).sourceTrajectoryStepInfo.stepIndex;
    const t = tracker();
    expect(t.needsFullStep(stream, index)).toBe(true);
    expect(t.needsFullStep(poll, index)).toBe(false);
    // The full version applied instead: the request says what the step says.
    const [requested] = of(t.applyStreamUpdate(frame([index], [poll]) as StreamUpdate), "interaction_requested");
    expect(requested?.request).toMatchObject({ kind: "question", questions: [{ multiSelect: true }, { multiSelect: false }] });
    // Later stream versions of the step need nothing more: its request is out, and once settled nothing more comes.
    expect(t.needsFullStep({ ...stream, status: "CORTEX_STEP_STATUS_RUNNING" }, index)).toBe(false);
    const done = { ...stream, status: "CORTEX_STEP_STATUS_DONE" };
    t.applyStreamUpdate(frame([index], [done]) as StreamUpdate);
    expect(t.needsFullStep(done, index)).toBe(false);
    // A tracker that never saw the question needs the full step to replay its request.
    expect(tracker().needsFullStep(done, index)).toBe(true);
  });

  it("says a settled stream tool step whose arguments only argumentsJson holds needs the full step", () => {
    const step = (meta: Record<string, unknown>, body: Record<string, unknown> = {}) => ({
      type: "CORTEX_STEP_TYPE_INVOKE_SUBAGENT",
      status: "CORTEX_STEP_STATUS_DONE",
      metadata: { sourceTrajectoryStepInfo: { trajectoryId: TID, stepIndex: 3 }, argumentsOrder: ["Prompt", "toolAction"], ...meta },
      invokeSubagent: { subagents: [{ typeName: "researcher" }] },
      ...body,
    });
    const t = tracker();
    expect(t.needsFullStep(step({}), 3)).toBe(true);
    expect(t.needsFullStep(step({ toolCall: { argumentsJson: '{"Prompt":"p"}' } }), 3)).toBe(false);
    expect(t.needsFullStep(step({ argumentsOrder: ["Subagents"] }), 3)).toBe(false);
    expect(t.needsFullStep(step({ argumentsOrder: ["toolAction"] }), 3)).toBe(false);
    expect(t.needsFullStep({ ...step({}), status: "CORTEX_STEP_STATUS_RUNNING" }, 3)).toBe(false);
    expect(t.needsFullStep(fixture("stream_run_command_done.json"), 6)).toBe(false);
    expect(t.needsFullStep(null, 3)).toBe(false);
  });

  it("derives the same interaction id from the same step every time", () => {
    const a = of(tracker().applySteps([fixture("run_command_waiting.json")]), "interaction_requested")[0];
    const b = of(tracker().applySteps([fixture("run_command_waiting.json")]), "interaction_requested")[0];
    expect(a?.interactionId).toMatch(/^int_[0-9a-f]{16}$/);
    expect(a?.interactionId).toBe(b?.interactionId);
  });

  it("reports a CANCELED wait as cancelled", () => {
    const t = tracker();
    t.applySteps([fixture("run_command_waiting.json")]);
    const cancelled = { ...fixture("run_command_waiting.json"), status: "CORTEX_STEP_STATUS_CANCELED" };
    expect(of(t.applySteps([cancelled]), "interaction_resolved")[0]).toMatchObject({ outcome: "cancelled", stepStatus: "CANCELED" });
  });
});

describe("bad input", () => {
  it("skips a step that is not an object with a diagnostic and keeps going", () => {
    const events = tracker().applySnapshot({ steps: [42, fixture("conversation_history.json"), done(2, "ok")] });
    expect(events.map((e) => (e.type === "diagnostic" ? e.code : e.type))).toEqual(["invalid_step", "message"]);
  });

  it("maps an unknown step type with a typed body to a tool call and its output, named after the type", () => {
    const events = tracker().applySteps([fixture("unknown_step_type.json")]);
    expect(events.map((e) => e.type)).toEqual(["function_call", "function_call_output"]);
    expect(events[1]).toMatchObject({ name: "hologram_projection", output: '{"note":"a step type no agy-bridge version knows"}' });
  });

  it("still maps an unknown step type that carries tool markers as a tool", () => {
    const step = { ...fixture("stream_view_file_done.json"), type: "CORTEX_STEP_TYPE_TELEPORT_FILE", teleportFile: { to: "x" } };
    expect(
      tracker()
        .applySteps([step])
        .map((e) => e.type),
    ).toEqual(["function_call", "function_call_output"]);
  });

  it("ignores a frame whose indices and steps differ in length, merging nothing", () => {
    const t = tracker();
    const bad = t.applyStreamUpdate(frame([3, 4], [done(3, "text")]) as StreamUpdate);
    expect(bad.map((e) => e.type === "diagnostic" && e.code)).toEqual(["frame_length_mismatch"]);
    expect(t.applyStreamUpdate(frame([3], [done(3, "text")]) as StreamUpdate).map((e) => e.type)).toEqual(["message"]);
  });

  it("ignores a frame for another conversation, merging nothing", () => {
    const t = tracker();
    const foreign = t.applyStreamUpdate({ ...frame([3], [done(3, "text")]), conversationId: "someone-else" } as StreamUpdate);
    expect(foreign).toEqual([expect.objectContaining({ type: "diagnostic", code: "foreign_conversation" })]);
    expect(t.stepState(TID, 3)).toBeUndefined();
  });

  it("ignores a stream update that is not an object", () => {
    expect(tracker().applyStreamUpdate(null as unknown as StreamUpdate)).toEqual([expect.objectContaining({ type: "diagnostic", code: "invalid_step" })]);
  });

  it("records the last totalLength a frame reported", () => {
    const t = tracker();
    run([frame([3], [done(3, "a")])], t);
    expect(t.totalLength).toBe(10);
  });

  it("uses the frame's index when the step's own index disagrees, and says so once", () => {
    const t = tracker();
    const events = run([frame([5], [generating(3, "abc")]), frame([5], [generating(3, "abcd")])], t);
    expect(events.map((e) => `${e.type === "diagnostic" ? e.code : e.type}@${"stepIndex" in e ? e.stepIndex : "-"}`)).toEqual([
      "index_mismatch@5",
      "message_delta@5",
      "message_delta@5",
    ]);
    expect(t.stepState(TID, 5)).toEqual({ stepType: "PLANNER_RESPONSE", status: "GENERATING", settled: false });
    expect(t.stepState(TID, 3)).toBeUndefined();
  });

  it("does not surface a WAITING step without a trajectory id, and says why", () => {
    const step = fixture("run_command_waiting.json");
    const info = (step["metadata"] as Record<string, unknown>)["sourceTrajectoryStepInfo"] as Record<string, unknown>;
    delete info["trajectoryId"];
    const events = tracker().applySteps([step]);
    expect(events.map((e) => (e.type === "diagnostic" ? e.code : e.type))).toEqual(["interaction_unusable"]);
  });
});
