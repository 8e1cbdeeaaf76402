import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import type { MapperEvent } from "../../src/mapper/index.js";

function collect(stream: PassThrough): () => string {
  const chunks: Buffer[] = [];
  stream.on("data", (c: Buffer) => chunks.push(c));
  return () => Buffer.concat(chunks).toString("utf8");
}

async function runDemo(argv: string[]) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out = collect(stdout);
  const err = collect(stderr);
  const code = await main({
    argv: ["demo", ...argv],
    env: {},
    stdin: new PassThrough(),
    stdout,
    stderr,
    signal: new AbortController().signal,
  });
  return { code, stdout: out(), stderr: err() };
}

describe("agy-bridge demo", () => {
  it("answers the approval over RPC and reports the command's output, each event once", async () => {
    const { code, stdout, stderr } = await runDemo(["--json", "--turn", "Run pwd", "--turn", "Help me start a project"]);
    expect(stderr).not.toMatch(/could not answer|did not finish/);
    expect(code).toBe(0);
    const events = stdout.trim().split("\n").map((line) => JSON.parse(line) as MapperEvent);

    const requested = events.filter((e) => e.type === "interaction_requested");
    expect(requested.map((e) => e.request.kind)).toEqual(["permission", "question"]);
    const resolved = events.filter((e) => e.type === "interaction_resolved");
    expect(resolved.map((e) => [e.interactionId, e.outcome])).toEqual(requested.map((e) => [e.interactionId, "answered"]));
    // The question's settled step echoes the bot's choice: option "1".
    const question = events.find((e) => e.type === "function_call_output" && e.name === "ask_question");
    expect(question?.type === "function_call_output" && JSON.parse(question.output)).toMatchObject({
      questions: [{ selectedOptionIds: ["1"] }],
    });

    const output = events.find((e) => e.type === "function_call_output" && e.name === "run_command");
    expect(output).toMatchObject({ isError: false, output: "/home/sim/project\n" });
    expect(events.filter((e) => e.type === "status" && e.status === "idle")).toHaveLength(2);

    const keys = events
      .filter((e) => e.type === "message" || e.type === "function_call" || e.type === "user_message")
      .map((e) => `${e.type}:${e.trajectoryId}:${e.stepIndex}:${e.type === "user_message" ? e.text : ""}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(stderr).toMatch(/answered step \d+: allow/);
  });

  it("refuses an unknown option with a one-line reason and exit 2", async () => {
    const { code, stdout, stderr } = await runDemo(["--bogus"]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toBe('agy-bridge demo: unknown option "--bogus"; see --help\n');
  });
});
