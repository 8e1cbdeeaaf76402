/**
 * `agy-bridge sessions` and `agy-bridge doctor` over real discovery of a real
 * agy-shaped process (scoped to this test's pid), through the CLI's own
 * io contract: one JSON array / object on stdout, exit codes, and never the
 * CSRF token anywhere in the output.
 */
import { execFile } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDoctorCommand } from "../../src/cli/doctor-command.js";
import { createSessionsCommand } from "../../src/cli/sessions-command.js";
import { discoverServers, HINTS } from "../../src/discovery/index.js";
import { runCommand, runMain } from "../support/cli-io.js";
import { BIN, ROOT, startSimAsAgy, tempCache, type AgyProcess } from "./support/agy-process.js";

const TOKEN = "tok-cli-4b7e21";
let cache: ReturnType<typeof tempCache>;
let agy: AgyProcess;

beforeAll(async () => {
  cache = tempCache();
  agy = await startSimAsAgy(cache.dir, TOKEN);
}, 60_000);

afterAll(async () => {
  await agy?.stop();
  cache.remove();
});

const scoped = (pids: number[]) => () => discoverServers({ pids, tmuxServers: [] });

describe("agy-bridge sessions", () => {
  it("prints one JSON array with the server, its listeners and conversation, and csrfTokenPresent instead of the token", async () => {
    const { code, stdout, stderr } = await runCommand(createSessionsCommand({ discover: scoped([agy.info.agyPid]) }), ["--json"]);
    expect(code).toBe(0);
    expect(stdout.endsWith("]\n")).toBe(true);
    expect(stdout.trim().split("\n")).toHaveLength(1);
    const entries = JSON.parse(stdout) as Array<Record<string, unknown>>;
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      pid: agy.info.agyPid,
      version: "1.0.10",
      agyVersion: "1.0.10",
      agyVersionSource: "process",
      simulator: true,
      url: agy.info.tlsUrl,
      csrfTokenPresent: true,
      conversations: [{ conversationId: agy.info.conversationId, status: "CASCADE_RUN_STATUS_IDLE", stepCount: 0, waitingSteps: [] }],
    });
    expect(Object.keys(entries[0] as object).sort()).toEqual([
      "agyVersion",
      "agyVersionSource",
      "conversations",
      "csrfTokenPresent",
      "executable",
      "listeners",
      "pid",
      "simulator",
      "url",
      "version",
    ]);
    expect((entries[0]?.listeners as unknown[]).map((l) => Object.keys(l as object).sort())).toEqual([
      ["heartbeatOk", "port", "transport"],
      ["heartbeatOk", "port", "transport"],
    ]);
    expect(stdout + stderr).not.toContain(TOKEN);
  });

  it("prints an aligned table with one row per conversation and no token", async () => {
    const { code, stdout } = await runCommand(createSessionsCommand({ discover: scoped([agy.info.agyPid]) }), []);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^PID\s+VERSION\s+URL\s+TOKEN\s+PANE\s+CONVERSATION\s+STATUS\s+STEPS\s+WAITING\s+LAST INPUT$/);
    expect(lines).toHaveLength(2);
    expect(lines[1]?.indexOf(agy.info.conversationId)).toBe(lines[0]?.indexOf("CONVERSATION"));
    expect(lines[1]).toContain(agy.info.tlsUrl);
    expect(stdout).not.toContain(TOKEN);
  });

  it("finds this test's agy from a separate `agy-bridge sessions --json` process with no URL given, never printing the token", async () => {
    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, ["--import", "tsx", BIN, "sessions", "--json"], { cwd: ROOT, timeout: 60_000 }, (error, out, err) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout: out, stderr: err }),
      );
    });
    expect(code).toBe(0);
    // Other tests' simulators may be running too: only ours is checked.
    const entries = JSON.parse(stdout) as Array<{ pid: number; url?: string; csrfTokenPresent: boolean; conversations: Array<{ conversationId: string }> }>;
    const ours = entries.filter((e) => e.pid === agy.info.agyPid);
    expect(ours.map((e) => [e.url, e.csrfTokenPresent, e.conversations.map((c) => c.conversationId)])).toEqual([
      [agy.info.tlsUrl, true, [agy.info.conversationId]],
    ]);
    expect(stdout + stderr).not.toContain(TOKEN);
  }, 60_000);

  it("prints [] and exits 0 when no agy runs", async () => {
    const { code, stdout } = await runCommand(createSessionsCommand({ discover: scoped([]) }), ["--json"]);
    expect(code).toBe(0);
    expect(stdout).toBe("[]\n");
  });

  it("is registered with the dispatcher and answers --help", async () => {
    const sessions = await runMain(["sessions", "--help"]);
    const doctor = await runMain(["doctor", "--help"]);
    expect([sessions.code, doctor.code]).toEqual([0, 0]);
    expect(sessions.stdout).toContain("Usage: agy-bridge sessions");
    expect(doctor.stdout).toContain("Usage: agy-bridge doctor");
  });
});

describe("agy-bridge doctor", () => {
  const noTmux = async () => ({ code: 1, stdout: "", stderr: "", failure: "ENOENT" });

  it("walks every step, reports Node and tmux, and exits 0 when a usable server was found, without the token", async () => {
    const { code, stdout, stderr } = await runCommand(createDoctorCommand({ discover: scoped([agy.info.agyPid]), nodeVersion: "v20.0.0-test" }), ["--json"]);
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as { ok: boolean; node: string; tmux: string | null; steps: Array<{ step: string; status: string }> };
    expect(report.ok).toBe(true);
    expect(report.node).toBe("v20.0.0-test");
    expect(report.steps.map((s) => s.step)).toEqual(["processes", "listeners", "version", "credentials", "listener", "listener", "conversations"]);
    expect(report.steps.filter((s) => s.step !== "version").every((s) => s.status === "ok")).toBe(true);
    // Which agy it is, and that it is agy-bridge's simulator, is information, not a failure.
    expect(report.steps.find((s) => s.step === "version")).toMatchObject({ status: "info" });
    expect((JSON.parse(stdout) as { servers: unknown[] }).servers).toMatchObject([
      { pid: agy.info.agyPid, agyVersion: "1.0.10", agyVersionSource: "process", simulator: true },
    ]);
    expect(stdout + stderr).not.toContain(TOKEN);
  });

  it("says in its human output which agy version it found and that it is agy-bridge's simulator", async () => {
    const { code, stdout } = await runCommand(createDoctorCommand({ discover: scoped([agy.info.agyPid]), nodeVersion: "v20.0.0-test" }), []);
    expect(code).toBe(0);
    expect(stdout).toMatch(
      new RegExp(
        `^\\[info\\] version: pid ${agy.info.agyPid}: agy 1\\.0\\.10 \\(from ANTIGRAVITY_LS_VERSION in the environment of its child pid \\d+\\); it is agy-bridge's simulator \\(agy-bridge sim --as-agy\\), not a real agy$`,
        "m",
      ),
    );
  });

  it("exits 1 when nothing is usable, with the hint in the report and one sentence on stderr", async () => {
    const { code, stdout, stderr } = await runCommand(createDoctorCommand({ discover: scoped([]), run: noTmux }), []);
    expect(code).toBe(1);
    expect(stdout).toContain(`[FAIL] processes: no agy or language_server process found in /proc`);
    expect(stdout).toContain(`hint: ${HINTS.noProcess}`);
    expect(stdout).toContain("tmux: not found");
    expect(stderr.trim().split("\n")).toEqual([
      "agy-bridge doctor: no usable agy language server was found (no agy or language_server process found in /proc)",
    ]);
  });
});
