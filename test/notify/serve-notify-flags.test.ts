/**
 * serve's notification flags, as a subprocess: mistakes refused before it
 * listens, with a sentence; the install's webhook secret made once, 0600,
 * and said once.
 */
import { spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, ROOT, startServeProcess, type ServeProcess } from "../server/support/serve-process.js";

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "agyb-notify-flags-"));
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function refused(args: string[], configHome?: string): Promise<{ code: number | null; stderr: string }> {
  const dir = configHome ?? (await tempDir());
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: dir, XDG_STATE_HOME: dir };
  delete env["AGY_BRIDGE_TOKEN"];
  const child = spawn(process.execPath, ["--import", "tsx", BIN, "serve", "--listen", "127.0.0.1:0", "--refresh-ms", "60000", ...args], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`serve did not exit within 30 s; stderr: ${stderr}`));
    }, 30_000);
    child.once("exit", (exitCode) => {
      clearTimeout(timer);
      resolve(exitCode);
    });
  });
  return { code, stderr };
}

describe("serve's notification flags", { timeout: 90_000 }, () => {
  it("refuses mistakes before listening, saying what to fix", async () => {
    const results = await Promise.all([
      refused(["--notify-webhook", "http://127.0.0.1:9/a", "--notify-webhook", "http://127.0.0.1:9/b", "--notify-webhook-secret-file", "/dev/null"]),
      refused(["--telegram-chat", "12345"]),
      refused(["--escalate-after", "soon"]),
      refused(["--notify-webhook", "ftp://example.com/x"]),
      refused(["--notify-webhook", "https://user:hunter2@hooks.example.com/x"]),
    ]);
    expect(results.map((r) => r.code)).toEqual([2, 2, 2, 2, 2]);
    expect(results[4]!.stderr).toMatch(/--notify-webhook takes no user:password@ in the URL \(hooks\.example\.com\)/);
    expect(results[4]!.stderr).not.toContain("hunter2");
    expect(results[0]!.stderr).toMatch(/--notify-webhook-secret-file is given 1 time\(s\) for 2 webhook\(s\)/);
    expect(results[1]!.stderr).toMatch(/--telegram-bot-token-file and --telegram-chat go together/);
    expect(results[2]!.stderr).toMatch(/--escalate-after wants a duration/);
    expect(results[3]!.stderr).toMatch(/--notify-webhook wants an http\(s\) URL/);
    for (const r of results) expect(r.stderr).not.toMatch(/listening on/);
  });

  it("makes the install's webhook secret once (0600), prints it that once, and keeps it across restarts", async () => {
    const dir = await tempDir();
    const args = ["--refresh-ms", "60000", "--notify-webhook", "http://127.0.0.1:9/hook"];
    let serve: ServeProcess | undefined = await startServeProcess({ configHome: dir, args });
    cleanup.push(() => serve?.stop() ?? Promise.resolve());
    const file = join(dir, "agy-bridge", "webhook-secret");
    const secret = (await readFile(file, "utf8")).trim();
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(serve.stderr().split(secret).length - 1).toBe(1);
    await serve.stop();
    serve = await startServeProcess({ configHome: dir, args });
    expect(serve.stderr()).not.toContain(secret);
    expect((await readFile(file, "utf8")).trim()).toBe(secret);
  });

  it("refuses a webhook secret file others can read", async () => {
    const dir = await tempDir();
    await mkdir(join(dir, "agy-bridge"), { recursive: true, mode: 0o700 });
    await writeFile(join(dir, "agy-bridge", "webhook-secret"), "world-readable-secret\n");
    await chmod(join(dir, "agy-bridge", "webhook-secret"), 0o644);
    const { code, stderr } = await refused(["--notify-webhook", "http://127.0.0.1:9/x"], dir);
    expect(code).toBe(1);
    expect(stderr).toMatch(/can be read by other users \(mode 644\); run `chmod 600/);
    expect(stderr).not.toContain("world-readable-secret");
  });
});
