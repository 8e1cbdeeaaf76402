/** Tool naming, argument recovery, outputs and ids. */
import { describe, expect, it } from "vitest";
import { callIdFor, createTrajectoryTracker, fnv1a64, interactionIdFor, type MapperEvent } from "../../src/mapper/index.js";

const TID = "traj";
function toolStep(type: string, status: string, body: Record<string, unknown>, meta: Record<string, unknown> = {}) {
  return {
    type: `CORTEX_STEP_TYPE_${type}`,
    status: `CORTEX_STEP_STATUS_${status}`,
    metadata: { toolAction: "Doing it", sourceTrajectoryStepInfo: { trajectoryId: TID, stepIndex: 3 }, ...meta },
    ...body,
  };
}
const mapOne = (step: unknown): MapperEvent[] => createTrajectoryTracker({ conversationId: "conv" }).applySteps([step]);
const callOf = (events: MapperEvent[]) => events.find((e) => e.type === "function_call") as Extract<MapperEvent, { type: "function_call" }>;
const outputOf = (events: MapperEvent[]) =>
  events.find((e) => e.type === "function_call_output") as Extract<MapperEvent, { type: "function_call_output" }>;

describe("tool arguments", () => {
  it("prefers an exact key over a suffixed sibling that comes first", () => {
    const step = toolStep("RUN_COMMAND", "DONE", { runCommand: { commandLineDisplay: "shown", commandLine: "real" } }, { argumentsOrder: ["CommandLine"] });
    expect(callOf(mapOne(step)).arguments).toBe('{"CommandLine":"real"}');
  });

  it("falls back from malformed argumentsJson to the typed body", () => {
    const step = toolStep("VIEW_FILE", "DONE", { viewFile: { absolutePathUri: "file:///a" } }, {
      argumentsOrder: ["AbsolutePath", "toolAction"], toolCall: { id: "abc", argumentsJson: "{oops" },
    });
    expect(callOf(mapOne(step)).arguments).toBe('{"AbsolutePath":"file:///a"}');
  });

  it("strips toolAction and toolSummary from parsed arguments", () => {
    const step = toolStep("GENERIC", "DONE", { generic: { args: { Action: "list", toolAction: "x", toolSummary: "y" } } });
    expect(callOf(mapOne(step)).arguments).toBe('{"Action":"list"}');
  });

  it("gives {} when nothing can be recovered", () => {
    expect(callOf(mapOne(toolStep("CODE_ACTION", "DONE", {}))).arguments).toBe("{}");
  });
});

describe("tool outputs", () => {
  it("closes a DONE tool step that has no typed body with an empty output", () => {
    expect(outputOf(mapOne(toolStep("RUN_COMMAND", "DONE", {})))).toMatchObject({ output: "", isError: false, name: "run_command" });
  });

  it("marks a failed step without a tool name generically", () => {
    expect(outputOf(mapOne(toolStep("RUN_COMMAND", "CANCELED", {}))).output).toBe("[agy-bridge: the tool did not complete (status CANCELED)]");
  });

  it("emits nothing for a tool step that has not settled", () => {
    expect(mapOne(toolStep("RUN_COMMAND", "RUNNING", { runCommand: { commandLine: "ls" } }))).toEqual([]);
  });
});

describe("ids", () => {
  it("implements FNV-1a 64 (published test vectors)", () => {
    expect(fnv1a64("")).toBe("cbf29ce484222325");
    expect(fnv1a64("a")).toBe("af63dc4c8601ec8c");
    expect(fnv1a64("foobar")).toBe("85944171f73967e8");
  });

  it("derives interaction ids from conversation, trajectory and index", () => {
    const id = interactionIdFor("c", "t", 6);
    expect(id).toBe(`int_${fnv1a64("c\nt\n6")}`);
    expect(interactionIdFor("c", "t", 7)).not.toBe(id);
    expect(callIdFor("t", 6)).toBe("agy_call_t_6");
  });

  it("falls back to the conversation id for steps without a trajectory id", () => {
    const step = toolStep("RUN_COMMAND", "DONE", {});
    delete (step.metadata.sourceTrajectoryStepInfo as Record<string, unknown>)["trajectoryId"];
    expect(callOf(mapOne(step)).callId).toBe("agy_call_conv_3");
  });
});
