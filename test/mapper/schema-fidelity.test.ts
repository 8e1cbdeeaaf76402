/**
 * Fidelity to agy's own schema (spike-notes §11), over fixtures synthesized
 * from it: failure detail on the step, stop reasons, arguments the model got
 * wrong, every kind of gate, and step types no capture has shown yet.
 */
import { describe, expect, it } from "vitest";
import { AgyBridgeError } from "../../src/errors.js";
import {
  createTrajectoryTracker,
  interactionAnswer,
  MapperEventSchema,
  type EventOf,
  type InteractionRequest,
  type MapperEvent,
} from "../../src/mapper/index.js";
import type { StreamUpdate } from "../../src/protocol/wire-schemas.js";
import { CID, TID, fixture } from "./load.js";

const tracker = () => createTrajectoryTracker({ conversationId: CID });
const kinds = (events: MapperEvent[]) =>
  events.map((e) => (e.type === "diagnostic" ? `diagnostic:${e.code}` : e.type === "status" ? `status:${e.status}` : e.type));
const of = <T extends MapperEvent["type"]>(events: MapperEvent[], type: T) => events.filter((e): e is EventOf<T> => e.type === type);

function mapped(...names: string[]): MapperEvent[] {
  const events = tracker().applySteps(names.map((n) => fixture(n)));
  for (const event of events) expect(MapperEventSchema.parse(event)).toEqual(event);
  return events;
}

function planner(stepIndex: number, status: string, body: Record<string, unknown>, top: Record<string, unknown> = {}) {
  return {
    type: "CORTEX_STEP_TYPE_PLANNER_RESPONSE",
    status: `CORTEX_STEP_STATUS_${status}`,
    metadata: { sourceTrajectoryStepInfo: { trajectoryId: TID, stepIndex, cascadeId: CID } },
    plannerResponse: body,
    ...top,
  };
}

describe("failure detail", () => {
  it("reads a failed planner's detail from step.error, preferring userErrorMessage", () => {
    expect(of(mapped("planner_response_error_step_error.json"), "message")).toEqual([
      expect.objectContaining({
        failed: true,
        stepIndex: 21,
        stopReason: "STOP_REASON_ERROR",
        text: "[agy-bridge: the model did not complete this turn (status ERROR): The model is overloaded. Please try again in a moment.]",
      }),
    ]);
  });

  it.each([
    [{ shortError: "short", modelErrorMessage: "model", fullError: "full" }, "short"],
    [{ modelErrorMessage: "model", fullError: "full" }, "model"],
    [{ fullError: "full" }, "full"],
    [{ userErrorMessage: "  ", fullError: "full" }, "full"],
  ])("falls through the CortexErrorDetails fields in order (%o → %s)", (error, detail) => {
    const [message] = tracker().applySteps([planner(2, "ERROR", { errorMessage: "from the body" }, { error })]);
    expect(message).toMatchObject({ text: `[agy-bridge: the model did not complete this turn (status ERROR): ${detail}]` });
  });

  it("adds step.error's detail to a failed tool's output marker", () => {
    const output = of(tracker().applySteps([fixture("generic_invalid_arguments_error.json")]), "function_call_output")[0];
    expect(output?.output).toBe("[agy-bridge: write_to_file did not complete (status ERROR): invalid tool call arguments]");
  });

  it("turns an ERROR_MESSAGE agy shows the user into a failure message", () => {
    expect(mapped("error_message_shown.json")).toEqual([
      {
        type: "message",
        conversationId: CID,
        trajectoryId: TID,
        stepIndex: 23,
        messageId: `agy_msg_${TID}_23`,
        role: "assistant",
        text: "[agy-bridge: agy reported an error: You have reached the usage limit for this model.]",
        failed: true,
      },
    ]);
  });

  it("turns an ERROR_MESSAGE not meant for the user into a diagnostic", () => {
    expect(mapped("error_message_hidden.json")).toEqual([
      {
        type: "diagnostic",
        conversationId: CID,
        trajectoryId: TID,
        stepIndex: 24,
        code: "agy_error",
        message: "agy recorded an error not meant for the user: tool output truncated",
      },
    ]);
  });
});

describe("stop reasons", () => {
  it("carries a MAX_TOKENS stop on the committed message, with the usage's thinking and cache-read counts", () => {
    const events = mapped("planner_response_max_tokens.json");
    expect(kinds(events)).toEqual(["message", "usage"]);
    expect(events[0]).toMatchObject({ stopReason: "STOP_REASON_MAX_TOKENS", failed: false });
    expect(events[1]).toMatchObject({ inputTokens: 18422, outputTokens: 8192, thinkingOutputTokens: 1024, cacheReadTokens: 16040 });
  });

  it.each([
    ["STOP_REASON_CONTENT_FILTER", "STOP_REASON_CONTENT_FILTER"],
    ["STOP_REASON_STOP_PATTERN", undefined],
    [undefined, undefined],
  ])("marks a planner that stopped with %s as %s", (stop, carried) => {
    const [message] = tracker().applySteps([planner(2, "DONE", { modifiedResponse: "text", ...(stop ? { stopReason: stop } : {}) })]);
    expect(message?.type === "message" ? message.stopReason : "no message").toBe(carried);
  });
});

describe("arguments the model got wrong", () => {
  it("pass on as raw text with agy's parse error and a diagnostic, not {}", () => {
    const events = mapped("generic_invalid_arguments_error.json");
    expect(kinds(events)).toEqual(["diagnostic:invalid_tool_arguments", "function_call", "function_call_output"]);
    expect(events[1]).toMatchObject({
      name: "write_to_file",
      arguments: '{"TargetFile":"/home/dev/project/notes.md","CodeContent":"# Notes\n',
      argumentsError: "unexpected end of JSON input",
    });
  });
});

describe("gates of every kind", () => {
  it("surfaces a runCommand gate as a permission with its variant, and waits", () => {
    const events = mapped("run_command_interaction_waiting.json");
    expect(kinds(events)).toEqual(["interaction_requested", "status:waiting"]);
    expect(events[0]).toMatchObject({
      stepIndex: 26,
      stepType: "RUN_COMMAND",
      request: { kind: "permission", variant: "runCommand", action: "command", target: "rm -rf build", description: "Removing the build directory" },
    });
  });

  it("surfaces a filePermission gate as a permission with its variant, and waits", () => {
    const events = mapped("file_permission_waiting.json");
    expect(kinds(events)).toEqual(["interaction_requested", "status:waiting"]);
    expect(events[0]).toMatchObject({
      request: { kind: "permission", variant: "filePermission", action: "file", target: "file:///etc/hosts", description: "Reading the hosts file" },
    });
  });

  it("surfaces a variant it cannot answer as kind other, with the spec as sent, and resolves it as other", () => {
    const t = tracker();
    const waiting = fixture("elicitation_waiting.json");
    const events = t.applySteps([waiting]);
    expect(kinds(events)).toEqual(["interaction_requested", "status:waiting"]);
    expect(events[0]).toMatchObject({
      request: { kind: "other", variant: "elicitation", spec: (waiting["requestedInteraction"] as Record<string, unknown>)["elicitation"] },
    });
    expect(t.pendingInteractions().map((p) => p.request.kind)).toEqual(["other"]);
    const resolved = t.applySteps([{ ...waiting, status: "CORTEX_STEP_STATUS_DONE" }]);
    expect(of(resolved, "interaction_resolved")[0]).toMatchObject({ kind: "other", outcome: "answered" });
    expect(t.pendingInteractions()).toEqual([]);
  });

  it("surfaces a requestedInteraction that names no variant as kind other", () => {
    const step = { ...fixture("run_command_waiting.json"), requestedInteraction: {} };
    const [requested] = tracker().applySteps([step]);
    expect(requested).toMatchObject({ type: "interaction_requested", request: { kind: "other", variant: "", spec: {} } });
  });
});

describe("interactionAnswer", () => {
  const target = (request: InteractionRequest) => ({ trajectoryId: TID, stepIndex: 6, request });
  const permission: InteractionRequest = { kind: "permission", action: "command", target: "pwd", description: "" };

  it("builds the payload of each answerable kind", () => {
    expect(interactionAnswer(target(permission), { allow: true })).toEqual({ trajectoryId: TID, stepIndex: 6, permission: { allow: true } });
    expect(interactionAnswer(target({ ...permission, variant: "runCommand" }), { allow: false })).toEqual({
      trajectoryId: TID,
      stepIndex: 6,
      runCommand: { confirm: false },
    });
    expect(interactionAnswer(target({ ...permission, variant: "filePermission", action: "file" }), { allow: true, scope: "PERMISSION_SCOPE_ONCE" })).toEqual({
      trajectoryId: TID,
      stepIndex: 6,
      filePermission: { allow: true, scope: "PERMISSION_SCOPE_ONCE" },
    });
    const question: InteractionRequest = {
      kind: "question",
      questions: [
        {
          question: "Which?",
          options: [
            { id: "1", text: "A" },
            { id: "2", text: "B" },
          ],
          multiSelect: false,
        },
      ],
    };
    expect(interactionAnswer(target(question), { responses: [{ selectedOptionIds: ["2"] }] })).toEqual({
      trajectoryId: TID,
      stepIndex: 6,
      askQuestion: { responses: [{ question: "Which?", selectedOptionIds: ["2"] }] },
    });
  });

  it("surfaces the filePermission gate at the end of a snapshot, then answers it", () => {
    const steps = fixture("snapshot_file_permission_gate.json")["steps"] as unknown[];
    const events = tracker().applySnapshot({ steps });
    expect(kinds(events).slice(-2)).toEqual(["interaction_requested", "status:waiting"]);
    const requested = of(events, "interaction_requested")[0];
    if (requested === undefined) throw new Error("expected an interaction_requested event");
    expect(interactionAnswer(requested, { allow: true })).toEqual({ trajectoryId: TID, stepIndex: 2, filePermission: { allow: true } });
  });

  it("answers the filePermission gate the mapper surfaced", () => {
    const [requested] = tracker().applySteps([fixture("file_permission_waiting.json")]);
    if (requested?.type !== "interaction_requested") throw new Error(`expected interaction_requested, saw ${requested?.type}`);
    expect(interactionAnswer(requested, { allow: false })).toEqual({ trajectoryId: TID, stepIndex: 27, filePermission: { allow: false } });
  });

  it("refuses a kind it cannot answer with a sentence that says to use the TUI", () => {
    const other: InteractionRequest = { kind: "other", variant: "elicitation", spec: {} };
    expect(() => interactionAnswer(target(other), { allow: true })).toThrow(
      new AgyBridgeError("invalid_argument", "Step 6 waits on the elicitation interaction, which agy-bridge cannot answer over RPC; answer it in the agy TUI."),
    );
  });

  it("refuses a decision that does not fit the kind", () => {
    expect(() => interactionAnswer(target(permission), { responses: [] })).toThrow(/answer it with \{ allow: true \} or \{ allow: false \}\.$/);
  });
});

describe("no step vanishes", () => {
  it.each([
    ["notify_user_done.json", "notify_user"],
    ["task_boundary_done.json", "task_boundary"],
    ["mcp_tool_done.json", "mcp_tickets_list_tickets"],
    ["search_web_done.json", "search_web"],
    ["invoke_subagent_done.json", "invoke_subagent"],
  ])("maps %s to a tool call named %s and an output of its body", (name, tool) => {
    const step = fixture(name);
    const events = mapped(name);
    expect(kinds(events)).toEqual(["function_call", "function_call_output"]);
    expect(events[0]).toMatchObject({ name: tool });
    const bodyKey = Object.keys(step).find((k) => !["_provenance", "type", "status", "metadata"].includes(k)) ?? "";
    expect(JSON.parse((events[1] as EventOf<"function_call_output">).output)).toEqual(step[bodyKey]);
  });

  it("gives one diagnostic per step of an unknown type that carries neither a tool call nor a body", () => {
    const bare = (stepIndex: number) => ({
      type: "CORTEX_STEP_TYPE_BROWSER_SCROLL",
      status: "CORTEX_STEP_STATUS_DONE",
      metadata: { sourceTrajectoryStepInfo: { trajectoryId: TID, stepIndex } },
    });
    const events = tracker().applySteps([bare(40), bare(41)]);
    expect(events).toEqual(
      [40, 41].map((stepIndex) => ({
        type: "diagnostic",
        conversationId: CID,
        trajectoryId: TID,
        stepIndex,
        code: "unknown_step_type",
        message: `Step ${stepIndex} of type BROWSER_SCROLL carries no tool call and no body; it maps to no event.`,
      })),
    );
  });
});

describe("the final delta of a planner that never streamed text", () => {
  const frame = (step: unknown): StreamUpdate =>
    ({ conversationId: CID, mainTrajectoryUpdate: { stepsUpdate: { indices: [2], steps: [step] } } }) as StreamUpdate;

  it("is not sent when the planner ends in ERROR", () => {
    const t = tracker();
    const events = [
      ...t.applyStreamUpdate(frame(planner(2, "GENERATING", { thinking: "Let me think" }))),
      ...t.applyStreamUpdate(frame(planner(2, "ERROR", { thinking: "Let me think" }))),
    ];
    expect(kinds(events)).toEqual(["reasoning_delta", "message"]);
  });

  it("is not sent when a tool-dispatching planner commits without text", () => {
    const t = tracker();
    const events = [...t.applyStreamUpdate(frame(planner(2, "GENERATING", {}))), ...t.applyStreamUpdate(frame(planner(2, "DONE", {})))];
    expect(events).toEqual([]);
  });
});
