/** `agy-bridge map`, driven in-process through main() with fake streams. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { MapperEventSchema } from "../../src/mapper/index.js";
import { CAPTURES, CID, FIXTURES } from "./load.js";

function sink(): { stream: Writable; text: () => string } {
  let text = "";
  const stream = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}

async function cli(argv: string[], stdinText = ""): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdin = new PassThrough();
  stdin.end(stdinText);
  const out = sink();
  const err = sink();
  const code = await main({ argv, env: {}, stdin, stdout: out.stream, stderr: err.stream, signal: new AbortController().signal });
  return { code, stdout: out.text(), stderr: err.text() };
}

const lines = (stdout: string) => stdout.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Record<string, unknown>);
const dir = mkdtempSync(join(tmpdir(), "agy-bridge-map-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("agy-bridge map", () => {
  it("prints help with --help and exits 0", async () => {
    const { code, stdout } = await cli(["map", "--help"]);
    expect(code).toBe(0);
    expect(stdout).toContain("Usage: agy-bridge map [FILE|-] [--conversation ID]");
  });

  it("maps a GetCascadeTrajectorySteps response file to schema-valid NDJSON events", async () => {
    const { code, stdout, stderr } = await cli(["map", join(FIXTURES, "snapshot_two_turns.json")]);
    expect([code, stderr]).toEqual([0, ""]);
    const events = lines(stdout);
    expect(events.map((e) => e["type"])).toEqual([
      "status", "model_changed", "user_message", "message", "usage", "status",
      "status", "model_changed", "user_message", "usage", "function_call", "function_call_output", "message", "usage", "status",
    ]);
    for (const e of events) MapperEventSchema.parse(e);
    expect(events.every((e) => e["conversationId"] === CID)).toBe(true);
  });

  it("reads NDJSON stream frames from stdin when the file is -", async () => {
    const { readFileSync } = await import("node:fs");
    const input = readFileSync(join(FIXTURES, "stream_question_timeout_retry.ndjson"), "utf8");
    const { code, stdout } = await cli(["map", "-"], input);
    expect(code).toBe(0);
    expect(lines(stdout).filter((e) => e["type"] === "interaction_requested").map((e) => e["stepIndex"])).toEqual([4, 5]);
  });

  it("maps one real captured step and takes the conversation from its cascadeId", async () => {
    const { code, stdout } = await cli(["map", join(CAPTURES, "run_command_done.json")]);
    expect(code).toBe(0);
    expect(lines(stdout).map((e) => [e["type"], e["conversationId"]])).toEqual([
      ["function_call", "2399249c-4a48-40f1-bf3b-4c6e5d3a5a0e"],
      ["function_call_output", "2399249c-4a48-40f1-bf3b-4c6e5d3a5a0e"],
    ]);
  });

  it("maps an array of steps and honours --conversation", async () => {
    const file = join(dir, "array.json");
    const { readFileSync } = await import("node:fs");
    const steps = ["user_input.json", "planner_response_text.json"].map((n) => JSON.parse(readFileSync(join(FIXTURES, n), "utf8")));
    writeFileSync(file, JSON.stringify(steps));
    const { code, stdout } = await cli(["map", file, "--conversation", "other-id"]);
    expect(code).toBe(0);
    const events = lines(stdout);
    expect(events.map((e) => e["type"])).toEqual(["status", "model_changed", "user_message", "message", "usage", "status"]);
    expect(new Set(events.map((e) => e["conversationId"]))).toEqual(new Set(["other-id"]));
  });

  it("rejects invalid JSON with the position and writes nothing to stdout", async () => {
    const { code, stdout, stderr } = await cli(["map", "-"], '{"type": "CORTEX_STEP_TYPE_USER_INPUT",, }');
    expect([code, stdout]).toEqual([1, ""]);
    expect(stderr).toMatch(/^agy-bridge map: invalid JSON \(.*position \d+.*\)\n$/);
  });

  it("rejects a bad NDJSON line by number even after good lines, writing nothing", async () => {
    const good = JSON.stringify({ update: { conversationId: CID } });
    const { code, stdout, stderr } = await cli(["map", "-"], `${good}\n${good}\n{"update": 5}\n`);
    expect([code, stdout]).toEqual([1, ""]);
    expect(stderr).toMatch(/^agy-bridge map: line 3: /);
    expect(stderr.trim().split("\n")).toHaveLength(1);
  });

  it("rejects an array element that is not a step by its position", async () => {
    const { code, stdout, stderr } = await cli(["map", "-", "--conversation", "c"], '[{"type":"CORTEX_STEP_TYPE_CHECKPOINT"}, 7]');
    expect([code, stdout]).toEqual([1, ""]);
    expect(stderr).toBe("agy-bridge map: position 1: expected a step object\n");
  });

  it("rejects input without a conversation id unless --conversation is given", async () => {
    const step = '{"type":"CORTEX_STEP_TYPE_CHECKPOINT","status":"CORTEX_STEP_STATUS_DONE"}';
    const missing = await cli(["map", "-"], step);
    expect([missing.code, missing.stdout]).toEqual([1, ""]);
    expect(missing.stderr).toContain("--conversation ID");
    expect((await cli(["map", "-", "--conversation", "c"], step)).code).toBe(0);
  });

  it("rejects empty input, a missing file and unknown options", async () => {
    expect((await cli(["map", "-"], "  \n")).stderr).toBe("agy-bridge map: the input is empty\n");
    const missing = await cli(["map", join(dir, "nope.json")]);
    expect([missing.code, missing.stdout]).toEqual([1, ""]);
    expect(missing.stderr).toMatch(/^agy-bridge map: cannot read .*nope\.json/);
    expect((await cli(["map", "--frobnicate"])).code).toBe(2);
  });
});
