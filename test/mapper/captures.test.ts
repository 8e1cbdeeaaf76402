/**
 * The mapper over every real agy 1.0.10 capture in fixtures/captures/agy-1.0.10 (read
 * in place), one fresh tracker per capture, exact events.
 */
import { describe, expect, it } from "vitest";
import { createTrajectoryTracker, MapperEventSchema, type MapperEvent } from "../../src/mapper/index.js";
import { capture, captureNames } from "./load.js";

const CID = "2399249c-4a48-40f1-bf3b-4c6e5d3a5a0e";
const TID = "efb134b2-d69f-43de-bb54-c9ece346d8a3";
const SCRATCH = "/Users/bryanli/.gemini/antigravity-cli/scratch";
const at = (stepIndex: number) => ({ conversationId: CID, trajectoryId: TID, stepIndex });
const call = (stepIndex: number, name: string) => ({ ...at(stepIndex), callId: `agy_call_${TID}_${stepIndex}`, name });

function mapAlone(name: string): MapperEvent[] {
  const tracker = createTrajectoryTracker({ conversationId: CID });
  return tracker.applySteps([capture(name)]);
}

const QUESTION = "What type of project or improvement would you like to focus on?";
const OPTIONS = [
  { id: "1", text: "(Recommended) Create a new modern web application using HTML, CSS, and JavaScript." },
  { id: "2", text: "Build a command-line interface (CLI) tool or helper script." },
  { id: "3", text: "Set up automated testing for existing scratch scripts." },
  { id: "4", text: "Analyze and refactor the files in the current scratch directory." },
];

describe("real agy 1.0.10 captures", () => {
  it("covers every capture file in the shared directory", () => {
    expect(captureNames()).toHaveLength(18);
  });

  it.each(captureNames())("maps %s to events that satisfy the published schema", (name) => {
    for (const event of mapAlone(name)) expect(MapperEventSchema.parse(event)).toEqual(event);
  });

  it("opens a turn, names the model and commits the user's text for user_input.json", () => {
    expect(mapAlone("user_input.json")).toEqual([
      { type: "status", conversationId: CID, trajectoryId: TID, status: "running", reason: "turn_started" },
      { type: "model_changed", conversationId: CID, trajectoryId: TID, model: "MODEL_PLACEHOLDER_M20" },
      { type: "user_message", conversationId: CID, trajectoryId: TID, text: "Say hello in one short sentence." },
    ]);
  });

  it.each(["conversation_history.json", "checkpoint.json"])("emits nothing for the system step %s", (name) => {
    expect(mapAlone(name)).toEqual([]);
  });

  it("commits the planner text and counts its usage for planner_response_text.json", () => {
    expect(mapAlone("planner_response_text.json")).toEqual([
      {
        type: "message",
        ...at(2),
        messageId: `agy_msg_${TID}_2`,
        role: "assistant",
        failed: false,
        text: "Hello! I am Antigravity, your AI coding assistant, ready to help you with your tasks.",
      },
      {
        type: "usage",
        ...at(2),
        inputTokens: 17161,
        outputTokens: 65,
        thinkingOutputTokens: 44,
        cacheReadTokens: 0,
        model: "MODEL_PLACEHOLDER_M20",
      },
    ]);
  });

  it.each([
    ["planner_response_tool_call_run_command.json", 5, 1031, 418, 351, 16267, "MODEL_PLACEHOLDER_M20"],
    ["planner_response_tool_call_ask_question.json", 11, 2427, 344, 216, 16248, "MODEL_PLACEHOLDER_M20"],
    ["stream_planner_tool_call.json", 5, 3649, 178, 98, 20366, "MODEL_PLACEHOLDER_M71"],
  ] as const)("never mirrors the tool calls of the dispatching planner %s, only its usage", (name, idx, i, o, t, c, model) => {
    expect(mapAlone(name)).toEqual([{ type: "usage", ...at(idx), inputTokens: i, outputTokens: o, thinkingOutputTokens: t, cacheReadTokens: c, model }]);
  });

  it("surfaces the permission of run_command_waiting.json and nothing else", () => {
    const events = mapAlone("run_command_waiting.json");
    expect(events).toEqual([
      {
        type: "interaction_requested",
        ...at(6),
        interactionId: expect.stringMatching(/^int_[0-9a-f]{16}$/),
        stepType: "RUN_COMMAND",
        callId: `agy_call_${TID}_6`,
        request: {
          kind: "permission",
          action: "command",
          target: "pwd",
          description: "Running pwd command",
          suggestedPersistPattern: "pwd",
          persistSuggestionType: "PERSIST_SUGGESTION_TYPE_SUGGESTED",
        },
      },
      { type: "status", ...at(6), status: "waiting", reason: "interaction_pending", waitingFor: "permission" },
    ]);
  });

  it("surfaces the question of ask_question_waiting.json with ids, texts and multiSelect false", () => {
    const [requested] = mapAlone("ask_question_waiting.json");
    expect(requested).toMatchObject({
      type: "interaction_requested",
      ...at(12),
      stepType: "ASK_QUESTION",
      request: { kind: "question", questions: [{ question: QUESTION, options: OPTIONS, multiSelect: false }] },
    });
  });

  it("replays the approved gate of run_command_done.json, then pairs the call and output under the step-derived call id", () => {
    const events = mapAlone("run_command_done.json");
    expect(events.map((e) => (e.type === "status" ? `status:${e.status}` : e.type))).toEqual([
      "interaction_requested",
      "status:waiting",
      "interaction_resolved",
      "status:running",
      "function_call",
      "function_call_output",
    ]);
    expect(events[2]).toMatchObject({
      type: "interaction_resolved",
      ...at(6),
      kind: "permission",
      outcome: "approved",
      stepStatus: "DONE",
      response: { trajectoryId: TID, stepIndex: 6, permission: { allow: true } },
    });
    expect(events.slice(4)).toEqual([
      {
        type: "function_call",
        ...call(6, "run_command"),
        arguments: `{"CommandLine":"pwd","Cwd":"${SCRATCH}","WaitMsBeforeAsync":2000}`,
        description: "Running pwd command",
      },
      { type: "function_call_output", ...call(6, "run_command"), output: `${SCRATCH}\n`, isError: false, stepStatus: "DONE" },
    ]);
  });

  it("closes the call of the synthesized run_command_error.json with a failure marker", () => {
    const events = mapAlone("run_command_error.json");
    expect(events.map((e) => e.type)).toEqual(["interaction_requested", "status", "interaction_resolved", "status", "function_call", "function_call_output"]);
    expect(events[2]).toMatchObject({ type: "interaction_resolved", outcome: "timed_out", stepStatus: "ERROR" });
    expect(events[5]).toEqual({
      type: "function_call_output",
      ...call(6, "run_command"),
      output: "[agy-bridge: run_command did not complete (status ERROR)]",
      isError: true,
      stepStatus: "ERROR",
    });
  });

  it("uses agy's list_dir name and the directory listing for list_directory_done.json", () => {
    const [fc, out] = mapAlone("list_directory_done.json");
    expect(fc).toEqual({
      type: "function_call",
      ...call(10, "list_dir"),
      arguments: `{"DirectoryPath":"${SCRATCH}"}`,
      description: "Listing scratch directory contents",
    });
    expect(out).toMatchObject({ type: "function_call_output", ...call(10, "list_dir"), isError: false });
    const output = (out as { output: string }).output;
    expect(output.startsWith(`{"directoryPathUri":"file://${SCRATCH}","results":[{"name":".pytest_cache","isDir":true},`)).toBe(true);
    expect(JSON.parse(output).results).toHaveLength(11);
  });

  it("reports the chosen option of ask_question_done.json in the output", () => {
    const events = mapAlone("ask_question_done.json");
    expect(events.find((e) => e.type === "interaction_resolved")).toMatchObject({ kind: "question", outcome: "answered", stepStatus: "DONE" });
    const fc = events.find((e) => e.type === "function_call");
    const out = events.find((e) => e.type === "function_call_output");
    expect(fc).toMatchObject({ type: "function_call", ...call(12, "ask_question") });
    expect(fc).not.toHaveProperty("agyToolCallId");
    // From the body, which both projections carry (the stream has no argumentsJson).
    expect(JSON.parse((fc as { arguments: string }).arguments)).toEqual({
      questions: [{ question: QUESTION, options: OPTIONS, selectedOptionIds: ["4"] }],
    });
    expect(JSON.parse((out as { output: string }).output)).toEqual({
      questions: [{ question: QUESTION, options: OPTIONS, selectedOptionIds: ["4"] }],
    });
  });

  it("recovers stream run_command arguments from the body through argumentsOrder", () => {
    expect(mapAlone("stream_run_command_done.json")).toEqual([
      {
        type: "function_call",
        ...call(6, "run_command"),
        arguments: `{"CommandLine":"git status && git log -n 5 --oneline","Cwd":"${SCRATCH}","WaitMsBeforeAsync":5000}`,
        description: "Checking git status and recent commit history",
      },
      {
        type: "function_call_output",
        ...call(6, "run_command"),
        isError: false,
        stepStatus: "DONE",
        output: expect.stringMatching(/^On branch main\r\nYour branch is up to date with 'origin\/main'\.\r\n\r\n/),
      },
    ]);
  });

  it("maps the stream view_file step by prefix-matching AbsolutePath to absolutePathUri", () => {
    expect(mapAlone("stream_view_file_done.json")).toEqual([
      {
        type: "function_call",
        ...call(16, "view_file"),
        arguments: `{"AbsolutePath":"${SCRATCH}/package.json"}`,
        description: "Reading package.json for tech stack details",
      },
      {
        type: "function_call_output",
        ...call(16, "view_file"),
        isError: false,
        stepStatus: "DONE",
        output: `{"absolutePathUri":"file://${SCRATCH}/package.json","endLine":110,"lineRangeBytes":3609,"numLines":111,"numBytes":3609}`,
      },
    ]);
  });

  it("maps the stream list_directory step without a toolCall to list_dir", () => {
    const [fc] = mapAlone("stream_list_directory_done.json");
    expect(fc).toEqual({
      type: "function_call",
      ...call(8, "list_dir"),
      arguments: `{"DirectoryPath":"${SCRATCH}"}`,
      description: "Listing project directory contents",
    });
  });

  it("names the generic tool manage_subagents and outputs its result object", () => {
    const [fc, out] = mapAlone("stream_generic_done.json");
    expect(fc).toEqual({
      type: "function_call",
      ...call(40, "manage_subagents"),
      arguments: `{"Action":"list"}`,
      description: "Checking running subagent statuses",
    });
    const output = JSON.parse((out as { output: string }).output);
    expect(output.result.startsWith("You have 4 active subagent(s):\n")).toBe(true);
    expect(output.stepRenderInfo).toMatchObject({ title: "4 subagents", titlePrefix: "Found", icon: "robot_2" });
  });

  it("commits a stream planner that carries only modifiedResponse", () => {
    const [message] = mapAlone("stream_planner_text_done.json");
    expect(message).toMatchObject({ type: "message", ...at(13), failed: false });
    expect((message as { text: string }).text.startsWith("Here is a status summary of your workspace:\n\n### ")).toBe(true);
  });

  it("gives the poll and stream projections of step 6 the same call id", () => {
    const poll = mapAlone("run_command_done.json").find((e) => e.type === "function_call");
    const stream = mapAlone("stream_run_command_done.json").find((e) => e.type === "function_call");
    expect(poll && "callId" in poll && poll.callId).toBe(stream && "callId" in stream && stream.callId);
  });

  it("gives the poll step and its stream projection the same function_call, byte for byte", () => {
    // The stream projection of a poll step: agy drops toolCall and internalMetadata (spike-notes §3.4).
    for (const name of ["run_command_done.json", "list_directory_done.json", "ask_question_done.json"]) {
      const poll = capture(name) as { metadata: Record<string, unknown> };
      const stream = structuredClone(poll);
      delete stream.metadata["toolCall"];
      delete stream.metadata["internalMetadata"];
      const of = (step: unknown) =>
        JSON.stringify(
          createTrajectoryTracker({ conversationId: CID })
            .applySteps([step])
            .filter((e) => e.type === "function_call"),
        );
      expect(of(stream), name).toBe(of(poll));
    }
  });

  it("resolves the captured question exactly once with the echoed answer when WAITING turns DONE", () => {
    const tracker = createTrajectoryTracker({ conversationId: CID });
    const requested = tracker.applySteps([capture("ask_question_waiting.json")]);
    expect(tracker.pendingInteractions()).toHaveLength(1);
    const done = tracker.applySteps([capture("ask_question_done.json")]);
    const again = tracker.applySteps([capture("ask_question_done.json"), capture("ask_question_waiting.json")]);
    expect(done.map((e) => e.type)).toEqual(["interaction_resolved", "status", "function_call", "function_call_output"]);
    expect(done[1]).toEqual({ type: "status", ...at(12), status: "running", reason: "interaction_resolved" });
    expect(done[0]).toEqual({
      type: "interaction_resolved",
      ...at(12),
      interactionId: (requested[0] as { interactionId: string }).interactionId,
      kind: "question",
      outcome: "answered",
      stepStatus: "DONE",
      response: { trajectoryId: TID, stepIndex: 12, askQuestion: { responses: [{ question: QUESTION, selectedOptionIds: ["4"] }] } },
    });
    expect(again).toEqual([]);
    expect(tracker.pendingInteractions()).toEqual([]);
  });

  it("reports the synthesized timeout of the captured permission as timed_out", () => {
    const tracker = createTrajectoryTracker({ conversationId: CID });
    tracker.applySteps([capture("run_command_waiting.json")]);
    const [resolved] = tracker.applySteps([capture("run_command_error.json")]);
    expect(resolved).toMatchObject({ type: "interaction_resolved", kind: "permission", outcome: "timed_out", stepStatus: "ERROR" });
  });
});
