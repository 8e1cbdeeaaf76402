/**
 * Input a hostile or broken server can send: each case is the minimal input
 * that broke the tracker's contract (a step of the wrong shape, an index that
 * is not one, numbers past 2^53, values JSON cannot hold, wrong arguments).
 * Every event must pass the published schema and serialise.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AgyBridgeError } from "../../src/errors.js";
import { createTrajectoryTracker, MapperEventSchema, type MapperEvent } from "../../src/mapper/index.js";
import type { SnapshotInput, RunStatusInput } from "../../src/mapper/index.js";
import type { StreamUpdate } from "../../src/protocol/wire-schemas.js";
import { CID, TID, clone, fixture } from "./load.js";

const tracker = () => createTrajectoryTracker({ conversationId: CID });
const kinds = (events: MapperEvent[]) => events.map((e) => (e.type === "diagnostic" ? `diagnostic:${e.code}` : e.type));

/** Every event is schema-valid and serialisable; returns them for further checks. */
function valid(events: MapperEvent[]): MapperEvent[] {
  for (const event of events) {
    expect(MapperEventSchema.safeParse(event).success, JSON.stringify(event)?.slice(0, 300)).toBe(true);
  }
  expect(() => JSON.stringify(events)).not.toThrow();
  return events;
}

function planner(stepIndex: number | undefined | unknown, status: string, body: Record<string, unknown>, extraMeta: Record<string, unknown> = {}) {
  return {
    type: "CORTEX_STEP_TYPE_PLANNER_RESPONSE",
    status: `CORTEX_STEP_STATUS_${status}`,
    metadata: {
      sourceTrajectoryStepInfo: { trajectoryId: TID, cascadeId: CID, ...(stepIndex === undefined ? {} : { stepIndex }) },
      ...extraMeta,
    },
    plannerResponse: body,
  };
}

function generic(stepIndex: number, status: string, generic: Record<string, unknown>, meta: Record<string, unknown> = {}) {
  return {
    type: "CORTEX_STEP_TYPE_GENERIC",
    status: `CORTEX_STEP_STATUS_${status}`,
    metadata: { toolCall: { id: "abc12345", name: "tool_x" }, sourceTrajectoryStepInfo: { trajectoryId: TID, stepIndex }, ...meta },
    generic,
  };
}

/** `depth` nested arrays around `inner`, built without recursion. */
function nested(depth: number, inner: unknown = 1): unknown {
  let value = inner;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

describe("a step with a field of the wrong type", () => {
  it.each([
    ["status", (s: Record<string, unknown>) => ({ ...s, status: 7 })],
    ["metadata", (s: Record<string, unknown>) => ({ ...s, metadata: "meta" })],
    ["the planner body", (s: Record<string, unknown>) => ({ ...s, plannerResponse: ["text"] })],
    ["the planner text", (s: Record<string, unknown>) => ({ ...s, plannerResponse: { modifiedResponse: 42 } })],
    ["the trajectory id", (s: Record<string, unknown>) => ({ ...s, metadata: { sourceTrajectoryStepInfo: { trajectoryId: 9 } } })],
    ["requestedInteraction", (s: Record<string, unknown>) => ({ ...s, requestedInteraction: "yes" })],
  ])("is skipped with a diagnostic when %s is wrong, and the steps around it are mapped", (_what, spoil) => {
    const bad = spoil(planner(1, "DONE", { modifiedResponse: "spoiled" }));
    const events = valid(
      tracker().applySnapshot({ steps: [planner(0, "DONE", { modifiedResponse: "before" }), bad, planner(2, "DONE", { modifiedResponse: "after" })] }),
    );
    expect(kinds(events)).toEqual(["message", "diagnostic:invalid_step", "message"]);
    expect(events.filter((e) => e.type === "message").map((e) => e.type === "message" && e.text)).toEqual(["before", "after"]);
    expect(events[1]).toMatchObject({ stepIndex: 1, message: expect.stringMatching(/^A step at index 1 was skipped: its .+\.$/) });
  });
});

describe("invalid step indices", () => {
  it.each([-1, "-5", "12345678901234567890", 2 ** 53, 1.5, true])("skip a step whose own stepIndex is %s instead of mapping it to 0", (index) => {
    const t = tracker();
    const events = valid(t.applySteps([planner(index, "DONE", { modifiedResponse: "bad" }), planner(undefined, "DONE", { modifiedResponse: "step zero" })]));
    expect(kinds(events)).toEqual(["diagnostic:invalid_index", "message"]);
    expect(events[1]).toMatchObject({ stepIndex: 0, text: "step zero" });
  });

  it("skips only the frame entries whose index is bad or missing, and maps the rest by their position", () => {
    const noIndex = (text: string) => planner(undefined, "DONE", { modifiedResponse: text });
    const update = {
      conversationId: CID,
      mainTrajectoryUpdate: { stepsUpdate: { indices: [-1, null, "9007199254740993", 4], steps: [noIndex("a"), noIndex("b"), noIndex("c"), noIndex("d")] } },
    };
    const t = tracker();
    const events = valid(t.applyStreamUpdate(update as unknown as StreamUpdate));
    expect(kinds(events)).toEqual(["diagnostic:invalid_index", "diagnostic:invalid_index", "diagnostic:invalid_index", "message"]);
    expect(events[3]).toMatchObject({ stepIndex: 4, text: "d" });
    expect(valid(t.applySteps([noIndex("zero")]))).toEqual([expect.objectContaining({ type: "message", stepIndex: 0, text: "zero" })]);
  });

  it("skips a snapshot page whose offset would put its steps past 2^53", () => {
    const steps = [planner(undefined, "DONE", { modifiedResponse: "x" }), planner(undefined, "DONE", { modifiedResponse: "y" })];
    const events = valid(tracker().applySnapshot({ steps, stepOffset: Number.MAX_SAFE_INTEGER }));
    expect(kinds(events)).toEqual(["diagnostic:invalid_index"]);
  });
});

describe("token counts at the boundary", () => {
  const usageOf = (events: MapperEvent[]) => events.filter((e) => e.type === "usage");

  it("refuses a count that is not a safe integer and keeps the totals valid", () => {
    const events = valid(tracker().applySteps([planner(2, "DONE", {}, { modelUsage: { inputTokens: "5", outputTokens: 1e21 } })]));
    expect(kinds(events)).toEqual(["diagnostic:invalid_number", "usage"]);
    expect(usageOf(events)[0]).toMatchObject({ inputTokens: 5, outputTokens: 0 });
  });

  it("never lets a running total pass 2^53-1, however many legal counts arrive", () => {
    const t = tracker();
    const steps = Array.from({ length: 10 }, (_, i) => planner(i + 1, "DONE", {}, { modelUsage: { outputTokens: "999999999999999" } }));
    const events = valid(t.applySteps(steps));
    const totals = usageOf(events).map((e) => e.type === "usage" && e.outputTokens);
    expect(totals.at(-1)).toBe(9 * 999999999999999);
    expect(events.filter((e) => e.type === "diagnostic" && e.code === "invalid_number")).toHaveLength(1);
  });

  it("refuses counts that would sum to Infinity", () => {
    const events = valid(tracker().applySteps([1, 2].map((i) => planner(i, "DONE", {}, { modelUsage: { inputTokens: 1e308 } }))));
    expect(kinds(events)).toEqual(["diagnostic:invalid_number", "usage", "diagnostic:invalid_number", "usage"]);
    expect(usageOf(events).map((e) => e.type === "usage" && e.inputTokens)).toEqual([0, 0]);
  });
});

describe("values JSON cannot hold", () => {
  function resolvedWithEcho(response: unknown): MapperEvent[] {
    const t = tracker();
    t.applySteps([fixture("run_command_waiting.json")]);
    const done = { ...fixture("run_command_done.json"), completedInteractions: [{ request: {}, response }] };
    return valid(t.applySteps([done]));
  }

  it("leaves out an echo nested 5,000 deep, with a diagnostic", () => {
    const events = resolvedWithEcho({ permission: nested(5000) });
    const resolved = events.find((e) => e.type === "interaction_resolved");
    // The echo is unreadable; the step's permission grant still records the allow.
    expect(resolved).toMatchObject({ outcome: "approved" });
    expect(resolved && "response" in resolved).toBe(false);
    expect(kinds(events)).toContain("diagnostic:unserializable_value");
  });

  it.each([
    ["a BigInt", { stepIndex: 10n }],
    [
      "a cycle",
      (() => {
        const o: Record<string, unknown> = {};
        o["self"] = o;
        return o;
      })(),
    ],
  ])("leaves out an echo holding %s", (_what, response) => {
    const events = resolvedWithEcho(response);
    expect(kinds(events)).toEqual(["diagnostic:unserializable_value", "interaction_resolved", "status", "function_call", "function_call_output"]);
  });

  it("copies a plain echo, keeping a __proto__ key as an ordinary key", () => {
    const response = JSON.parse('{"permission":{"allow":true},"__proto__":{"polluted":1}}') as unknown;
    const resolved = resolvedWithEcho(response).find((e) => e.type === "interaction_resolved");
    expect(JSON.stringify(resolved && "response" in resolved ? resolved.response : null)).toBe('{"permission":{"allow":true},"__proto__":{"polluted":1}}');
  });

  it("reports tool arguments nested too deep to serialise instead of sending {} silently", () => {
    const events = valid(tracker().applySteps([generic(3, "DONE", { args: { Deep: nested(20_000) }, result: { result: "ok" } })]));
    expect(kinds(events)).toEqual(["diagnostic:unserializable_value", "function_call", "function_call_output"]);
    expect(events[1]).toMatchObject({ arguments: "{}" });
  });

  it("passes agy's own argumentsJson text on when its parsed form is too deep to serialise again", () => {
    const text = `{"Deep":${"[".repeat(20_000)}${"]".repeat(20_000)}}`;
    const step = generic(3, "DONE", { result: { result: "ok" } }, { toolCall: { id: "abc12345", name: "tool_x", argumentsJson: text } });
    const events = valid(tracker().applySteps([step]));
    expect(kinds(events)).toEqual(["diagnostic:unserializable_value", "function_call", "function_call_output"]);
    expect(events[1]).toMatchObject({ arguments: text });
  });

  it("reports a tool body too deep to serialise instead of an empty output without a word", () => {
    const events = valid(tracker().applySteps([generic(3, "DONE", { args: {}, result: { deep: nested(20_000) } })]));
    expect(kinds(events)).toEqual(["diagnostic:unserializable_value", "function_call", "function_call_output"]);
    expect(events[2]).toMatchObject({ output: "" });
  });

  it("keeps an argument named __proto__ as an ordinary key", () => {
    const fromJson = generic(3, "DONE", {}, { toolCall: { id: "abc12345", name: "tool_x", argumentsJson: '{"__proto__":{"a":1},"b":2}' } });
    const fromArgs = generic(4, "DONE", { args: JSON.parse('{"__proto__":"x","toolAction":"y"}') as unknown });
    const calls = valid(tracker().applySteps([fromJson, fromArgs])).filter((e) => e.type === "function_call");
    expect(calls.map((e) => e.type === "function_call" && e.arguments)).toEqual(['{"__proto__":{"a":1},"b":2}', '{"__proto__":"x"}']);
  });
});

describe("entry points called wrongly", () => {
  const t = tracker();
  it.each([
    ["applySnapshot(null)", () => t.applySnapshot(null as unknown as SnapshotInput)],
    ["applySnapshot()", () => (t.applySnapshot as () => unknown)()],
    ["applyRunStatus(null)", () => t.applyRunStatus(null as unknown as RunStatusInput)],
    ["applySteps(null)", () => t.applySteps(null as unknown as unknown[])],
  ])("%s throws an invalid_argument AgyBridgeError with a sentence", (_call, call) => {
    let thrown: unknown;
    try {
      call();
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AgyBridgeError);
    expect(thrown).toMatchObject({ code: "invalid_argument", message: expect.stringMatching(/^apply\w+ needs .+; pass (one|an array)\.$/) });
  });

  it("treats a snapshot page whose steps are not a list as a diagnostic, not a throw", () => {
    expect(kinds(tracker().applySnapshot({ steps: "nope" as unknown as unknown[] }))).toEqual(["diagnostic:invalid_step"]);
  });
});

describe("an interaction whose step is re-sent without a type", () => {
  /** A WAITING step without tool markers, and its DONE version re-sent with no `type` at all. */
  function bareGate(status: string, typed: boolean): Record<string, unknown> {
    return {
      ...(typed ? { type: "CORTEX_STEP_TYPE_RUN_COMMAND" } : {}),
      status: `CORTEX_STEP_STATUS_${status}`,
      metadata: { sourceTrajectoryStepInfo: { trajectoryId: TID, stepIndex: 6 } },
      requestedInteraction: { permission: { resource: { action: "command", target: "ls" } } },
    };
  }

  it("still closes, so nothing stays pending once the step is DONE", () => {
    const t = tracker();
    expect(kinds(t.applySteps([bareGate("WAITING", true)]))).toEqual(["interaction_requested", "status"]);
    const events = valid(t.applySteps([bareGate("DONE", false)]));
    expect(kinds(events)).toEqual(["interaction_resolved", "status", "diagnostic:unknown_step_type"]);
    expect(t.pendingInteractions()).toEqual([]);
    expect(t.stepState(TID, 6)).toEqual({ stepType: "", status: "DONE", settled: true });
  });
});

describe("a step whose own stepIndex disagrees with its position", () => {
  const gate = (stepIndex: unknown) => ({
    type: "CORTEX_STEP_TYPE_RUN_COMMAND",
    status: "CORTEX_STEP_STATUS_WAITING",
    metadata: { sourceTrajectoryStepInfo: { trajectoryId: TID, cascadeId: CID, stepIndex } },
    requestedInteraction: { permission: { resource: { action: "command", target: "ls" } } },
  });
  const user = (stepIndex: number) => ({
    type: "CORTEX_STEP_TYPE_USER_INPUT",
    status: "CORTEX_STEP_STATUS_DONE",
    metadata: { executionId: "exec-1", sourceTrajectoryStepInfo: { trajectoryId: TID, cascadeId: CID, stepIndex } },
    userInput: { userResponse: "next question" },
  });
  const gateFrame = (index: number, stepIndex: unknown) =>
    ({ conversationId: CID, trajectoryId: TID, mainTrajectoryUpdate: { stepsUpdate: { indices: [index], steps: [gate(stepIndex)] } } }) as StreamUpdate;
  /** The fuzz invariant: every pending interaction's step, as the tracker keeps it, is still WAITING. */
  const pendingStatuses = (t: ReturnType<typeof tracker>) =>
    t.pendingInteractions().map((p) => [p.stepIndex, t.stepState(p.trajectoryId, p.stepIndex)?.status]);

  it("keys the gate by the frame's index, so a step settling at its own claimed index leaves it waiting", () => {
    const t = tracker();
    const first = valid(t.applyStreamUpdate(gateFrame(5, "7")));
    expect(kinds(first)).toEqual(["diagnostic:index_mismatch", "interaction_requested", "status"]);
    expect(first.map((e) => "stepIndex" in e && e.stepIndex)).toEqual([5, 5, 5]);
    valid(t.applySnapshot({ steps: [user(7)], stepOffset: 7 }));
    expect(pendingStatuses(t)).toEqual([[5, "WAITING"]]);
    expect(t.stepState(TID, 7)).toEqual({ stepType: "USER_INPUT", status: "DONE", settled: true });
  });

  it("closes a gate, as cancelled, when a USER_INPUT takes its index", () => {
    const t = tracker();
    const requested = valid(t.applyStreamUpdate(gateFrame(7, 7)));
    const interactionId = requested.find((e) => e.type === "interaction_requested")?.interactionId;
    const events = valid(t.applySnapshot({ steps: [user(7)], stepOffset: 7 }));
    expect(kinds(events)).toEqual(["interaction_resolved", "status", "user_message"]);
    expect(events[0]).toMatchObject({ interactionId, stepIndex: 7, outcome: "cancelled", stepStatus: "DONE" });
    expect(pendingStatuses(t)).toEqual([]);
  });
});

describe("any JSON at all", () => {
  it("never throws and emits only schema-valid, serialisable events", () => {
    const base = [fixture("user_input.json"), fixture("run_command_waiting.json"), fixture("run_command_done.json"), fixture("planner_response_text.json")];
    const mutated = fc.tuple(
      fc.nat(base.length - 1),
      fc.constantFrom("type", "status", "metadata", "runCommand", "requestedInteraction", "completedInteractions"),
      fc.jsonValue(),
    );
    const count = fc.oneof(fc.double(), fc.constantFrom("999999999999999", "9007199254740991", 1e21), fc.stringMatching(/^\d{1,17}$/), fc.jsonValue());
    const usage = fc.record({ inputTokens: count, outputTokens: count, thinkingOutputTokens: count, cacheReadTokens: count }, { requiredKeys: [] });
    fc.assert(
      fc.property(
        fc.array(mutated, { maxLength: 6 }),
        fc.array(fc.jsonValue(), { maxLength: 3 }),
        fc.array(usage, { maxLength: 4 }),
        (mutations, extra, usages) => {
          const steps: unknown[] = clone(base);
          for (const [i, key, value] of mutations) (steps[i] as Record<string, unknown>)[key] = value;
          usages.forEach((modelUsage, i) => steps.push(planner(10 + i, "DONE", {}, { modelUsage })));
          const t = tracker();
          valid(t.applySnapshot({ steps: [...steps, ...extra] }));
          valid(
            t.applyStreamUpdate({ conversationId: CID, mainTrajectoryUpdate: { stepsUpdate: { indices: steps.map((_, i) => i), steps } } } as StreamUpdate),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("asking whether a step needs its full version", () => {
  it("never throws on any JSON in the step's fields, and answers false for what is not a readable step", () => {
    const base = fixture("ask_question_multi_select_waiting.json");
    fc.assert(
      fc.property(fc.constantFrom("metadata", "requestedInteraction", "askQuestion", "status", "type"), fc.jsonValue(), fc.nat(20), (field, value, index) => {
        const step = { ...clone(base), [field]: value };
        const answer = tracker().needsFullStep(step, index);
        expect(typeof answer).toBe("boolean");
      }),
      { numRuns: 300 },
    );
    for (const value of [null, 42, "step", [], { metadata: { argumentsOrder: [1, null, {}] }, status: "CORTEX_STEP_STATUS_DONE" }]) {
      expect(tracker().needsFullStep(value, 0)).toBe(false);
    }
  });
});
