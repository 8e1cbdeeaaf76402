/**
 * `agy-bridge policy check --file-path` resolves symlinks on this machine
 * before matching, as a session does (issue 34, item 2): a workspace link
 * into a secrets directory is decided by the rule for the directory the
 * write lands in.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runMain } from "../support/cli-io.js";

describe("agy-bridge policy check and symlinks", () => {
  let dir: string;
  let policy: string;
  let workspace: string;
  let secrets: string;
  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), "agy-policy-links-")));
    workspace = join(dir, "proj");
    secrets = join(dir, "secrets");
    mkdirSync(workspace);
    mkdirSync(secrets);
    policy = join(dir, "policy.yaml");
    writeFileSync(
      policy,
      `version: 1
default: ask
rules:
  - id: no-secrets
    kind: file
    paths: ["${secrets}/**"]
    action: deny
  - id: ws
    kind: file
    operations: [create, edit]
    paths: ["{workspace}/**"]
    action: approve
`,
    );
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("decides by where the write lands, and approves a plain path", async () => {
    symlinkSync(secrets, join(workspace, "docs"));
    const linked = await runMain(["policy", "check", policy, "--json", "--workspace", workspace, "--file-path", "docs/authorized_keys", "--operation", "edit"]);
    expect(linked.code).toBe(0);
    expect(JSON.parse(linked.stdout)).toMatchObject({ decision: "deny", rule: "no-secrets" });
    const plain = await runMain(["policy", "check", policy, "--json", "--workspace", workspace, "--file-path", "src/a.ts", "--operation", "edit"]);
    expect(JSON.parse(plain.stdout)).toMatchObject({ decision: "approve", rule: "ws" });
  });

  it("asks about a path it cannot resolve (a link loop)", async () => {
    symlinkSync(join(workspace, "b"), join(workspace, "a"));
    symlinkSync(join(workspace, "a"), join(workspace, "b"));
    const looped = await runMain(["policy", "check", policy, "--json", "--workspace", workspace, "--file-path", "a/x.ts", "--operation", "edit"]);
    expect(JSON.parse(looped.stdout)).toMatchObject({ decision: "ask", rule: null });
    expect(JSON.parse(looped.stdout).reason).toMatch(/cannot be resolved through symlinks/);
  });
});
