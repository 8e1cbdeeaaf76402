/**
 * `agy-bridge sim --as-agy`: the simulator under the compiled launcher looks
 * like agy to discovery, checked through the real /proc (spike-notes §2.1 cmdline,
 * §2.2 pane → subtree, §2.3 + spike-notes §10.2 fd ↔ net/tcp inodes,
 * §2.5 Heartbeat; spike-notes §10.3: first-argument token, 401
 * without it, ANTIGRAVITY_* in the environment of processes agy spawns).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { createPrivateTmux } from "../support/tmux-server.js";
import { ownedLoopbackListeners } from "../support/proc-listeners.js";
import { alive, childrenOf, cmdline, environ, idleChild } from "../support/proc-tree.js";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = resolve(ROOT, "src/cli/bin.ts");
const HEARTBEAT = "/exa.language_server_pb.LanguageServerService/Heartbeat";
const TOKEN = "sim-token-5f2c";

const GONE = { timeout: 10_000, interval: 50 };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// Only the launcher's build cache is shared: built once, read by every test.
let cacheDir: string;

beforeAll(() => {
  cacheDir = mkdtempSync(join(tmpdir(), "agy-as-agy-"));
});

afterAll(() => {
  rmSync(cacheDir, { recursive: true, force: true });
});

/** Breadth-first from the pane pid to the first process whose cmdline contains bin/agy (spike-notes §2.2). */
function agyInSubtree(root: number): number | undefined {
  const queue = [root];
  const seen = new Set<number>();
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    if (seen.has(pid)) continue;
    seen.add(pid);
    if (cmdline(pid).join(" ").includes("bin/agy")) return pid;
    queue.push(...childrenOf(pid));
  }
  return undefined;
}

interface HeadlessInfo {
  conversationId: string;
  tlsUrl: string;
  plainUrl: string;
  pid: number;
  agyPid: number;
  csrfTokenPresent: boolean;
  agyVersion: string;
}

/** `agy-bridge sim --as-agy --headless …` as a real process; stopped with SIGTERM when the test ends. */
async function startHeadless(extra: string[]): Promise<{ info: HeadlessInfo; stop(): Promise<number | null>; output(): string }> {
  const child = spawn(process.execPath, ["--import", "tsx", BIN, "sim", "--as-agy", "--headless", ...extra], {
    cwd: ROOT,
    env: { ...process.env, AGY_BRIDGE_CACHE_DIR: cacheDir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const exit = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exit;
  });
  const line = await new Promise<string>((resolveLine, reject) => {
    const timer = setTimeout(() => reject(new Error(`no JSON line within 30 s; stdout: ${stdout}; stderr: ${stderr}`)), 30_000);
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      if (stdout.includes("\n")) {
        clearTimeout(timer);
        resolveLine(stdout.split("\n")[0] as string);
      }
    });
    void exit.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code} before its JSON line: ${stderr}`));
    });
  });
  return {
    info: JSON.parse(line) as HeadlessInfo,
    output: () => stdout + stderr,
    async stop() {
      child.kill("SIGTERM");
      return exit;
    },
  };
}

function tlsHeartbeat(port: number, token?: string): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: HEARTBEAT,
        method: "POST",
        rejectUnauthorized: false, // agy's certificate is self-signed (spike-notes §1.1)
        headers: { "content-type": "application/json", ...(token === undefined ? {} : { "x-codeium-csrf-token": token }) },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolvePromise(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end("{}");
  });
}

async function plainHeartbeat(port: number, token?: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}${HEARTBEAT}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token === undefined ? {} : { "x-codeium-csrf-token": token }) },
    body: "{}",
  });
  await res.text();
  return res.status;
}

describe("agy-bridge sim --as-agy", () => {
  it("runs in a tmux pane as a …/bin/agy process with a minted first-argument token and two loopback listeners, TLS below plain", async () => {
    const tmux = createPrivateTmux();
    onTestFinished(() => tmux.kill());
    await tmux.newSession("agy", [process.execPath, "--import", "tsx", BIN, "sim", "--as-agy", "--speed", "0"], {
      cwd: ROOT,
      env: { AGY_BRIDGE_CACHE_DIR: cacheDir },
    });
    const screen = await tmux.waitForScreen("agy", (s) => s.includes("? for shortcuts"), "the fake TUI", 20_000);

    const panePid = Number((await tmux.run(["display-message", "-p", "-t", "agy", "#{pane_pid}"])).trim());
    const agyPid = agyInSubtree(panePid);
    expect(agyPid).toBeTypeOf("number");
    const argv = cmdline(agyPid as number);
    expect(argv[0]).toMatch(/\/bin\/agy$/);
    expect(argv[1]).toBe("--csrf_token");
    const token = argv[2] as string;
    expect(token).toMatch(UUID);
    expect(screen).not.toContain(token);

    const ports = ownedLoopbackListeners(agyPid as number);
    expect(ports).toHaveLength(2);
    const [tlsPort, plainPort] = ports as [number, number];
    expect(await tlsHeartbeat(tlsPort, token)).toBe(200);
    expect(await plainHeartbeat(plainPort, token)).toBe(200);
    expect(await tlsHeartbeat(tlsPort)).toBe(401);
    expect(await plainHeartbeat(plainPort)).toBe(401);

    // A process agy spawned that is not the server: its environment carries the spike-notes §10.3 variables.
    const idle = await idleChild(agyPid as number);
    const env = environ(idle);
    expect(env.get("ANTIGRAVITY_CSRF_TOKEN")).toBe(token);
    expect(env.get("ANTIGRAVITY_LS_ADDRESS")).toBe(`localhost:${plainPort}`);
    // The persona's version, as agy names its own (spike-notes §14 #12); the default persona is 1.0.10.
    expect(env.get("ANTIGRAVITY_LS_VERSION")).toBe("cli-1.0.10");
    expect(env.get("AGY_BRIDGE_SIMULATOR")).toBe("1");
    expect(ownedLoopbackListeners(idle)).toEqual([]);

    // C-c on an empty draft quits the TUI; launcher, idle child and CLI exit with it.
    await tmux.sendKeys("agy", "C-c");
    await expect.poll(() => cmdline(agyPid as number).length, GONE).toBe(0);
    await expect.poll(() => alive(idle), GONE).toBe(false);
  });

  it("prints one JSON line headless with the launcher's pid, csrfTokenPresent and the persona, never the token, and stops on SIGTERM", async () => {
    const sim = await startHeadless(["--csrf-token", TOKEN, "--agy-version", "1.2"]);
    const { info } = sim;
    expect(Object.keys(info).sort()).toEqual(["agyPid", "agyVersion", "conversationId", "csrfTokenPresent", "pid", "plainUrl", "tlsUrl"]);
    expect(info.csrfTokenPresent).toBe(true);
    expect(info.agyVersion).toBe("1.2");
    expect(cmdline(info.agyPid)[0]).toMatch(/\/bin\/agy$/);
    expect(cmdline(info.agyPid).slice(1, 3)).toEqual(["--csrf_token", TOKEN]);
    const plainPort = Number(new URL(info.plainUrl).port);
    expect(ownedLoopbackListeners(info.agyPid)).toContain(plainPort);
    expect(await plainHeartbeat(plainPort, TOKEN)).toBe(200);
    const idle = await idleChild(info.agyPid);

    expect(await sim.stop()).toBe(0);
    expect(sim.output()).not.toContain(TOKEN);
    await expect.poll(() => cmdline(info.agyPid).length, GONE).toBe(0);
    await expect.poll(() => alive(idle), GONE).toBe(false);
  });

  it("mints a different token for each run and keeps it out of the JSON line", async () => {
    const [first, second] = await Promise.all([startHeadless([]), startHeadless([])]);
    const tokens = [first, second].map((sim) => cmdline(sim.info.agyPid)[2] as string);
    for (const token of tokens) expect(token).toMatch(UUID);
    expect(tokens[0]).not.toBe(tokens[1]);
    expect(first.info.csrfTokenPresent).toBe(true);
    const plainPort = Number(new URL(first.info.plainUrl).port);
    expect(await plainHeartbeat(plainPort)).toBe(401);
    expect(await plainHeartbeat(plainPort, tokens[0])).toBe(200);
    expect(first.output()).not.toContain(tokens[0] as string);
  });

  it("models an old agy with --no-csrf: no token anywhere and no header check", async () => {
    const sim = await startHeadless(["--no-csrf"]);
    const { info } = sim;
    expect(info.csrfTokenPresent).toBe(false);
    expect(info.agyVersion).toBe("1.0.10");
    expect(cmdline(info.agyPid)).not.toContain("--csrf_token");
    const plainPort = Number(new URL(info.plainUrl).port);
    expect(await plainHeartbeat(plainPort)).toBe(200);
    const env = environ(await idleChild(info.agyPid));
    expect(env.has("ANTIGRAVITY_CSRF_TOKEN")).toBe(false);
    expect(env.get("ANTIGRAVITY_LS_ADDRESS")).toBe(`localhost:${plainPort}`);
  });
});
