/**
 * `agy-bridge screen` through the CLI: a saved capture from a file or
 * stdin, a real tmux pane on a private server, the human summary, and the
 * exit codes of the contract (0 read, 1 unreadable, 2 usage).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { runMain } from "../support/cli-io.js";
import { createPrivateTmux, type PrivateTmux } from "../support/tmux-server.js";

const ROOT = resolve(import.meta.dirname, "../..");
const FIXTURES = join(ROOT, "fixtures/screens");

function fixture(name: string): { path: string; text: string; expected: unknown } {
  const path = join(FIXTURES, `${name}.txt`);
  return {
    path,
    text: readFileSync(path, "utf8"),
    expected: (JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), "utf8")) as { expected: unknown }).expected,
  };
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("agy-bridge screen --file / -", () => {
  it("prints exactly one JSON object of the screen model for a saved capture", async () => {
    const { path, expected } = fixture("dialog-command-six-options-1.1.27");
    const cli = await runMain(["screen", "--file", path, "--json"]);
    expect(cli.stderr).toBe("");
    expect(cli.code).toBe(0);
    expect(cli.stdout.endsWith("\n")).toBe(true);
    expect(cli.stdout.trim().split("\n")).toHaveLength(1);
    expect(JSON.parse(cli.stdout)).toEqual(expected);
  });

  it("reads a capture from stdin with -", async () => {
    const { text, expected } = fixture("popup-slash-1.1.27");
    const cli = await runMain(["screen", "-", "--json"], { stdin: Readable.from([Buffer.from(text, "utf8")]) });
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toEqual(expected);
  });

  it("exits 0 with state unknown for a screen it does not recognise", async () => {
    const cli = await runMain(["screen", "-", "--json"], { stdin: Readable.from([Buffer.from("just some text\n", "utf8")]) });
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ state: "unknown", prompt: null });
  });

  it("prints a short human summary with the pointer marked", async () => {
    const cli = await runMain(["screen", "--file", fixture("dialog-command-pointer-moved-1.2.3").path]);
    expect(cli.code).toBe(0);
    const lines = cli.stdout.split("\n");
    expect(lines[0]).toBe("state: prompt");
    expect(lines[1]).toBe("composer: absent");
    expect(lines[2]).toMatch(/^mode: default {3}model: Gemini 3\.9 Pro$/u);
    expect(lines[3]).toBe("prompt: command, keys arrows — Run this command?");
    expect(lines).toContain("  > 4. No");
    expect(lines).toContain("    1. Yes");
  });

  it("says in the human summary what agy 1.2.x screens add: tasks, the file action, the form, setup", async () => {
    const run = async (name: string): Promise<string[]> => {
      const cli = await runMain(["screen", "--file", fixture(name).path]);
      expect(cli.code).toBe(0);
      return cli.stdout.split("\n");
    };
    expect(await run("dialog-command-run-1.2.10")).toContain("background tasks: 2 (not busy)");
    expect(await run("dialog-pending-edit-1.2.9")).toContain("prompt: file (edit), keys arrows — Accept this file edit?");
    expect(await run("question-form-2of3-1.2.1")).toContain("prompt: question 2/3, ← Back, keys arrows — Which port should it listen on?");
    const setup = await run("setup-sign-in-1.2.1");
    expect(setup).toContain("prompt: setup (sign_in), keys arrows");
    expect(setup.some((line) => line.startsWith("setup required:"))).toBe(true);
    expect((await run("dialog-amend-1.2.1")).some((line) => line.includes("amend field"))).toBe(true);
    expect(await run("dialog-command-two-options-custom-status-1.2.x")).toContain("status line: a user-defined one, not agy's (its words are not read)");
  });

  it("prints the new fields in --json only where they apply", async () => {
    const tasks = JSON.parse((await runMain(["screen", "--file", fixture("idle-task-strip-1.2.x").path, "--json"])).stdout) as Record<string, unknown>;
    expect(tasks).toMatchObject({ state: "ready", backgroundTasks: 1 });
    const plain = JSON.parse((await runMain(["screen", "--file", fixture("idle-boot-1.1.27").path, "--json"])).stdout) as Record<string, unknown>;
    expect(Object.keys(plain).sort()).toEqual(["composer", "draft", "mode", "model", "prompt", "state"]);
  });

  it("shows the draft in the human summary, control characters made visible", async () => {
    const text = ["─".repeat(40), "> rm \u0007bell \u009b2J -rf", "─".repeat(40), "? for shortcuts"].join("\n");
    const cli = await runMain(["screen", "-"], { stdin: Readable.from([Buffer.from(text, "utf8")]) });
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain('composer: draft: "rm \\u0007bell \\x9b2J -rf"');
    expect(cli.stdout).not.toContain("\u009b");
    expect(cli.stdout).not.toContain("\u0007");
  });

  it("exits 1 with one sentence when the file cannot be read", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agyb-screen-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const missing = await runMain(["screen", "--file", join(dir, "nope.txt"), "--json"]);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toMatch(/^agy-bridge screen: The capture file .*nope\.txt cannot be read \(it does not exist\); .*\n$/u);
    const directory = await runMain(["screen", "--file", dir]);
    expect(directory.code).toBe(1);
    expect(directory.stderr).toContain("it is a directory");
  });

  it.each([
    [["screen"], /give exactly one of --pane TARGET, --file PATH or -/u],
    [["screen", "--json"], /give exactly one of/u],
    [["screen", "--file", "a.txt", "-"], /give exactly one of/u],
    [["screen", "--pane", "%1", "--file", "a.txt"], /give exactly one of/u],
    [["screen", "--file", "a.txt", "-L", "work"], /-L and -S choose the tmux server of --pane/u],
    [["screen", "--pane", "%1", "-L", "a", "-S", "/tmp/b"], /give -L or -S, not both/u],
    [["screen", "--pane", "main"], /--pane must be a pane id/u],
    [["screen", "--file="], /--file needs a non-empty value/u],
    [["screen", "capture.txt"], /the only argument is -/u],
    [["screen", "--file", "a.txt", "--colour"], /unknown option --colour/u],
    [["screen", "-", "-"], /at most 1 argument/u],
  ])("exits 2 on the usage error %j", async (argv, message) => {
    const cli = await runMain(argv);
    expect(cli.code).toBe(2);
    expect(cli.stdout).toBe("");
    expect(cli.stderr).toMatch(message);
    expect(cli.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("runs as a real process: bin.ts reads stdin and prints the model", async () => {
    const { text, expected } = fixture("trust-1.1.27");
    const result = await new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
      const child = execFile(
        process.execPath,
        ["--import", "tsx", join(ROOT, "src/cli/bin.ts"), "screen", "-", "--json"],
        { cwd: ROOT, timeout: 60_000 },
        (error, stdout, stderr) => {
          done({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr });
        },
      );
      child.stdin?.end(text);
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(expected);
  });
});

describe("agy-bridge screen --pane", () => {
  async function tmux(): Promise<PrivateTmux> {
    const server = createPrivateTmux();
    cleanups.push(() => server.kill());
    return server;
  }

  it("reads a real tmux pane on a private server (-L) and prints its model", async () => {
    const server = await tmux();
    const { path, expected } = fixture("dialog-command-1.1.27");
    // The pane shows the capture and stays (sleep), as agy's screen would; the path is an argument, never shell text.
    await server.newSession("agy", ["sh", "-c", 'cat -- "$1"; exec sleep 600', "sh", path], { columns: 120, rows: 50 });
    await server.waitForScreen("=agy:", (s) => s.includes("esc to cancel"), "the capture's status row");
    const paneId = (await server.run(["display-message", "-p", "-t", "=agy:", "#{pane_id}"])).trim();
    const cli = await runMain(["screen", "--pane", paneId, "-L", server.socketName, "--json"]);
    expect(cli.stderr).toBe("");
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toEqual(expected);
  });

  it("reads a pane by socket path (-S) and an exact session name", async () => {
    const server = await tmux();
    const { path, expected } = fixture("idle-plan-1.2.4");
    await server.newSession("plan", ["sh", "-c", 'cat -- "$1"; exec sleep 600', "sh", path], { columns: 100, rows: 40 });
    await server.waitForScreen("=plan:", (s) => s.includes("Plan mode:") && s.includes("? for shortcuts"), "the plan-mode composer");
    const cli = await runMain(["screen", "--pane", "=plan", "-S", server.socketPath, "--json"]);
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toEqual(expected);
  });

  it("reads agy 1.2.x screens in a real pane: the task strip under the composer, the amend field", async () => {
    const server = await tmux();
    for (const [session, name, marker] of [
      ["tasks", "idle-task-strip-1.2.x", "1 task(s)"],
      ["amend", "dialog-amend-1.2.1", "enter Submit"],
    ] as const) {
      const { path, expected } = fixture(name);
      await server.newSession(session, ["sh", "-c", 'cat -- "$1"; exec sleep 600', "sh", path], { columns: 120, rows: 50 });
      await server.waitForScreen(`=${session}:`, (s) => s.includes(marker), `the ${name} capture`);
      const cli = await runMain(["screen", "--pane", `=${session}`, "-L", server.socketName, "--json"]);
      expect(cli.code, name).toBe(0);
      expect(JSON.parse(cli.stdout), name).toEqual(expected);
    }
  });

  it("exits 1 with one sentence when the pane or the server is not there", async () => {
    const server = await tmux();
    await server.newSession("other", ["sleep", "600"]);
    const noPane = await runMain(["screen", "--pane", "%999", "-L", server.socketName, "--json"]);
    expect(noPane.code).toBe(1);
    expect(noPane.stdout).toBe("");
    expect(noPane.stderr).toMatch(/^agy-bridge screen: There is no tmux pane %999 .*\n$/u);
    const noServer = await runMain(["screen", "--pane", "%1", "-L", `${server.socketName}-absent`]);
    expect(noServer.code).toBe(1);
    expect(noServer.stderr).toMatch(/^agy-bridge screen: No tmux server is running/u);
  });
});
