/**
 * A long-running command finishes its cleanup on Ctrl-C even when the signal
 * comes again while it cleans up (the terminal signals the whole process
 * group, and runners such as tsx relay it once more).
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { firstLine } from "../support/first-line.js";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = resolve(ROOT, "src/cli/bin.ts");
let dir: string | undefined;
afterEach(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("signals", () => {
  it("lets serve finish its shutdown with exit 0 when SIGINT comes again during it", { timeout: 60_000 }, async () => {
    dir = await mkdtemp(join(tmpdir(), "agyb-signals-"));
    const token = "signals-token-signals-token";
    const child = spawn(
      process.execPath,
      ["--import", "tsx", BIN, "serve", "--listen", "127.0.0.1:0", "--json", "--token-file", join(dir, "token"), "--refresh-ms", "60000"],
      {
        cwd: ROOT,
        env: { ...process.env, AGY_BRIDGE_TOKEN: token },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    const stderrChanged = new Set<() => void>();
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (c: string) => {
      stderr += c;
      for (const wake of stderrChanged) wake();
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.once("exit", (code, signal) => done({ code, signal })));
    const { url } = JSON.parse(await firstLine(child.stdout, "agy-bridge serve", 30_000, () => stderr)) as { url: string };
    // A request whose body never finishes keeps the shutdown busy for its grace period.
    const port = Number(new URL(url).port);
    const stalled = connect(port, "127.0.0.1");
    await new Promise<void>((done) => stalled.once("connect", done));
    stalled.write(`POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nContent-Length: 1000\r\n\r\n{"partial":`);
    stalled.resume();
    const stalledClosed = new Promise<void>((done) => stalled.once("close", () => done()));
    child.kill("SIGINT");
    await new Promise<void>((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`serve never said it was shutting down; stderr: ${stderr}`)), 30_000);
      const check = () => {
        if (!stderr.includes("shutting down")) return;
        clearTimeout(timer);
        stderrChanged.delete(check);
        done();
      };
      stderrChanged.add(check);
      check();
    });
    child.kill("SIGINT");
    expect(await exited, stderr).toEqual({ code: 0, signal: null });
    await stalledClosed;
  });
});
