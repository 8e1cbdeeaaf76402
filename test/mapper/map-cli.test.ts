/** `agy-bridge map`, driven in-process through main() with fake streams. */
import { mkdtempSync, readFileSync as readSource, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { PassThrough, Writable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { MapperEventSchema } from "../../src/mapper/index.js";
import { createTrajectoryTracker } from "../../src/mapper/trajectory-tracker.js";
import { runMain, textSink } from "../support/cli-io.js";
import { CAPTURES, CID, FIXTURES } from "./load.js";

async function cli(argv: string[], stdinText = ""): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdin = new PassThrough();
  stdin.end(stdinText);
  return runMain(argv, { stdin });
}

const lines = (stdout: string) =>
  stdout
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
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
      "status",
      "model_changed",
      "user_message",
      "message",
      "usage",
      "status",
      "status",
      "model_changed",
      "user_message",
      "usage",
      "interaction_requested",
      "status",
      "interaction_resolved",
      "status",
      "function_call",
      "function_call_output",
      "message",
      "usage",
      "status",
    ]);
    for (const e of events) MapperEventSchema.parse(e);
    expect(events.every((e) => e["conversationId"] === CID)).toBe(true);
  });

  it("reads NDJSON stream frames from stdin when the file is -", async () => {
    const { readFileSync } = await import("node:fs");
    const input = readFileSync(join(FIXTURES, "stream_question_timeout_retry.ndjson"), "utf8");
    const { code, stdout } = await cli(["map", "-"], input);
    expect(code).toBe(0);
    expect(
      lines(stdout)
        .filter((e) => e["type"] === "interaction_requested")
        .map((e) => e["stepIndex"]),
    ).toEqual([4, 5]);
  });

  it("maps one real captured step and takes the conversation from its cascadeId", async () => {
    const { code, stdout } = await cli(["map", join(CAPTURES, "run_command_done.json")]);
    expect(code).toBe(0);
    expect(lines(stdout).map((e) => [e["type"], e["conversationId"]])).toEqual([
      ["interaction_requested", "2399249c-4a48-40f1-bf3b-4c6e5d3a5a0e"],
      ["status", "2399249c-4a48-40f1-bf3b-4c6e5d3a5a0e"],
      ["interaction_resolved", "2399249c-4a48-40f1-bf3b-4c6e5d3a5a0e"],
      ["status", "2399249c-4a48-40f1-bf3b-4c6e5d3a5a0e"],
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

  it("reads a snapshot a step at a time, yet a step that is not JSON in a later page still leaves stdout empty, with the whole text's reason", async () => {
    const good = JSON.stringify(JSON.parse(readSource(join(FIXTURES, "user_input.json"), "utf8")));
    const steps = [...Array.from({ length: 300 }, () => good), '{"type": tru}', ...Array.from({ length: 299 }, () => good)];
    const text = `{"steps": [${steps.join(", ")}]}`;
    let reason = "";
    try {
      JSON.parse(text);
    } catch (error) {
      reason = (error as Error).message;
    }
    expect(reason).not.toBe("");
    const { code, stdout, stderr } = await cli(["map", "-"], text);
    expect([code, stdout]).toEqual([1, ""]);
    expect(stderr).toBe(`agy-bridge map: invalid JSON (${reason})\n`);
    // The same text with the step repaired maps all 600 steps.
    const repaired = await cli(["map", "-"], text.replace('{"type": tru}', good));
    expect([repaired.code, repaired.stderr]).toEqual([0, ""]);
    const fixed = JSON.parse(text.replace('{"type": tru}', good)) as { steps: unknown[] };
    const expected = createTrajectoryTracker({ conversationId: CID }).applySnapshot({ steps: fixed.steps });
    expect(lines(repaired.stdout)).toEqual(JSON.parse(JSON.stringify(expected)));
  });

  it("takes the conversation from the first step that names one, however late, and refuses a snapshot where none does", async () => {
    const checkpoint = '{"type":"CORTEX_STEP_TYPE_CHECKPOINT","status":"CORTEX_STEP_STATUS_DONE"}';
    const input = JSON.parse(readSource(join(FIXTURES, "user_input.json"), "utf8")) as { metadata: { sourceTrajectoryStepInfo: { cascadeId: string } } };
    const named = (id: string) => {
      input.metadata.sourceTrajectoryStepInfo.cascadeId = id;
      return JSON.stringify(input);
    };
    const late = `{"steps":[${[...Array.from({ length: 400 }, () => checkpoint), named("late-id"), named("later-id")].join(",")}]}`;
    const found = await cli(["map", "-"], late);
    expect([found.code, found.stderr]).toEqual([0, ""]);
    const events = lines(found.stdout);
    expect(events.some((e) => e["type"] === "user_message")).toBe(true);
    expect(new Set(events.map((e) => e["conversationId"]))).toEqual(new Set(["late-id"]));
    const none = await cli(["map", "-"], `[${Array.from({ length: 400 }, () => checkpoint).join(",")}]`);
    expect([none.code, none.stdout]).toEqual([1, ""]);
    expect(none.stderr).toBe("agy-bridge map: the input names no conversation; pass --conversation ID\n");
  });

  it("rejects a bad NDJSON line by number even after good lines, writing nothing", async () => {
    const good = JSON.stringify({ update: { conversationId: CID } });
    const { code, stdout, stderr } = await cli(["map", "-"], `${good}\n${good}\n{"update": 5}\n`);
    expect([code, stdout]).toEqual([1, ""]);
    expect(stderr).toMatch(/^agy-bridge map: line 3: /);
    expect(stderr.trim().split("\n")).toHaveLength(1);
  });

  it("maps the other steps when one entry is not a step, reporting it as a diagnostic", async () => {
    const { readFileSync } = await import("node:fs");
    const good = readFileSync(join(FIXTURES, "user_input.json"), "utf8");
    const { code, stdout, stderr } = await cli(["map", "-", "--conversation", "c"], `[7, ${good}]`);
    expect([code, stderr]).toEqual([0, ""]);
    const events = lines(stdout);
    expect(events[0]).toMatchObject({ type: "diagnostic", code: "invalid_step" });
    expect(events.some((e) => e["type"] === "user_message")).toBe(true);
  });

  it("rejects a list that holds no step objects at all, writing nothing", async () => {
    const { code, stdout, stderr } = await cli(["map", "-", "--conversation", "c"], '{"steps": [1, "two", null]}');
    expect([code, stdout]).toEqual([1, ""]);
    expect(stderr).toBe('agy-bridge map: position 0: "steps" holds no step objects\n');
  });

  it("takes --conversation=--help as the conversation id, not as a request for help", async () => {
    const step = '{"type":"CORTEX_STEP_TYPE_USER_INPUT","status":"CORTEX_STEP_STATUS_DONE","userInput":{"items":[{"text":"hi"}]}}';
    const { code, stdout } = await cli(["map", "-", "--conversation=--help"], step);
    expect(code).toBe(0);
    expect(stdout).not.toContain("Usage:");
    expect(new Set(lines(stdout).map((e) => e["conversationId"]))).toEqual(new Set(["--help"]));
  });

  it("streams a large output through a slow stdout, waiting for it to drain, in order and complete", async () => {
    const { readFileSync } = await import("node:fs");
    const snapshot = JSON.parse(readFileSync(join(FIXTURES, "snapshot_two_turns.json"), "utf8")) as { steps: unknown[] };
    const big = { steps: Array.from({ length: 400 }, () => snapshot.steps).flat() };
    const text = JSON.stringify(big);
    const fast = await cli(["map", "-"], text);
    let written = "";
    let writes = 0;
    let waitedForDrain = false;
    const slow = new Writable({
      highWaterMark: 1024,
      write(chunk, _encoding, done) {
        written += String(chunk);
        writes++;
        setImmediate(done);
      },
    });
    slow.on("drain", () => (waitedForDrain = true));
    const stdin = new PassThrough();
    stdin.end(text);
    const code = await main({ argv: ["map", "-"], env: {}, stdin, stdout: slow, stderr: textSink().stream, signal: new AbortController().signal });
    expect(code).toBe(0);
    expect(written).toBe(fast.stdout);
    expect(writes).toBeGreaterThan(1);
    expect(waitedForDrain).toBe(true);
  });

  it("stops quietly when the reader goes away (EPIPE) and fails with a sentence on any other write error", async () => {
    const { readFileSync } = await import("node:fs");
    const snapshot = JSON.parse(readFileSync(join(FIXTURES, "snapshot_two_turns.json"), "utf8")) as { steps: unknown[] };
    const text = JSON.stringify({ steps: Array.from({ length: 400 }, () => snapshot.steps).flat() });
    for (const [code, expected] of [
      ["EPIPE", 0],
      ["ENOSPC", 1],
    ] as const) {
      let writes = 0;
      const failing = new Writable({
        highWaterMark: 1024,
        write(_chunk, _encoding, done) {
          writes++;
          done(Object.assign(new Error(`write ${code}`), { code }));
        },
      });
      const stdin = new PassThrough();
      stdin.end(text);
      const err = textSink();
      const exit = await main({ argv: ["map", "-"], env: {}, stdin, stdout: failing, stderr: err.stream, signal: new AbortController().signal });
      expect(exit).toBe(expected);
      expect(writes).toBe(1);
      expect(err.text()).toBe(code === "EPIPE" ? "" : `agy-bridge map: cannot write the events: write ${code}\n`);
    }
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

  it("loads only what mapping needs: no zod, simulator, server, rpc or discovery module", () => {
    const src = resolve(import.meta.dirname, "../../src");
    const seen = new Set<string>();
    const packages = new Set<string>();
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readSource(file, "utf8");
      // Runtime imports only: `import type …` and `export type …` vanish when compiled.
      for (const match of text.matchAll(/^(?:import|export)\s+(?!type\s)[^;]*?from\s+"([^"]+)"/gms)) {
        const target = match[1] as string;
        if (target.startsWith(".")) visit(resolve(dirname(file), target.replace(/\.js$/, ".ts")));
        else packages.add(target);
      }
    };
    visit(join(src, "cli/map-command.ts"));
    const modules = [...seen].map((f) => relative(src, f));
    expect(modules).toContain("mapper/trajectory-tracker.ts");
    expect([...packages].filter((p) => !p.startsWith("node:"))).toEqual([]);
    expect(modules.filter((m) => /^(sim|server|rpc|discovery|session|tmux)\//.test(m))).toEqual([]);
  });
});
