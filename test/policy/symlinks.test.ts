/**
 * File rules match the path the kernel would open (issue 34, item 2): every
 * existing prefix resolved through symlinks, `..` applied after resolution,
 * for the workspace and home too; a path that cannot be resolved is asked,
 * never approved. Real symlinks in a temporary directory, resolved by the
 * session layer's `resolveRealPath` (the policy itself is pure).
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { decide, parsePolicy, type PolicyContext } from "../../src/policy/index.js";
import { loadPolicyJudge, resolveRealPath } from "../../src/session/policy-runner.js";
import type { EventOf } from "../../src/mapper/index.js";

const POLICY = parsePolicy(
  `version: 1
default: ask
rules:
  - id: no-secrets
    kind: file
    operations: [create, edit]
    paths: ["{home}/.ssh/**"]
    action: deny
  - id: edits-in-workspace
    kind: file
    operations: [create, edit]
    paths: ["{workspace}/**"]
    action: approve
  - id: outside-workspace
    kind: file
    action: ask
`,
  "symlinks.yaml",
);

let root: string;
let home: string;
let workspace: string;
let outside: string;
beforeEach(() => {
  // Resolved itself: the temp dir may sit behind a symlink (macOS /tmp).
  root = realpathSync(mkdtempSync(join(tmpdir(), "agyb-symlinks-")));
  home = join(root, "home");
  workspace = join(home, "proj");
  outside = join(root, "elsewhere");
  mkdirSync(join(home, ".ssh"), { recursive: true });
  mkdirSync(join(workspace, "src"), { recursive: true });
  mkdirSync(join(outside, "deep"), { recursive: true });
  writeFileSync(join(workspace, "src", "main.ts"), "");
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function edit(path: string, context: PolicyContext = { workspace, home, resolvePath: resolveRealPath }) {
  const d = decide(POLICY, { kind: "file", path, operation: "edit" }, context);
  return { decision: d.decision, rule: d.rule };
}

describe("file rules and symlinks", () => {
  it("approves an edit of a real file in the workspace (the control)", () => {
    expect(edit(join(workspace, "src", "main.ts"))).toEqual({ decision: "approve", rule: "edits-in-workspace" });
    expect(edit("src/new-file.ts")).toEqual({ decision: "approve", rule: "edits-in-workspace" });
  });

  it("denies an edit through a workspace link into ~/.ssh, as the write would land there", () => {
    symlinkSync(join(home, ".ssh"), join(workspace, "docs"));
    expect(edit(join(workspace, "docs", "authorized_keys"))).toEqual({ decision: "deny", rule: "no-secrets" });
    expect(edit(`file://${join(workspace, "docs", "authorized_keys")}`)).toEqual({ decision: "deny", rule: "no-secrets" });
    expect(edit("docs/authorized_keys")).toEqual({ decision: "deny", rule: "no-secrets" });
  });

  it("asks about an edit through a link to a directory outside the workspace", () => {
    symlinkSync(outside, join(workspace, "vendor"));
    expect(edit(join(workspace, "vendor", "x.ts"))).toEqual({ decision: "ask", rule: "outside-workspace" });
  });

  it("applies .. after resolving the link it follows", () => {
    symlinkSync(join(outside, "deep"), join(workspace, "sub"));
    // Lexically {workspace}/x; the kernel opens elsewhere/x.
    expect(edit(`${workspace}/sub/../x.ts`)).toEqual({ decision: "ask", rule: "outside-workspace" });
    expect(resolveRealPath(`${workspace}/sub/../x.ts`)).toBe(join(outside, "x.ts"));
  });

  it("follows a dangling link to where a write through it would create its target", () => {
    symlinkSync(join(home, ".ssh", "authorized_keys"), join(workspace, "notes.md"));
    expect(resolveRealPath(join(workspace, "notes.md"))).toBe(join(home, ".ssh", "authorized_keys"));
    expect(edit(join(workspace, "notes.md"))).toEqual({ decision: "deny", rule: "no-secrets" });
    symlinkSync("../../elsewhere/missing/file", join(workspace, "src", "dangling.md"));
    expect(resolveRealPath(join(workspace, "src", "dangling.md"))).toBe(join(home, "elsewhere", "missing", "file"));
    symlinkSync(join(outside, "missing", "file"), join(workspace, "dangling.md"));
    expect(edit(join(workspace, "dangling.md"))).toEqual({ decision: "ask", rule: "outside-workspace" });
  });

  it("asks about a link loop, a path through a file, and a name too long", () => {
    symlinkSync(join(workspace, "loop-b"), join(workspace, "loop-a"));
    symlinkSync(join(workspace, "loop-a"), join(workspace, "loop-b"));
    expect(resolveRealPath(join(workspace, "loop-a", "x"))).toBeUndefined();
    expect(edit(join(workspace, "loop-a", "x"))).toEqual({ decision: "ask", rule: "outside-workspace" });
    expect(edit(join(workspace, "src", "main.ts", "x"))).toEqual({ decision: "ask", rule: "outside-workspace" });
    expect(edit(join(workspace, "n".repeat(300)))).toEqual({ decision: "ask", rule: "outside-workspace" });
  });

  it("resolves the workspace root and home too", () => {
    symlinkSync(workspace, join(root, "proj-link"));
    const viaLink = { workspace: join(root, "proj-link"), home, resolvePath: resolveRealPath };
    expect(edit(join(root, "proj-link", "src", "main.ts"), viaLink)).toEqual({ decision: "approve", rule: "edits-in-workspace" });
    expect(edit(join(workspace, "src", "main.ts"), viaLink)).toEqual({ decision: "approve", rule: "edits-in-workspace" });
    symlinkSync(home, join(root, "home-link"));
    const homeLink = { workspace, home: join(root, "home-link"), resolvePath: resolveRealPath };
    symlinkSync(join(home, ".ssh"), join(workspace, "keys"));
    expect(edit(join(workspace, "keys", "id_ed25519"), homeLink)).toEqual({ decision: "deny", rule: "no-secrets" });
  });

  it("never approves a file request whose path was not resolved (no resolver given)", () => {
    const d = decide(POLICY, { kind: "file", path: join(workspace, "src", "main.ts"), operation: "edit" }, { workspace, home });
    expect({ decision: d.decision, rule: d.rule }).toEqual({ decision: "ask", rule: "outside-workspace" });
    expect(d.trace.find((t) => t.rule === "edits-in-workspace")?.why).toMatch(/not resolved through symlinks/);
    const approving = parsePolicy("version: 1\ndefault: approve\n", "default-approve.yaml");
    const byDefault = decide(approving, { kind: "file", path: join(workspace, "x"), operation: "edit" }, { workspace });
    expect(byDefault.decision).toBe("ask");
    expect(decide(approving, { kind: "file", path: join(workspace, "x"), operation: "edit" }, { workspace, resolvePath: () => undefined }).decision).toBe(
      "ask",
    );
  });

  it("is what a session's policy uses by default", async () => {
    symlinkSync(join(home, ".ssh"), join(workspace, "docs"));
    const judge = await loadPolicyJudge({ policy: POLICY, context: { workspace, home } });
    const event: EventOf<"interaction_requested"> = {
      type: "interaction_requested",
      conversationId: "c1",
      trajectoryId: "t1",
      stepIndex: 3,
      interactionId: "int_1",
      stepType: "CODE_ACTION",
      callId: "call_1",
      request: {
        kind: "permission",
        variant: "filePermission",
        action: "file",
        target: `file://${join(workspace, "docs", "authorized_keys")}`,
        description: "",
      },
    };
    expect(judge.decide(event).decision).toMatchObject({ decision: "deny", rule: "no-secrets" });
    const plain = {
      kind: "permission" as const,
      variant: "filePermission" as const,
      action: "file",
      target: `file://${join(workspace, "src", "main.ts")}`,
      description: "",
    };
    expect(judge.decide({ ...event, request: plain }).decision).toMatchObject({ decision: "approve" });
  });
});
