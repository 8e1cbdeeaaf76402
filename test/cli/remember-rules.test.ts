/**
 * `approve|deny --remember` and `policy rules` (issue 37 §2) through the
 * real CLI against the simulator: the proposal printed by --dry-run with
 * nothing sent, the rule saved once the answer was delivered, listed,
 * revoked, written to the audit log — and a running `watch --policy`
 * applying a rule saved while it runs, and dropping it once revoked.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readAuditLog } from "../../src/audit/index.js";
import { MapperEventSchema, type MapperEvent } from "../../src/mapper/index.js";
import { loadScenarios, startSimServer, type SimServer } from "../../src/sim/index.js";
import { runMain, startMain, type StartedCli } from "../support/cli-io.js";
import { until } from "../support/until.js";

const NPM_TEST = {
  description: "npm test behind a permission gate.",
  match: { text: "Run the tests" },
  steps: [
    { kind: "command", commandLine: "npm test -- --watch", output: "ok\n", toolAction: "Running the tests", toolSummary: "Run npm test" },
    { kind: "planner", text: "The tests pass." },
  ],
};

describe("approve|deny --remember and policy rules", () => {
  let dir: string;
  let sim: SimServer;
  let env: Record<string, string>;
  let conn: string[];
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "agy-remember-"));
    env = { HOME: dir, XDG_CONFIG_HOME: join(dir, "config"), XDG_STATE_HOME: join(dir, "state") };
    // agy 1.2 names its workspace in the conversation's metadata: the scope workspace and file rules need it.
    sim = await startSimServer({ speed: 0.05, agyVersion: "1.2", scenarios: [...(await loadScenarios()), NPM_TEST as never] });
    conn = ["--url", sim.plainUrl, "--conversation", sim.engine.activeConversationId];
  });
  afterEach(async () => {
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const learnedFile = () => join(dir, "config", "agy-bridge", "learned.yaml");
  const auditFile = () => join(dir, "state", "agy-bridge", "audit.jsonl");
  const gate = async (text: string) => {
    const conv = sim.engine.conversation(sim.engine.activeConversationId)!;
    sim.engine.tuiPort().submitTurn(text);
    return until(() => conv.waitingIndices()[0], `the gate of ${JSON.stringify(text)}`, { ms: 10_000, everyMs: 20 });
  };

  it("prints the proposal with --dry-run, sending and saving nothing", async () => {
    const step = await gate("Run the tests");
    const dry = await runMain(["approve", ...conn, "--remember", "--dry-run", "--json"], { env });
    expect(dry.code, dry.stderr).toBe(0);
    const printed = JSON.parse(dry.stdout) as { dryRun: boolean; rule: Record<string, unknown> };
    expect(printed.dryRun).toBe(true);
    expect(printed.rule).toMatchObject({ decision: "approve", kind: "command", match: "npm test -- --watch", alternatives: ["npm test *"] });
    expect(printed.rule["scope"]).toBe("workspace");
    const human = await runMain(["approve", ...conn, "--remember", "--dry-run", "--scope", "everywhere"], { env });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain('would save: approve command "npm test -- --watch" (scope everywhere), as');
    expect(human.stdout).toContain("commands:\n      - npm test -- --watch");
    expect(human.stdout).toContain('wider, with --rule: "npm test *"');
    expect(sim.engine.conversation(sim.engine.activeConversationId)!.waitingIndices()).toEqual([step]);
    expect(() => statSync(learnedFile())).toThrow(/ENOENT/);
  });

  it("proposes a file request's path inside the workspace, and its directory as the wider choice", async () => {
    await gate("Fix the greeting in hello.ts");
    const dry = await runMain(["approve", ...conn, "--remember", "--dry-run", "--json"], { env });
    expect(dry.code, dry.stderr).toBe(0);
    expect((JSON.parse(dry.stdout) as { rule: unknown }).rule).toMatchObject({
      decision: "approve",
      kind: "file",
      match: "{workspace}/src/hello.ts",
      scope: "workspace",
      alternatives: ["{workspace}/src/**"],
    });
    const saved = await runMain(["approve", ...conn, "--remember", "--rule", "{workspace}/src/**", "--json"], { env });
    expect(saved.code, saved.stderr).toBe(0);
    expect(JSON.parse(saved.stdout)).toMatchObject({ result: "delivered", rule: { decision: "approve", match: "{workspace}/src/**", scope: "workspace" } });
    expect(readFileSync(learnedFile(), "utf8")).toMatch(/workspaces:\n\s+- \/home\/sim\/project/);
  });

  it("delivers the answer and saves the rule (edited with --rule), lists it, revokes it, and logs both", async () => {
    await gate("Run the tests");
    const approve = await runMain(["approve", ...conn, "--remember", "--scope", "everywhere", "--rule", "npm test *", "--json"], { env });
    expect(approve.code, approve.stderr).toBe(0);
    const result = JSON.parse(approve.stdout) as { result: string; interactionId: string; rule: { id: string } };
    expect(result).toMatchObject({ result: "delivered", rule: { decision: "approve", match: "npm test *", scope: "everywhere" } });
    expect(Object.keys(result.rule).sort()).toEqual(["decision", "id", "match", "scope"]);
    expect(statSync(learnedFile()).mode & 0o777).toBe(0o600);
    expect(readFileSync(learnedFile(), "utf8")).toContain("npm test *");

    const listed = await runMain(["policy", "rules", "--json"], { env });
    expect(listed.code, listed.stderr).toBe(0);
    const { rules } = JSON.parse(listed.stdout) as { rules: Array<Record<string, unknown>> };
    expect(rules).toEqual([
      {
        id: result.rule.id,
        decision: "approve",
        match: "npm test *",
        scope: "everywhere",
        kind: "command",
        addedBy: "cli",
        addedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        fromRequest: result.interactionId,
        fired: 0,
        lastFired: null,
      },
    ]);

    const revoke = await runMain(["policy", "rules", "revoke", result.rule.id], { env });
    expect(revoke.code, revoke.stderr).toBe(0);
    expect(JSON.parse((await runMain(["policy", "rules", "--json"], { env })).stdout)).toEqual({ rules: [] });
    const again = await runMain(["policy", "rules", "revoke", result.rule.id], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/no learned rule has the id/);

    const records = (await readAuditLog(auditFile())).records;
    const rulesLogged = records.filter((r) => r.kind === "rule").map((r) => [r.delivery, r.decision, r.request.commandLine, r.decidedBy]);
    expect(rulesLogged).toEqual([
      ["rule_created", "approve", "npm test -- --watch", "cli"],
      ["rule_revoked", "approve", "npm test *", "cli"],
    ]);
    expect(records.some((r) => r.kind === "permission" && r.decision === "approve" && r.delivery === "delivered")).toBe(true);
  });

  it("refuses an edited rule that does not cover the request, sending nothing", async () => {
    const step = await gate("Delete the build directory");
    const wide = await runMain(["deny", ...conn, "--remember", "--rule", "rm -rf /*"], { env });
    expect(wide.code).toBe(1);
    expect(wide.stderr).toMatch(/The rule "rm -rf \/\*" does not cover the command "rm -rf build"/);
    expect(sim.engine.conversation(sim.engine.activeConversationId)!.waitingIndices()).toEqual([step]);
    const deny = await runMain(["deny", ...conn, "--remember", "--scope", "conversation", "--json"], { env });
    expect(deny.code, deny.stderr).toBe(0);
    expect(JSON.parse(deny.stdout)).toMatchObject({ result: "delivered", rule: { decision: "deny", match: "rm -rf build", scope: "conversation" } });
  });

  it("refuses approve --instruction and the remember options without --remember as usage errors", async () => {
    const step = await gate("Run pwd");
    const refused = await runMain(["approve", ...conn, "--instruction", "be careful"], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/agy's approve carries no instruction, so --instruction would never reach agy/);
    for (const argv of [
      ["approve", "--rule", "pwd"],
      ["approve", "--dry-run"],
      ["deny", "--scope", "workspace"],
      ["approve", "--remember", "--scope", "global"],
    ]) {
      const run = await runMain([...argv, ...conn], { env });
      expect([argv.join(" "), run.code]).toEqual([argv.join(" "), 2]);
    }
    expect(sim.engine.conversation(sim.engine.activeConversationId)!.waitingIndices()).toEqual([step]);
  });

  it("says where a malformed learned file is wrong", async () => {
    writeFileSync(join(dir, "policy.yaml"), "version: 1\n");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(join(dir, "config", "agy-bridge"), { recursive: true });
    writeFileSync(learnedFile(), "version: 1\nrules:\n  - id: Bad\n    action: approve\n");
    const listed = await runMain(["policy", "rules"], { env });
    expect(listed.code).toBe(1);
    expect(listed.stderr).toBe(`${learnedFile()}:3:9: rules[0].id: must be lower-case letters, digits and dashes, like read-only\n`);
    const check = await runMain(["policy", "check", join(dir, "policy.yaml"), "--", "pwd"], { env });
    expect([check.code, check.stderr]).toEqual([1, listed.stderr]);
  });

  it("includes the learned rules in policy check, after a team deny", async () => {
    writeFileSync(join(dir, "policy.yaml"), 'version: 1\nrules:\n  - id: no-rm\n    kind: command\n    commands: ["rm -rf /*"]\n    action: deny\n');
    await gate("Delete the build directory");
    const saved = await runMain(["approve", ...conn, "--remember", "--scope", "everywhere", "--json"], { env });
    expect(saved.code, saved.stderr).toBe(0);
    const id = (JSON.parse(saved.stdout) as { rule: { id: string } }).rule.id;
    const check = (line: string) =>
      runMain(["policy", "check", join(dir, "policy.yaml"), "--json", "--", line], { env }).then(
        (r) => JSON.parse(r.stdout) as { decision: string; rule: string | null },
      );
    expect(await check("rm -rf build")).toMatchObject({ decision: "approve", rule: id });
    expect(await check("rm -rf /")).toMatchObject({ decision: "deny", rule: "no-rm" });
    expect(await check("rm -rf build/x")).toMatchObject({ decision: "ask", rule: null });
  });
});

describe("a running watch --policy and learned rules", () => {
  let dir: string;
  let sim: SimServer;
  let saved: string | undefined;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "agy-remember-watch-"));
    writeFileSync(join(dir, "policy.yaml"), "version: 1\ndefault: ask\n");
    sim = await startSimServer({ speed: 0.05 });
    // watch reads the learned file from its process's environment.
    saved = process.env["XDG_CONFIG_HOME"];
    process.env["XDG_CONFIG_HOME"] = join(dir, "config");
  });
  afterEach(async () => {
    if (saved === undefined) delete process.env["XDG_CONFIG_HOME"];
    else process.env["XDG_CONFIG_HOME"] = saved;
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function eventsOf(run: StartedCli): MapperEvent[] {
    return run
      .stdout()
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => MapperEventSchema.parse(JSON.parse(l)));
  }

  it("applies a rule saved while it runs, counts it, and stops at once when it is revoked", async () => {
    const conversationId = sim.engine.activeConversationId;
    const conn = ["--url", sim.plainUrl, "--conversation", conversationId];
    const env = { HOME: dir, XDG_CONFIG_HOME: join(dir, "config"), XDG_STATE_HOME: join(dir, "state") };
    const watch = startMain(["watch", ...conn, "--json", "--policy", join(dir, "policy.yaml"), "--audit-file", join(dir, "audit.jsonl")], { env });
    const conv = sim.engine.conversation(conversationId)!;
    const requested = () => eventsOf(watch).filter((e): e is Extract<MapperEvent, { type: "interaction_requested" }> => e.type === "interaction_requested");
    const resolved = () => eventsOf(watch).filter((e): e is Extract<MapperEvent, { type: "interaction_resolved" }> => e.type === "interaction_resolved");
    try {
      await until(() => eventsOf(watch).some((e) => e.type === "history_end"), "watch to attach", { everyMs: 20, seen: watch.stderr, errors: "throw" });
      sim.engine.tuiPort().submitTurn("Run pwd");
      await until(() => requested().length === 1, "the first request", { everyMs: 20, seen: watch.stderr });
      expect(requested()[0]?.policy).toEqual({ decision: "ask", rule: null });
      const approve = await runMain(["approve", ...conn, "--remember", "--scope", "everywhere", "--json"], { env });
      expect(approve.code, approve.stderr).toBe(0);
      const id = (JSON.parse(approve.stdout) as { rule: { id: string } }).rule.id;
      await conv.whenIdle();

      sim.engine.tuiPort().submitTurn("Run pwd");
      await until(() => resolved().length === 2, "the learned rule's approval", { everyMs: 20, seen: watch.stdout });
      expect(requested()[1]?.policy).toEqual({ decision: "approve", rule: id });
      expect(resolved()[1]).toMatchObject({ decidedBy: `policy:${id}` });
      await conv.whenIdle();
      await until(
        async () => (JSON.parse((await runMain(["policy", "rules", "--json"], { env })).stdout) as { rules: Array<{ fired: number }> }).rules[0]?.fired === 1,
        "the rule's fired count",
        { everyMs: 50 },
      );

      expect((await runMain(["policy", "rules", "revoke", id], { env })).code).toBe(0);
      sim.engine.tuiPort().submitTurn("Run pwd");
      await until(() => requested().length === 3, "the third request", { everyMs: 20, seen: watch.stdout });
      expect(requested()[2]?.policy).toEqual({ decision: "ask", rule: null });

      // A file that became unusable is left out (asked, never approved), and said on stderr.
      expect((await runMain(["approve", ...conn, "--remember", "--scope", "everywhere"], { env })).code).toBe(0);
      await conv.whenIdle();
      writeFileSync(join(dir, "config", "agy-bridge", "learned.yaml"), "version: 1\nrules:\n  - id: x\n    action: maybe\n");
      sim.engine.tuiPort().submitTurn("Run pwd");
      await until(() => requested().length === 4, "the fourth request", { everyMs: 20, seen: watch.stdout });
      expect(requested()[3]?.policy).toEqual({ decision: "ask", rule: null });
      expect(watch.stderr()).toMatch(/the learned rules file is left out until it is fixed: .*learned\.yaml:4:13: rules\[0\]\.action/);
    } finally {
      watch.abort();
      await watch.code;
    }
  });
});
