/**
 * Rules learned from answers (issue 37 §2), pure: the narrowest rule
 * proposed for a request, a person's edit checked against it, the rules
 * file's format (the policy format), and precedence in decide(): a team
 * deny stands, and a learned rule goes through the same matching as any
 * other, so it never widens past what the person saw.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AgyBridgeError } from "../../src/errors.js";
import {
  decide,
  editedRule,
  learnedRule,
  parseLearnedRules,
  parsePolicy,
  PolicyError,
  proposeRule,
  serializeLearnedRules,
  viewOf,
  type LearnedDecision,
  type PolicyRequest,
  type PolicyRule,
  type PolicyWithLearned,
  type RequestPlace,
} from "../../src/policy/index.js";
import { resolveRealPath } from "../../src/session/policy-runner.js";

const PLACE: RequestPlace = { workspace: "/home/me/project", conversationId: "conv-1" };
const command = (commandLine: string): PolicyRequest => ({ kind: "command", commandLine });

function learn(
  request: PolicyRequest,
  decision: LearnedDecision,
  options: { scope?: "conversation" | "workspace" | "everywhere"; match?: string; id?: string } = {},
): PolicyRule {
  const proposed = proposeRule(request, PLACE, { decision, ...(options.scope === undefined ? {} : { scope: options.scope }) });
  const proposal = options.match === undefined ? proposed : editedRule(proposed, options.match, request, PLACE);
  return learnedRule({
    id: options.id ?? "learned-0001",
    decision,
    proposal,
    place: PLACE,
    addedBy: "cli",
    addedAt: "2026-12-02T10:00:00.000Z",
    fromRequest: "int_1",
  });
}

function withLearned(team: string, rules: PolicyRule[]): PolicyWithLearned {
  return { ...parsePolicy(team, "team.yaml"), learned: { rules: () => rules } };
}

const ASK_ALL = "version: 1\ndefault: ask\n";
const CONTEXT = { workspace: PLACE.workspace!, conversationId: "conv-1" };

describe("proposing a rule", () => {
  it("proposes the exact command, with a prefix cut at a word boundary as a wider choice", () => {
    expect(proposeRule(command("npm test -- --watch"), PLACE, { decision: "approve" })).toEqual({
      decision: "approve",
      kind: "command",
      match: "npm test -- --watch",
      scope: "workspace",
      alternatives: ["npm test *"],
    });
    // The words come from the shell parser: quotes removed, never cut inside a quoted word.
    expect(proposeRule(command("git commit -m 'a b'"), PLACE).match).toBe("git commit -m a b");
    expect(proposeRule(command("git commit -m 'a b'"), PLACE).alternatives).toEqual(["git commit *"]);
    // No one-word prefix: `rm *` is never offered.
    expect(proposeRule(command("rm -rf build"), PLACE).alternatives).toEqual([]);
  });

  it("refuses what no rule can cover exactly, with a sentence", () => {
    const refused = (request: PolicyRequest, decision: LearnedDecision = "approve") => {
      try {
        proposeRule(request, PLACE, { decision });
        return "proposed";
      } catch (error) {
        expect(error).toBeInstanceOf(AgyBridgeError);
        return (error as Error).message;
      }
    };
    expect(refused(command("npm ci && npm test"))).toMatch(/runs 2 commands .*add rules for them to the policy file/);
    expect(refused(command("echo $(id)"))).toMatch(/No rule may approve this command line, because it contains a command substitution/);
    expect(refused(command("ls *.ts"))).toMatch(/holds \* or \?/);
    expect(refused({ kind: "question" })).toMatch(/A question request cannot be remembered/);
    expect(refused({ kind: "file", path: "/etc/passwd", operation: "edit" })).toMatch(/outside the workspace/);
    expect(() => proposeRule(command("pwd"), { conversationId: "c" }, { scope: "workspace" })).toThrow(/names no workspace/);
  });

  it("proposes a file's path inside the workspace, glob characters escaped", () => {
    expect(proposeRule({ kind: "file", path: "file:///home/me/project/src/a[1].ts", operation: "edit" }, PLACE, { decision: "approve" })).toEqual({
      decision: "approve",
      kind: "file",
      match: "{workspace}/src/a\\[1\\].ts",
      scope: "workspace",
      operation: "edit",
      alternatives: ["{workspace}/src/**"],
    });
  });

  it("takes an edit only when it still covers the request and names its command", () => {
    expect(learn(command("npm test -- --watch"), "approve", { match: "npm test *" }).commands).toEqual(["npm test *"]);
    expect(() => learn(command("npm test -- --watch"), "approve", { match: "npm run *" })).toThrow(/does not cover the command "npm test -- --watch"/);
    expect(() => learn(command("npm test"), "approve", { match: "* test" })).toThrow(/wildcard in its command name/);
    const file: PolicyRequest = { kind: "file", path: "src/a.ts", operation: "edit" };
    expect(() => learn(file, "approve", { match: "/**" })).toThrow(/must start with \{workspace\}\//);
    expect(() => learn(file, "approve", { match: "{workspace}/../**" })).toThrow(/may not climb out/);
    expect(learn(file, "approve", { match: "{workspace}/src/**" }).paths).toEqual(["{workspace}/src/**"]);
  });
});

describe("the rules file", () => {
  it("is the policy format with a learned: mapping per rule, read back as written", () => {
    const rule = learn(command("npm test"), "approve");
    const text = serializeLearnedRules([rule]);
    expect(text).toContain("version: 1");
    expect(text).toContain("learned:");
    // The team policy's parser reads it as it is.
    expect(parsePolicy(text, "learned.yaml").rules).toEqual([rule]);
    expect(parseLearnedRules(text, "learned.yaml")).toEqual([rule]);
    expect(viewOf(rule)).toEqual({
      id: "learned-0001",
      decision: "approve",
      match: "npm test",
      scope: "workspace",
      kind: "command",
      addedBy: "cli",
      addedAt: "2026-12-02T10:00:00.000Z",
      fromRequest: "int_1",
      fired: 0,
      lastFired: null,
    });
    expect(viewOf(learn(command("npm test"), "deny", { scope: "conversation" })).scope).toBe("conversation");
    expect(viewOf(learn(command("npm test"), "deny", { scope: "everywhere" })).scope).toBe("everywhere");
  });

  it("says where a malformed file is wrong", () => {
    expect(() => parseLearnedRules("version: 1\nrules:\n  - id: x\n    action: allow\n", "learned.yaml")).toThrow(PolicyError);
    expect(() => parseLearnedRules("version: 1\nrules:\n  - id: x\n    action: allow\n", "learned.yaml")).toThrow(
      /^learned\.yaml:4:13: rules\[0\]\.action: must be approve, deny or ask/,
    );
    expect(() => parseLearnedRules("version: 1\nrules:\n  - id: x\n    action: deny\n    learned: { who: me }\n", "l.yaml")).toThrow(
      /^l\.yaml:5:14: rules\[0\]\.learned\.addedBy: must say who added the rule/,
    );
    expect(parseLearnedRules("", "learned.yaml")).toEqual([]);
  });
});

describe("deciding with learned rules", () => {
  it("approves the command learned and nothing wider: rm -rf build never matches rm -rf /", () => {
    const policy = withLearned(ASK_ALL, [learn(command("rm -rf build"), "approve")]);
    expect(decide(policy, command("rm -rf build"), CONTEXT)).toMatchObject({ decision: "approve", rule: "learned-0001" });
    for (const line of ["rm -rf /", "rm -rf build /", "rm -rf build; rm -rf /", "rm -rf build $(rm -rf /)", "rm -rf build > /etc/passwd"]) {
      expect([line, decide(policy, command(line), CONTEXT).decision]).toEqual([line, "ask"]);
    }
    // Without the learned rules the same policy asks: the rule is what approved it.
    expect(decide(parsePolicy(ASK_ALL, "team.yaml"), command("rm -rf build"), CONTEXT).decision).toBe("ask");
  });

  it("limits a rule to its scope: the workspace, the conversation, or everywhere", () => {
    const inWorkspace = withLearned(ASK_ALL, [learn(command("npm test"), "approve")]);
    expect(decide(inWorkspace, command("npm test"), { ...CONTEXT, workspace: "/home/me/other" }).decision).toBe("ask");
    const inConversation = withLearned(ASK_ALL, [learn(command("npm test"), "approve", { scope: "conversation" })]);
    expect(decide(inConversation, command("npm test"), { ...CONTEXT, conversationId: "conv-2" }).decision).toBe("ask");
    expect(decide(inConversation, command("npm test"), CONTEXT).decision).toBe("approve");
    const everywhere = withLearned(ASK_ALL, [learn(command("npm test"), "approve", { scope: "everywhere" })]);
    expect(decide(everywhere, command("npm test"), { conversationId: "conv-9" }).decision).toBe("approve");
  });

  it("lets a team deny win over a learned approve, and a learned deny win over a team approve", () => {
    const team = `version: 1
default: ask
rules:
  - id: no-push
    kind: command
    commands: ["git push*"]
    action: deny
  - id: git-reads
    kind: command
    commands: ["git log*"]
    action: approve
`;
    const policy = withLearned(team, [
      learn(command("git push origin main"), "approve", { id: "learned-aaaa" }),
      learn(command("git log -5"), "deny", { id: "learned-bbbb" }),
    ]);
    expect(decide(policy, command("git push origin main"), CONTEXT)).toMatchObject({ decision: "deny", rule: "no-push" });
    expect(decide(policy, command("git log -5"), CONTEXT)).toMatchObject({ decision: "deny", rule: "learned-bbbb" });
    expect(decide(policy, command("git log -6"), CONTEXT)).toMatchObject({ decision: "approve", rule: "git-reads" });
    // A team default of deny stands too.
    const strict = withLearned("version: 1\ndefault: deny\n", [learn(command("npm test"), "approve")]);
    expect(decide(strict, command("npm test"), CONTEXT)).toMatchObject({ decision: "deny", rule: null });
  });

  it("matches a learned file rule on the real path: a symlink out of the workspace is not approved", () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), "learned-")));
    try {
      const workspace = join(root, "project");
      mkdirSync(join(workspace, "src"), { recursive: true });
      mkdirSync(join(root, "secret"));
      symlinkSync(join(root, "secret"), join(workspace, "src", "link"));
      const place = { workspace, conversationId: "conv-1" };
      const request: PolicyRequest = { kind: "file", path: join(workspace, "src", "a.ts"), operation: "edit" };
      const proposed = editedRule(proposeRule(request, place, { decision: "approve" }), "{workspace}/src/**", request, place);
      const rule = learnedRule({ id: "learned-f", decision: "approve", proposal: proposed, place, addedBy: "cli", addedAt: "t", fromRequest: "int_f" });
      const policy = withLearned(ASK_ALL, [rule]);
      const context = { workspace, conversationId: "conv-1", resolvePath: resolveRealPath };
      expect(decide(policy, request, context)).toMatchObject({ decision: "approve", rule: "learned-f" });
      expect(decide(policy, { kind: "file", path: join(workspace, "src", "link", "key"), operation: "edit" }, context).decision).toBe("ask");
      // Another operation than the one answered is not covered.
      expect(decide(policy, { ...request, operation: "create" }, context).decision).toBe("ask");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
