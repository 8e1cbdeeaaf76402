import { describe, expect, it } from "vitest";
import { decide, parsePolicy, PolicyError } from "../../src/policy/index.js";

function problem(text: string, file = "team.yaml"): { at: string; message: string } {
  try {
    parsePolicy(text, file);
  } catch (error) {
    if (error instanceof PolicyError) return { at: `${error.line}:${error.column}`, message: error.message };
    throw error;
  }
  throw new Error("expected the policy to be refused");
}

describe("parsePolicy", () => {
  it("reads the documented example and defaults to ask", () => {
    const policy = parsePolicy("version: 1\nrules:\n  - id: ro\n    kind: command\n    commands: [ls]\n    action: approve\n", "p.yaml");
    expect(policy.default).toBe("ask");
    expect(decide(policy, { kind: "command", commandLine: "pwd" }).decision).toBe("ask");
  });

  it("reads JSON as well", () => {
    const policy = parsePolicy('{"version":1,"default":"deny","rules":[]}', "p.json");
    expect(decide(policy, { kind: "command", commandLine: "ls" })).toMatchObject({ decision: "deny", rule: null });
  });

  it("points at the line and column of a bad value and says what to write", () => {
    expect(problem("version: 1\nrules:\n  - id: q\n    kind: question\n    action: approve\n")).toEqual({
      at: "5:13",
      message: "team.yaml:5:13: rules[0].action: approve is not valid for kind question (a rule cannot pick an answer); write deny or ask",
    });
    expect(problem("version: 1\nrules:\n  - id: x\n    kind: command\n    action: allow\n").message).toBe(
      "team.yaml:5:13: rules[0].action: must be approve, deny or ask",
    );
    expect(problem("version: 1\nrules:\n  - id: Read Only\n    action: ask\n").message).toMatch(/^team\.yaml:3:9: rules\[0\]\.id: must be lower-case/);
  });

  it("names unknown keys and lists the valid ones", () => {
    expect(problem("version: 1\nrules:\n  - id: x\n    action: ask\n    command: [ls]\n").message).toMatch(
      /^team\.yaml:3:5: rules\[0\]: unknown key "command" in a rule; the keys are id, kind, commands,/,
    );
  });

  it("refuses duplicate ids, a wrong version and YAML syntax errors with positions", () => {
    expect(problem("version: 1\nrules:\n  - id: a\n    action: ask\n  - id: a\n    action: deny\n").message).toBe(
      "team.yaml:5:9: rules[1].id: id a is already used by rule 1; ids must be unique",
    );
    expect(problem("version: 2\n").message).toBe("team.yaml:1:10: version: must be 1 (write version: 1)");
    expect(problem("version: 1\nrules: [\n").at).toMatch(/^\d+:\d+$/);
    expect(problem("version: 1\nversion: 1\n").message).toMatch(/^team\.yaml:\d+:\d+: Map keys must be unique; fix the YAML syntax there$/);
  });

  it("refuses fields that do not apply to the rule's kind", () => {
    expect(problem("version: 1\nrules:\n  - id: a\n    kind: file\n    commands: [ls]\n    action: ask\n").message).toMatch(
      /rules\[0\]\.commands: commands apply to kind command, not file/,
    );
    expect(problem("version: 1\nrules:\n  - id: a\n    kind: command\n    action: approve\n    instruction: no\n").message).toMatch(
      /rules\[0\]\.instruction: an instruction goes with action deny/,
    );
  });
});

describe("decide", () => {
  const policy = parsePolicy(
    [
      "version: 1",
      "default: approve",
      "rules:",
      "  - id: night",
      "    kind: command",
      "    hours: '22:00-06:00'",
      "    action: ask",
      "  - id: here",
      "    kind: any",
      "    conversations: [c1]",
      "    action: deny",
      "    instruction: not in this one",
      "  - id: q",
      "    kind: question",
      "    action: deny",
    ].join("\n"),
    "p.yaml",
  );

  it("limits rules by time of day, wrapping past midnight", () => {
    expect(decide(policy, { kind: "command", commandLine: "ls" }, { minuteOfDay: 23 * 60 }).rule).toBe("night");
    expect(decide(policy, { kind: "command", commandLine: "ls" }, { minuteOfDay: 5 * 60 }).rule).toBe("night");
    expect(decide(policy, { kind: "command", commandLine: "ls" }, { minuteOfDay: 12 * 60 })).toMatchObject({ decision: "approve", rule: null });
  });

  it("limits rules by conversation and carries a deny's instruction", () => {
    expect(decide(policy, { kind: "file", path: "/x", operation: "read" }, { conversationId: "c1" })).toMatchObject({
      decision: "deny",
      rule: "here",
      instruction: "not in this one",
    });
  });

  it("never approves a command line a rule may not approve, even by default", () => {
    expect(decide(policy, { kind: "command", commandLine: "ls > out" }, { minuteOfDay: 12 * 60 })).toMatchObject({ decision: "ask", rule: null });
  });

  it("explains why each earlier rule did not decide", () => {
    const decision = decide(policy, { kind: "question" }, { minuteOfDay: 12 * 60 });
    expect(decision).toMatchObject({ decision: "deny", rule: "q" });
    expect(decision.trace.map((t) => `${t.rule}: ${t.why}`)).toEqual([
      "night: covers command requests, not question",
      "here: is limited to other conversations",
      "q: denies every question request it covers",
    ]);
  });
});
