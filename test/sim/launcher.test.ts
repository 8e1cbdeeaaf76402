/**
 * The --as-agy launcher as a real process, inspected through the real /proc
 * (spike-notes §2.1 cmdline match, §2.3 / spike-notes §10.2: socket inodes in
 * /proc/<pid>/fd matched to LISTEN rows of /proc/<pid>/net/tcp; newer-builds
 * "CSRF token": first-argument token and the ANTIGRAVITY_* environment).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isAgyBridgeError } from "../../src/errors.js";
import { buildAgyLauncher } from "../../src/sim/launcher/build-agy-launcher.js";
import { ownedLoopbackListeners } from "../support/proc-listeners.js";
import { alive, cmdline, environ, idleChild } from "../support/proc-tree.js";

const ROOT = resolve(import.meta.dirname, "../..");
const STUB = join(ROOT, "test/support/launcher-stub-child.ts");

let dir: string;
let launcher: string;
const started: ChildProcess[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "agy-launcher-"));
  launcher = await buildAgyLauncher({ outDir: join(dir, "cache") });
});

afterAll(() => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

function startLauncher(args: string[]): Promise<ChildProcess> {
  const child = spawn(launcher, args, {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, AGY_SIM_NODE: process.execPath, AGY_SIM_ARGV: ["--import", "tsx", STUB, "stub-arg"].join("\n") },
  });
  started.push(child);
  return new Promise((resolvePromise, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`the stub under the launcher never said ready within 20 s; stdout: ${JSON.stringify(out)}`)), 20_000);
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      if (out.includes("ready\n")) {
        clearTimeout(timer);
        resolvePromise(child);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`launcher exited early with ${code}`));
    });
  });
}

interface StubAnswer {
  fd: number;
  argv: string[];
  env: Record<string, string | null>;
}

async function ask(port: number): Promise<StubAnswer> {
  return (await (await fetch(`http://127.0.0.1:${port}/`)).json()) as StubAnswer;
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((r) => child.once("exit", (code) => r(code)));
}

const GONE = { timeout: 10_000, interval: 50 };

describe("agy launcher", () => {
  it("builds once per source and reuses the cached binary at …/bin/agy", async () => {
    expect(launcher).toMatch(/\/bin\/agy$/);
    expect(await buildAgyLauncher({ outDir: join(dir, "cache") })).toBe(launcher);
  });

  it("fails with a clear error when the C compiler is missing", async () => {
    const error = await buildAgyLauncher({ outDir: join(dir, "nocc"), cc: "no-such-cc-here" }).catch((e: unknown) => e);
    expect(isAgyBridgeError(error, "internal")).toBe(true);
    expect((error as Error).message).toContain('no C compiler "no-such-cc-here"');
  });

  it("reports compiler output when the source does not compile", async () => {
    const broken = join(dir, "broken.c");
    writeFileSync(broken, "int main(void) { return }\n");
    await expect(buildAgyLauncher({ outDir: join(dir, "broken"), sourcePath: broken })).rejects.toThrow(/failed to build the --as-agy launcher/);
  });

  it("looks like agy to discovery: cmdline with bin/agy and a first-argument token, two owned loopback listeners (spike-notes §2.1, §2.3)", async () => {
    const child = await startLauncher(["--csrf_token", "T0K", "--headless"]);
    const pid = child.pid as number;
    expect(cmdline(pid)).toEqual([launcher, "--csrf_token", "T0K", "--headless"]);
    const ports = ownedLoopbackListeners(pid);
    expect(ports).toHaveLength(2);
    const [, higher] = ports as [number, number];
    const answers = await Promise.all(ports.map(ask));
    // The lower port is the TLS listener's fd 3 (agy 1.0.10 order, spike-notes §1.1).
    expect(answers.map((a) => a.fd)).toEqual([3, 4]);
    expect(answers[0]).toMatchObject({
      argv: ["stub-arg", "--csrf_token", "T0K", "--headless"],
      env: {
        ANTIGRAVITY_CSRF_TOKEN: "T0K",
        ANTIGRAVITY_LS_ADDRESS: `localhost:${higher}`,
        ANTIGRAVITY_LS_VERSION: "cli-sim",
        AGY_SIM_LAUNCHER_PID: String(pid),
      },
    });
    child.kill("SIGTERM");
    // The child's own status (42 on SIGTERM) comes back through the launcher.
    expect(await exited(child)).toBe(42);
  });

  it("does not take a token that is not the first argument (spike-notes §10.3)", async () => {
    const child = await startLauncher(["--headless", "--csrf_token", "LATER"]);
    const [port] = ownedLoopbackListeners(child.pid as number);
    const answer = await ask(port as number);
    expect(answer.env.ANTIGRAVITY_CSRF_TOKEN).toBeNull();
    child.kill("SIGINT");
    expect(await exited(child)).toBe(130);
  });

  it("keeps an idle child that carries agy's spawned-process environment but none of the listeners (spike-notes §10.3)", async () => {
    const child = await startLauncher(["--csrf_token", "T0K", "--headless"]);
    const pid = child.pid as number;
    const idle = await idleChild(pid);
    const [, plainPort] = ownedLoopbackListeners(pid) as [number, number];
    const env = environ(idle);
    expect([env.get("ANTIGRAVITY_CSRF_TOKEN"), env.get("ANTIGRAVITY_LS_ADDRESS"), env.get("ANTIGRAVITY_LS_VERSION")]).toEqual([
      "T0K",
      `localhost:${plainPort}`,
      "cli-sim",
    ]);
    expect(env.has("AGY_SIM_ARGV")).toBe(false);
    expect(cmdline(idle).join(" ")).not.toContain("bin/agy");
    expect(ownedLoopbackListeners(idle)).toEqual([]);
    expect(alive(idle)).toBe(true);
    child.kill("SIGTERM");
    await exited(child);
    await expect.poll(() => alive(idle), GONE).toBe(false);
  });

  it("gives the idle child no token when there is no first-argument token", async () => {
    const child = await startLauncher(["--headless"]);
    const env = environ(await idleChild(child.pid as number));
    expect(env.has("ANTIGRAVITY_CSRF_TOKEN")).toBe(false);
    expect(env.get("ANTIGRAVITY_LS_ADDRESS")).toMatch(/^localhost:\d+$/);
    child.kill("SIGTERM");
    await exited(child);
  });

  it("takes the idle child down with it when the launcher itself is killed", async () => {
    const child = await startLauncher(["--headless"]);
    const idle = await idleChild(child.pid as number);
    child.kill("SIGKILL");
    await exited(child);
    await expect.poll(() => alive(idle), GONE).toBe(false);
  });
});
