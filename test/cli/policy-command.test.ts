import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runMain } from "../support/cli-io.js";

const POLICY = `version: 1
default: ask
rules:
  - id: read-only
    kind: command
    commands: ["git status", "ls*"]
    action: approve
  - id: no-rm
    kind: command
    commands: ["rm *"]
    action: deny
    instruction: Ask me first.
  - id: ws
    kind: file
    operations: [create, edit]
    paths: ["{workspace}/**"]
    action: approve
`;

describe("agy-bridge policy", () => {
  let dir: string;
  let policy: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "agy-policy-"));
    policy = join(dir, "policy.yaml");
    writeFileSync(policy, POLICY);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("check --json prints exactly decision, rule and reason for a command line", async () => {
    const result = await runMain(["policy", "check", policy, "--json", "--", "git", "status;", "rm", "-rf", "build"]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ decision: "deny", rule: "no-rm", reason: 'Rule no-rm denies "rm -rf build".' });
    expect(result.stdout.trim().split("\n")).toHaveLength(1);
  });

  it("check explains which rules did not decide and why", async () => {
    const result = await runMain(["policy", "check", policy, "--", "git status > ~/.bashrc"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('ask: No deny or ask rule matched and no rule may approve it, because it redirects output to "~/.bashrc".');
    expect(result.stdout).toContain('rule read-only did not decide: it may not approve it, because it redirects output to "~/.bashrc"');
  });

  it("check resolves a relative --file-path against --workspace", async () => {
    const inside = await runMain(["policy", "check", policy, "--json", "--workspace", "/srv/app", "--file-path", "src/a.ts", "--operation", "edit"]);
    expect(JSON.parse(inside.stdout)).toMatchObject({ decision: "approve", rule: "ws" });
    const outside = await runMain(["policy", "check", policy, "--json", "--workspace", "/srv/app", "--file-path", "../etc/x", "--operation", "edit"]);
    expect(JSON.parse(outside.stdout)).toMatchObject({ decision: "ask", rule: null });
  });

  it("check --kind question falls to the default", async () => {
    const result = await runMain(["policy", "check", policy, "--json", "--kind", "question"]);
    expect(JSON.parse(result.stdout)).toMatchObject({ decision: "ask", rule: null });
  });

  it("exits 2 on usage errors: no request, two requests, a bad --operation or --kind", async () => {
    for (const argv of [
      ["policy", "check", policy],
      ["policy", "check", policy, "--kind", "question", "--", "ls"],
      ["policy", "check", policy, "--file-path", "a", "--operation", "delete"],
      ["policy", "check", policy, "--kind", "command"],
      ["policy", "frobnicate", policy],
    ]) {
      const result = await runMain(argv);
      expect(result.code, argv.join(" ")).toBe(2);
      expect(result.stdout).toBe("");
    }
  });

  it("exits 1 with file:line:column on an invalid policy", async () => {
    writeFileSync(policy, "version: 1\nrules:\n  - id: q\n    kind: question\n    action: approve\n");
    const result = await runMain(["policy", "check", policy, "--", "ls"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`${policy}:5:13: rules[0].action: approve is not valid for kind question (a rule cannot pick an answer); write deny or ask\n`);
  });

  it("exits 1 with a sentence when the policy file is missing", async () => {
    const result = await runMain(["policy", "check", join(dir, "nope.yaml"), "--", "ls"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/cannot read the policy file ".*nope\.yaml": it does not exist/);
  });

  it("test passes a table that holds and fails, naming the case, on one that does not", async () => {
    const cases = join(dir, "cases.yaml");
    writeFileSync(
      cases,
      "workspace: /srv/app\ncases:\n  - command: ls -la\n    expect: approve\n    rule: read-only\n  - file: src/x.ts\n    operation: create\n    expect: approve\n",
    );
    const good = await runMain(["policy", "test", policy, cases]);
    expect(good).toMatchObject({ code: 0, stdout: "2 passed, 0 failed\n" });

    writeFileSync(cases, "cases:\n  - command: rm -rf /\n    expect: approve\n  - command: git status\n    expect: approve\n");
    const bad = await runMain(["policy", "test", policy, cases]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe('FAIL case 1 "rm -rf /": expected approve, got deny by no-rm — Rule no-rm denies "rm -rf /".\n1 passed, 1 failed\n');
  });

  it("test reports an invalid cases file at its position", async () => {
    const cases = join(dir, "cases.yaml");
    writeFileSync(cases, "cases:\n  - command: ls\n    expect: maybe\n");
    const result = await runMain(["policy", "test", policy, cases]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`${cases}:3:13: cases[0].expect: must be approve, deny or ask\n`);
  });
});
