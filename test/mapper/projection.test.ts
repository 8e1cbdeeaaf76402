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
const outputOf = (events: MapperEvent[]) => events.find((e) => e.type === "function_call_output") as Extract<MapperEvent, { type: "function_call_output" }>;

describe("tool arguments", () => {
  it("prefers an exact key over a suffixed sibling that comes first", () => {
    const step = toolStep("RUN_COMMAND", "DONE", { runCommand: { commandLineDisplay: "shown", commandLine: "real" } }, { argumentsOrder: ["CommandLine"] });
    expect(callOf(mapOne(step)).arguments).toBe('{"CommandLine":"real"}');
  });

  it("falls back from malformed argumentsJson to the typed body", () => {
    const step = toolStep(
      "VIEW_FILE",
      "DONE",
      { viewFile: { absolutePathUri: "file:///a" } },
      {
        argumentsOrder: ["AbsolutePath", "toolAction"],
        toolCall: { id: "abc", argumentsJson: "{oops" },
      },
    );
    expect(callOf(mapOne(step)).arguments).toBe('{"AbsolutePath":"/a"}');
  });

  it("prefers the typed body over argumentsJson, so the poll and stream projections give the same arguments", () => {
    const body = { runCommand: { commandLine: "pwd", cwd: "/w", waitMsBeforeAsync: "2000" } };
    const meta = { argumentsOrder: ["CommandLine", "Cwd", "WaitMsBeforeAsync", "toolAction"] };
    const poll = toolStep("RUN_COMMAND", "DONE", body, {
      ...meta,
      toolCall: { id: "q7tk2m9d", argumentsJson: '{"CommandLine":"pwd","Cwd":"/w","WaitMsBeforeAsync":2000,"toolAction":"x"}' },
    });
    const stream = toolStep("RUN_COMMAND", "DONE", body, meta);
    expect(callOf(mapOne(poll))).toEqual(callOf(mapOne(stream)));
    expect(callOf(mapOne(stream)).arguments).toBe('{"CommandLine":"pwd","Cwd":"/w","WaitMsBeforeAsync":2000}');
    expect(callOf(mapOne(poll))).not.toHaveProperty("agyToolCallId");
  });

  it("gives file:// URIs as paths (escapes decoded) and int64 text as numbers, at the top level only", () => {
    const step = toolStep("GENERIC", "DONE", {
      generic: {
        args: {
          Local: "file:///home/me/My%20Docs/a.txt",
          Host: "file://localhost/etc/hosts",
          Remote: "file://server/share",
          Drive: "file:///C:/x",
          Bad: "file:///a%zz",
          Count: "2000",
          Negative: "-5",
          Padded: "007",
          Huge: "99999999999999999",
          Text: "2000 rows",
          Nested: { Path: "file:///n", Count: "1" },
        },
      },
    });
    expect(JSON.parse(callOf(mapOne(step)).arguments)).toEqual({
      Local: "/home/me/My Docs/a.txt",
      Host: "/etc/hosts",
      Remote: "file://server/share",
      Drive: "C:/x",
      Bad: "/a%zz",
      Count: 2000,
      Negative: -5,
      Padded: "007",
      Huge: "99999999999999999",
      Text: "2000 rows",
      Nested: { Path: "file:///n", Count: "1" },
    });
  });

  it("keeps an argument named __proto__ as an ordinary key while normalising it", () => {
    const args = JSON.parse('{"__proto__":"file:///p","n":"1"}') as Record<string, unknown>;
    expect(callOf(mapOne(toolStep("GENERIC", "DONE", { generic: { args } }))).arguments).toBe('{"__proto__":"/p","n":1}');
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

  it("marks a failed step without agy's tool name with the call's name, from its type", () => {
    // The stream projection drops toolCall: the marker must not depend on it (a replay has it).
    expect(outputOf(mapOne(toolStep("RUN_COMMAND", "CANCELED", {}))).output).toBe("[agy-bridge: run_command did not complete (status CANCELED)]");
  });

  it("marks a declined command declined and an error, with the user's instruction, although agy left it DONE", () => {
    const step = toolStep("RUN_COMMAND", "DONE", {
      runCommand: { commandLine: "rm -rf build" },
      permissions: { permissionGrants: [{ resource: { action: "command", target: "rm -rf build" } }] },
      completedInteractions: [{ request: {}, response: { trajectoryId: TID, stepIndex: 3, permission: { userDenyInstruction: "use git clean instead" } } }],
    });
    expect(outputOf(mapOne(step))).toEqual({
      type: "function_call_output",
      conversationId: "conv",
      trajectoryId: TID,
      stepIndex: 3,
      callId: "agy_call_traj_3",
      name: "run_command",
      output: "[agy-bridge: the user declined run_command; it did not run. Instruction: use git clean instead]",
      isError: true,
      stepStatus: "DONE",
      declined: true,
    });
  });

  it.each([
    ["a permission grant without allow", { permissions: { permissionGrants: [{ resource: {} }] } }],
    ["a filePermission echo without allow", { completedInteractions: [{ response: { filePermission: {} } }] }],
    ["a runCommand echo without confirm", { completedInteractions: [{ response: { runCommand: { proposedCommandLine: "x" } } }] }],
  ])("reads %s as a decline", (_what, records) => {
    expect(outputOf(mapOne(toolStep("VIEW_FILE", "DONE", records)))).toMatchObject({ declined: true, isError: true });
  });

  it.each([
    ["an allowed permission grant", { permissions: { permissionGrants: [{ resource: {}, allow: true }] } }],
    ["a runCommand echo with confirm", { completedInteractions: [{ response: { runCommand: { confirm: true } } }] }],
    ["no record at all", {}],
  ])("does not mark a call with %s declined", (_what, records) => {
    const output = outputOf(mapOne(toolStep("RUN_COMMAND", "DONE", records)));
    expect(output).toMatchObject({ isError: false });
    expect(output).not.toHaveProperty("declined");
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
