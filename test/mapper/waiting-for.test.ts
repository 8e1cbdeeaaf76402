/**
 * `waitingFor`: the word a `waiting` status carries, from the request that
 * opened the wait, and the fold every front door reads it with.
 */
import { describe, expect, it } from "vitest";
import {
  createTrajectoryTracker,
  currentWaitingFor,
  type InteractionRequest,
  type MapperEvent,
  StatusEventSchema,
  waitingForRequest,
  waitingForStep,
} from "../../src/mapper/index.js";
import { CID, fixture } from "./load.js";

function statuses(events: MapperEvent[]): MapperEvent[] {
  return events.filter((e) => e.type === "status");
}

const command: InteractionRequest = { kind: "permission", variant: "runCommand", action: "command", target: "npm test", description: "" };
const question: InteractionRequest = { kind: "question", questions: [{ question: "Which?", options: [{ id: "1", text: "A" }], multiSelect: false }] };
const elicitation: InteractionRequest = { kind: "other", variant: "elicitation", spec: {} };

describe("the waiting status edge", () => {
  it.each([
    ["run_command_waiting.json", "permission"],
    ["run_command_interaction_waiting.json", "permission"],
    ["file_permission_waiting.json", "file"],
    ["ask_question_waiting.json", "question"],
    ["elicitation_waiting.json", "tui_prompt"],
  ])("says what %s waits for: %s", (name, word) => {
    const t = createTrajectoryTracker({ conversationId: CID });
    const [edge, ...rest] = statuses(t.applySteps([fixture(name)]));
    expect(rest).toEqual([]);
    expect(edge).toMatchObject({ type: "status", status: "waiting", reason: "interaction_pending", waitingFor: word });
  });

  it("carries waitingFor on no other edge", () => {
    const t = createTrajectoryTracker({ conversationId: CID });
    const waiting = fixture("run_command_waiting.json");
    const done = { ...fixture("run_command_waiting.json"), status: "CORTEX_STEP_STATUS_DONE" };
    const edges = statuses([...t.applySteps([waiting]), ...t.applySteps([done])]);
    expect(edges.map((e) => (e.type === "status" ? [e.status, e.waitingFor] : []))).toEqual([
      ["waiting", "permission"],
      ["running", undefined],
    ]);
    expect(Object.hasOwn(edges[1]!, "waitingFor")).toBe(false);
  });

  it("keeps old status events valid: waitingFor is optional, and only the five words pass", () => {
    expect(StatusEventSchema.safeParse({ type: "status", conversationId: CID, status: "waiting", reason: "interaction_pending" }).success).toBe(true);
    expect(
      StatusEventSchema.safeParse({ type: "status", conversationId: CID, status: "waiting", reason: "interaction_pending", waitingFor: "background_task" })
        .success,
    ).toBe(true);
    expect(
      StatusEventSchema.safeParse({ type: "status", conversationId: CID, status: "waiting", reason: "interaction_pending", waitingFor: "coffee" }).success,
    ).toBe(false);
  });
});

describe("waitingForRequest", () => {
  it("names a generic permission on a file as file, and any other permission as permission", () => {
    expect(waitingForRequest({ kind: "permission", action: "file", target: "file:///w/a.txt", description: "" })).toBe("file");
    expect(waitingForRequest({ kind: "permission", action: "command", target: "pwd", description: "" })).toBe("permission");
    expect(waitingForRequest({ kind: "permission", action: "browser", target: "x", description: "" })).toBe("permission");
    expect(waitingForRequest(question)).toBe("question");
    expect(waitingForRequest(elicitation)).toBe("tui_prompt");
  });

  it("reads a waiting step as GetAllCascadeTrajectories carries it, and nothing from a step without a request", () => {
    expect(waitingForStep(fixture("file_permission_waiting.json"))).toBe("file");
    expect(waitingForStep(fixture("run_command_done.json"))).toBe("permission");
    expect(waitingForStep(fixture("user_input.json"))).toBeUndefined();
    expect(waitingForStep("not a step")).toBeUndefined();
  });
});

describe("currentWaitingFor", () => {
  it("is nothing unless the status is waiting", () => {
    expect(currentWaitingFor("running", [{ request: command }], "permission")).toBeUndefined();
    expect(currentWaitingFor("idle", [], undefined)).toBeUndefined();
  });

  it("follows the oldest request still open, not a stale edge", () => {
    // The edge said permission; that request was answered and a question stays open.
    expect(currentWaitingFor("waiting", [{ request: question }, { request: command }], "permission")).toBe("question");
  });

  it("falls back on the edge when no request is open for a person (the policy answers it)", () => {
    expect(currentWaitingFor("waiting", [], "file")).toBe("file");
    expect(currentWaitingFor("waiting", [], undefined)).toBeUndefined();
  });
});
