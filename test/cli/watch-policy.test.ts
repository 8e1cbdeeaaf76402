/**
 * `agy-bridge watch --policy`: the policy answers agy's requests as they
 * appear, the rest stays for a person, and every decision lands in the
 * audit log in order — against the simulator over real loopback sockets.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readAuditLog } from "../../src/audit/index.js";
import { MapperEventSchema, type MapperEvent } from "../../src/mapper/index.js";
import { AgySession } from "../../src/session/index.js";
import { startSimServer, type SimServer } from "../../src/sim/index.js";
import { runMain, startMain, type StartedCli } from "../support/cli-io.js";
import { until } from "../support/until.js";

const POLICY = `version: 1
default: ask
rules:
  - id: no-delete
    kind: command
    commands: ["rm *"]
    action: deny
    instruction: Keep it; tell me why.
  - id: read-only
    kind: command
    commands: ["pwd"]
    action: approve
  - id: files
    kind: file
    action: ask
`;

function eventsOf(run: StartedCli): MapperEvent[] {
  return run
    .stdout()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => MapperEventSchema.parse(JSON.parse(l)));
}

describe("agy-bridge watch --policy", () => {
  let dir: string;
  let sim: SimServer;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "agy-watch-policy-"));
    writeFileSync(join(dir, "policy.yaml"), POLICY);
    sim = await startSimServer({ speed: 0.05 });
  });
  afterEach(async () => {
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("approves, denies and asks as the policy says, and logs every decision, another client's too (as observed), in order", async () => {
    const conversationId = sim.engine.activeConversationId;
    const audit = join(dir, "audit.jsonl");
    const watch = startMain([
      "watch",
      "--url",
      sim.plainUrl,
      "--conversation",
      conversationId,
      "--json",
      "--policy",
      join(dir, "policy.yaml"),
      "--audit-file",
      audit,
    ]);
    const resolved = () => eventsOf(watch).filter((e): e is Extract<MapperEvent, { type: "interaction_resolved" }> => e.type === "interaction_resolved");
    try {
      await until(() => eventsOf(watch).some((e) => e.type === "history_end"), "watch to attach", { everyMs: 20, seen: watch.stderr, errors: "throw" });
      const conv = sim.engine.conversation(conversationId)!;
      sim.engine.tuiPort().submitTurn("Run pwd");
      await until(() => resolved().length === 1, "the policy's approval", { everyMs: 20, seen: watch.stderr, errors: "throw" });
      await conv.whenIdle();
      sim.engine.tuiPort().submitTurn("Delete the build directory");
      await until(() => resolved().length === 2, "the policy's deny", { everyMs: 20, seen: watch.stderr, errors: "throw" });
      await conv.whenIdle();
      sim.engine.tuiPort().submitTurn("Read my shell profile");
      await until(() => eventsOf(watch).filter((e) => e.type === "interaction_requested").length === 3, "the file gate", {
        everyMs: 20,
        seen: watch.stderr,
        errors: "throw",
      });
      // The policy asks: the gate stays open until someone answers it elsewhere.
      await until(() => readFileSync(audit, "utf8").includes('"decision":"ask"'), "the ask in the audit log", {
        everyMs: 20,
        seen: () => readFileSync(audit, "utf8"),
        errors: "throw",
      });
      expect(conv.waitingIndices()).toHaveLength(1);
      // Another client answers over RPC (not in agy's TUI): watch sees the step settle, not who settled it.
      const person = await AgySession.attach({ url: sim.plainUrl, conversationId, follow: false });
      try {
        const [pending] = await person.pending();
        expect((await person.approve(pending!.interactionId)).result).toBe("delivered");
      } finally {
        await person.close();
      }
      await until(() => resolved().length === 3, "the person's approval", { everyMs: 20, seen: watch.stderr, errors: "throw" });
      expect(resolved().map((e) => [e.outcome, e.decidedBy ?? null])).toEqual([
        ["approved", "policy:read-only"],
        ["denied", "policy:no-delete"],
        ["approved", null],
      ]);
      await until(() => readFileSync(audit, "utf8").trim().split("\n").length === 4, "four audit records", {
        everyMs: 20,
        seen: () => readFileSync(audit, "utf8"),
        errors: "throw",
      });
      const { records } = await readAuditLog(audit);
      expect(records.map((r) => [r.decision, r.decidedBy, r.delivery, r.request.commandLine ?? r.request.path])).toEqual([
        ["approve", "policy:read-only", "delivered", "pwd"],
        ["deny", "policy:no-delete", "delivered", "rm -rf build"],
        ["ask", "policy:files", "pending", "file:///home/sim/.bashrc"],
        ["approve", "observed", "observed", "file:///home/sim/.bashrc"],
      ]);
      expect(records[1]).toMatchObject({ instruction: "Keep it; tell me why.", conversationId });
    } finally {
      watch.abort();
      await watch.code;
    }
  });

  it("prints the [policy] line before the resolution, the tool output and the idle it caused (human output)", async () => {
    const conversationId = sim.engine.activeConversationId;
    const watch = startMain(["watch", "--url", sim.plainUrl, "--conversation", conversationId, "--policy", join(dir, "policy.yaml")]);
    const all = () => `${watch.stdout()}${watch.stderr()}`;
    try {
      await until(() => /follow|history|live/i.test(all()), "watch to attach", { everyMs: 20, seen: all, errors: "throw" });
      const conv = sim.engine.conversation(conversationId)!;
      sim.engine.tuiPort().submitTurn("Run pwd");
      await conv.whenIdle();
      await until(() => all().includes("[policy]") && all().includes("tool output (run_command)"), "the policy line, the resolution and the output", {
        everyMs: 20,
        seen: all,
        errors: "throw",
      });
      // watch's human lines are one stream (stderr): the verdict comes first, then the resolution it caused, then the tool's output.
      const lines = watch.stderr().split("\n");
      const policyAt = lines.findIndex((l) => l.startsWith("[policy] approve pwd"));
      const resolvedAt = lines.findIndex((l) => /\[resolved\] step \d+: approved/.test(l));
      const outputAt = lines.findIndex((l) => l.includes("tool output (run_command)"));
      expect(policyAt, watch.stderr()).toBeGreaterThan(-1);
      expect(resolvedAt, watch.stderr()).toBeGreaterThan(policyAt);
      expect(outputAt, watch.stderr()).toBeGreaterThan(resolvedAt);
    } finally {
      watch.abort();
      await watch.code;
    }
  });

  it("records an answer given with the CLI once, as cli, not again as observed", async () => {
    const conversationId = sim.engine.activeConversationId;
    const audit = join(dir, "agy-bridge", "audit.jsonl");
    writeFileSync(join(dir, "policy.yaml"), "version: 1\ndefault: ask\n");
    const env = { XDG_STATE_HOME: dir };
    const watch = startMain(["watch", "--url", sim.plainUrl, "--conversation", conversationId, "--json", "--policy", join(dir, "policy.yaml")], { env });
    try {
      await until(() => eventsOf(watch).some((e) => e.type === "history_end"), "watch to attach", { everyMs: 20, seen: watch.stderr, errors: "throw" });
      sim.engine.tuiPort().submitTurn("Run pwd");
      await until(() => eventsOf(watch).some((e) => e.type === "interaction_requested"), "the gate", { everyMs: 20, seen: watch.stderr, errors: "throw" });
      const approve = await runMain(["approve", "--url", sim.plainUrl, "--conversation", conversationId, "--json"], { env });
      expect(approve.code, approve.stderr).toBe(0);
      await until(() => eventsOf(watch).some((e) => e.type === "interaction_resolved"), "the resolution", { everyMs: 20, seen: watch.stderr, errors: "throw" });
    } finally {
      watch.abort();
      await watch.code;
    }
    // watch has flushed: it waited to see whether another process recorded the answer.
    const { records } = await readAuditLog(audit);
    expect(records.map((r) => [r.decision, r.decidedBy, r.delivery, r.request.commandLine])).toEqual([
      ["ask", "policy:default", "pending", "pwd"],
      ["approve", "cli", "delivered", "pwd"],
    ]);
  });

  it("refuses to start on a policy with an error, naming its line and column", async () => {
    writeFileSync(join(dir, "policy.yaml"), "version: 1\nrules:\n  - id: x\n    kind: command\n    action: allow\n");
    const result = await runMain(["watch", "--url", sim.plainUrl, "--policy", join(dir, "policy.yaml")]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`agy-bridge watch: ${join(dir, "policy.yaml")}:5:13: rules[0].action: must be approve, deny or ask\n`);
  });
});
