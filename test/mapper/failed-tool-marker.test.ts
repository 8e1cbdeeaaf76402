/**
 * A tool step that ends without output (an interrupted command) gets a
 * marker naming the tool — the same name as its `function_call`, so the
 * stream projection (which drops `toolCall`) and a snapshot (which has it)
 * give the same event (found by the chaos suite, test/chaos/).
 */
import { describe, expect, it } from "vitest";
import { createTrajectoryTracker, type EventOf } from "../../src/mapper/index.js";

function canceledCommand(withToolCall: boolean): Record<string, unknown> {
  return {
    type: "CORTEX_STEP_TYPE_RUN_COMMAND",
    status: "CORTEX_STEP_STATUS_CANCELED",
    metadata: {
      sourceTrajectoryStepInfo: { trajectoryId: "traj-1", stepIndex: 4 },
      toolAction: "Running the long job",
      ...(withToolCall ? { toolCall: { id: "abcd1234", name: "run_command", argumentsJson: '{"CommandLine":"sleep 600"}' } } : {}),
    },
    runCommand: { commandLine: "sleep 600", cwd: "/home/sim/project" },
  };
}

function output(withToolCall: boolean): EventOf<"function_call_output"> {
  const events = createTrajectoryTracker({ conversationId: "conv-1" }).applySnapshot({ steps: [{}, {}, {}, {}, canceledCommand(withToolCall)], stepOffset: 0 });
  const out = events.find((e): e is EventOf<"function_call_output"> => e.type === "function_call_output");
  if (out === undefined) throw new Error(`no function_call_output among ${events.map((e) => e.type).join(", ")}`);
  return out;
}

describe("the marker of a tool that did not complete", () => {
  it("names the tool the same way with or without agy's toolCall", () => {
    expect(output(false).output).toBe("[agy-bridge: run_command did not complete (status CANCELED)]");
    expect(output(false)).toEqual(output(true));
  });
});
