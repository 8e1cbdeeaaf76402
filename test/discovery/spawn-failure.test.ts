/**
 * A program that cannot be started is a finding, never a crash: a missing
 * binary (ENOENT) and a process out of file descriptors (EMFILE, where Node
 * hands back a child without stdout and emits 'error' on the next tick)
 * both come back as a typed result or error.
 */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { spawnCommand } from "../../src/discovery/run-command.js";
import { TmuxError } from "../../src/errors.js";
import { spawnTmux } from "../../src/tmux/spawn-tmux.js";

const CHILD = resolve(import.meta.dirname, "support/spawn-without-fds.ts");

function runUnderLowFdLimit(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // The shell only sets the limit; the program and its arguments are passed as argv ("$@").
  const child = spawn("sh", ["-c", 'ulimit -n 64 && exec "$@"', "sh", process.execPath, "--import", "tsx", CHILD], {
    cwd: resolve(import.meta.dirname, "../.."),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  return new Promise((done, fail) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      fail(new Error(`the low-fd child did not finish within 30 s; stdout: ${stdout}; stderr: ${stderr}`));
    }, 30_000);
    child.once("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

describe("spawning a program that cannot start", () => {
  it("resolves discovery's run with the errno when the binary does not exist", async () => {
    const result = await spawnCommand("/nonexistent/agy-bridge-no-such-binary", ["-V"], { timeoutMs: 5_000 });
    expect(result).toEqual({ code: null, stdout: "", stderr: "", failure: "ENOENT" });
  });

  it("rejects a tmux run with a TmuxError naming the missing binary", async () => {
    const error = await spawnTmux("/nonexistent/tmux", ["-V"], { timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TmuxError);
    expect(error).toMatchObject({ failure: "no_binary" });
  });

  it("turns a run with a NUL in an argument (a synchronous spawn throw) into a result, not a rejection", async () => {
    const result = await spawnCommand("ls", ["a\0b"], { timeoutMs: 5_000 });
    expect(result.code).toBeNull();
    expect(result.failure).toBe("ERR_INVALID_ARG_VALUE");
    const error = await spawnTmux("tmux", ["a\0b"], { timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TmuxError);
  });

  it("survives running out of file descriptors: EMFILE is a result for discovery and a TmuxError for tmux, not a crash", async () => {
    const { code, stdout, stderr } = await runUnderLowFdLimit();
    expect({ code, stderr: stderr.slice(0, 2000) }).toEqual({ code: 0, stderr: "" });
    const report = JSON.parse(stdout) as { exhausted: string; command: unknown; tmux: { rejected?: { name: string; code: string; message: string } } };
    expect(report.exhausted).toBe("EMFILE");
    expect(report.command).toEqual({ code: null, stdout: "", stderr: "", failure: "EMFILE" });
    expect(report.tmux.rejected).toMatchObject({ name: "TmuxError", code: "tmux" });
    expect(report.tmux.rejected?.message).toContain("EMFILE");
  }, 40_000);
});
