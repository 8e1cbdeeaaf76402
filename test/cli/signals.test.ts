/**
 * A long-running command stops cleanly on Ctrl-C even when the signal arrives
 * twice at once (the terminal signals the whole process group, and runners
 * such as tsx relay it again).
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
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
  it("shuts serve down cleanly with exit 0 when SIGINT arrives twice in a row", { timeout: 60_000 }, async () => {
    dir = await mkdtemp(join(tmpdir(), "agyb-signals-"));
    const child = spawn(process.execPath, ["--import", "tsx", BIN, "serve", "--listen", "127.0.0.1:0", "--json", "--token-file", join(dir, "token")], {
      cwd: ROOT,
      env: { ...process.env, AGY_BRIDGE_TOKEN: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (c: string) => (stderr += c));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.once("exit", (code, signal) => done({ code, signal })));
    const line = await firstLine(child.stdout, "serve", 30_000, () => `stderr: ${stderr}`);
    const { url } = JSON.parse(line) as { url: string };
    expect((await fetch(`${url}/`)).status).toBe(200);
    child.kill("SIGINT");
    child.kill("SIGINT");
    const result = await exited;
    expect(result, stderr).toEqual({ code: 0, signal: null });
  });
});
