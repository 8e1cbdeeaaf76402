import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAuditLog, defaultAuditPath, readAuditLog, type AuditEntry } from "../../src/audit/index.js";
import { runMain } from "../support/cli-io.js";

function entry(n: number, conversationId = "conv-a"): AuditEntry {
  return {
    conversationId,
    stepIndex: n,
    kind: "permission",
    request: { commandLine: `echo ${n}` },
    decision: "approve",
    decidedBy: "policy:read-only",
    delivery: "delivered",
  };
}

describe("the audit log", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "agy-audit-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("appends one JSON line per decision with time and host, readable only by its owner", async () => {
    const path = join(dir, "state", "agy-bridge", "audit.jsonl");
    const log = createAuditLog({ path, now: () => new Date("2026-12-01T08:00:00.000Z"), host: "box" });
    await log.append(entry(1));
    await log.append({ ...entry(2), decision: "deny", decidedBy: "cli", instruction: "use git clean" });
    const lines = readFileSync(path, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toEqual([
      { time: "2026-12-01T08:00:00.000Z", host: "box", ...entry(1) },
      { time: "2026-12-01T08:00:00.000Z", host: "box", ...entry(2), decision: "deny", decidedBy: "cli", instruction: "use git clean" },
    ]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, "state", "agy-bridge")).mode & 0o777).toBe(0o700);
  });

  it("keeps concurrent appends whole and in call order", async () => {
    const path = join(dir, "audit.jsonl");
    const log = createAuditLog({ path });
    await Promise.all(Array.from({ length: 50 }, (_, i) => log.append(entry(i))));
    const { records, skipped } = await readAuditLog(path);
    expect(skipped).toEqual([]);
    expect(records.map((r) => r.stepIndex)).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });

  it("rotates by size and reads the rotated files oldest first, dropping past keep", async () => {
    const path = join(dir, "audit.jsonl");
    const log = createAuditLog({ path, maxBytes: 400, keep: 2 });
    for (let i = 0; i < 12; i++) await log.append(entry(i));
    expect(statSync(path).size).toBeLessThanOrEqual(400);
    const { records } = await readAuditLog(path, { keep: 2 });
    const steps = records.map((r) => r.stepIndex ?? -1);
    expect(steps).toEqual([...steps].sort((a, b) => a - b));
    expect(steps.at(-1)).toBe(11);
    expect(steps.length).toBeLessThan(12);
  });

  it("filters by time and conversation and reports lines that are not records", async () => {
    const path = join(dir, "audit.jsonl");
    let now = new Date("2026-12-01T08:00:00.000Z");
    const log = createAuditLog({ path, now: () => now });
    await log.append(entry(1, "conv-a"));
    now = new Date("2026-12-01T09:00:00.000Z");
    await log.append(entry(2, "conv-b"));
    appendFileSync(path, '{"torn": tru\n');
    await log.append(entry(3, "conv-a"));
    const since = await readAuditLog(path, { since: new Date("2026-12-01T08:30:00.000Z") });
    expect(since.records.map((r) => r.stepIndex)).toEqual([2, 3]);
    expect(since.skipped).toEqual([{ file: path, line: 3 }]);
    expect((await readAuditLog(path, { conversationId: "conv-a" })).records.map((r) => r.stepIndex)).toEqual([1, 3]);
  });

  it("lives under XDG_STATE_HOME, else ~/.local/state", () => {
    expect(defaultAuditPath({ XDG_STATE_HOME: "/x/state" }, "/home/me")).toBe("/x/state/agy-bridge/audit.jsonl");
    expect(defaultAuditPath({}, "/home/me")).toBe("/home/me/.local/state/agy-bridge/audit.jsonl");
  });

  it("agy-bridge audit prints the log, filtered, as lines or JSON", async () => {
    const log = createAuditLog({ path: join(dir, "agy-bridge", "audit.jsonl"), now: () => new Date(Date.now() - 3_600_000) });
    await log.append(entry(1, "conv-old"));
    const fresh = createAuditLog({ path: join(dir, "agy-bridge", "audit.jsonl") });
    await fresh.append({ ...entry(2, "conv-new"), request: { commandLine: "echo \u001b]52;c;aGk=\u0007" } });
    const env = { XDG_STATE_HOME: dir };
    const json = await runMain(["audit", "--since", "30m", "--json"], { env });
    expect(json.code).toBe(0);
    expect(
      json.stdout
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { conversationId: string }).conversationId),
    ).toEqual(["conv-new"]);
    const human = await runMain(["audit", "--conversation", "conv-new"], { env });
    expect(human.stdout).toContain("approve policy:read-only");
    expect(human.stdout).toContain("echo \\x1b]52;c;aGk=\\x07");
    expect(human.stdout).not.toContain("\u001b");
    expect((await runMain(["audit", "--since", "yesterday"], { env })).code).toBe(2);
    const empty = await runMain(["audit"], { env: { XDG_STATE_HOME: join(dir, "none") } });
    expect(empty).toMatchObject({ code: 0, stdout: "" });
    expect(empty.stderr).toMatch(/no decisions recorded/);
  });
});
