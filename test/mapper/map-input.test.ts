/**
 * The forms `agy-bridge map` reads, as the library parses them
 * (mapper/map-input.ts), on our step fixtures: each form's shape, the
 * reason a wrong one is refused with, the conversation it names, and that
 * paging a snapshot gives the events of one call.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MAP_PAGE_STEPS, MapInputError, mapInputConversation, mapInputEvents, parseMapInput, stepConversation } from "../../src/mapper/map-input.js";
import { createTrajectoryTracker } from "../../src/mapper/trajectory-tracker.js";
import { CID, FIXTURES, fixture } from "./load.js";

const text = (name: string) => readFileSync(join(FIXTURES, name), "utf8");

function reason(input: string): string {
  try {
    parseMapInput(input);
  } catch (error) {
    expect(error).toBeInstanceOf(MapInputError);
    return (error as Error).message;
  }
  throw new Error(`parsed without an error: ${JSON.stringify(input)}`);
}

describe("parseMapInput", () => {
  it("reads a snapshot, an array of steps, one step, a frame and frames one per line", () => {
    const snapshot = parseMapInput(text("snapshot_two_turns.json"));
    expect(snapshot.kind).toBe("snapshot");
    const step = fixture("run_command_done.json");
    expect(parseMapInput(JSON.stringify([step, step]))).toEqual({ kind: "steps", steps: [step, step] });
    expect(parseMapInput(JSON.stringify(step))).toEqual({ kind: "steps", steps: [step] });
    expect(parseMapInput('{"update":{"conversationId":"c"}}')).toEqual({ kind: "frames", updates: [{ conversationId: "c" }] });
    const lines = parseMapInput(text("stream_planner_generating.ndjson"));
    expect(lines.kind).toBe("frames");
    expect(lines.kind === "frames" && lines.updates.length).toBeGreaterThan(1);
  });

  it("refuses what is none of them with a reason naming where", () => {
    expect(reason("  \n")).toBe("the input is empty");
    expect(reason("{nope")).toMatch(/^invalid JSON \(/);
    expect(reason('{"update":{}}\n{"update":')).toMatch(/^line 2: invalid JSON \(/);
    expect(reason('{"update":{}}\n[1]')).toBe('line 2: expected a stream frame {"update":{...}}');
    expect(reason("[1, 2]")).toBe("position 0: the array holds no step objects");
    expect(reason('{"steps":["a"]}')).toBe('position 0: "steps" holds no step objects');
    expect(reason('{"other":1}')).toBe('the input is not a step, an array of steps, a {"steps":[...]} response or stream frames');
  });
});

describe("mapInputConversation", () => {
  it("finds the conversation a step, a frame or a capture names, and none where none is named", () => {
    const snapshot = parseMapInput(text("snapshot_two_turns.json"));
    expect(mapInputConversation(snapshot)).toBe(CID);
    expect(stepConversation({ metadata: { sourceTrajectoryStepInfo: { cascadeId: "" } } })).toBeUndefined();
    expect(mapInputConversation({ kind: "frames", updates: [{ conversationId: "from-frame" }] })).toBe("from-frame");
    const steps = snapshot.kind === "snapshot" ? snapshot.steps : [];
    expect(mapInputConversation({ kind: "capture", items: [{ kind: "snapshot", steps }], conversationId: undefined })).toBe(CID);
    expect(mapInputConversation({ kind: "capture", items: [{ kind: "snapshot", steps }], conversationId: "own" })).toBe("own");
    expect(mapInputConversation({ kind: "steps", steps: [{ type: "CORTEX_STEP_TYPE_CHECKPOINT" }] })).toBeUndefined();
  });
});

describe("mapInputEvents", () => {
  it("maps a snapshot longer than a page as one call to the tracker would", () => {
    const snapshot = parseMapInput(text("snapshot_two_turns.json"));
    const steps = snapshot.kind === "snapshot" ? snapshot.steps : [];
    expect(steps.length).toBeGreaterThan(0);
    // Enough copies of the fixture's steps to span three pages.
    const long = Array.from({ length: Math.ceil((MAP_PAGE_STEPS * 2 + 5) / steps.length) }, () => steps).flat();
    const batches = [...mapInputEvents({ kind: "snapshot", steps: long }, createTrajectoryTracker({ conversationId: CID }))];
    expect(batches.length).toBe(Math.ceil(long.length / MAP_PAGE_STEPS));
    const whole = createTrajectoryTracker({ conversationId: CID }).applySnapshot({ steps: long, stepOffset: 0 });
    expect(batches.flat()).toEqual(whole);
    expect(whole.length).toBeGreaterThan(0);
  });
});
