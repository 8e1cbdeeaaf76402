/**
 * `agy-bridge sim --as-agy`: the simulator under the compiled launcher looks
 * like agy to discovery, checked through the real /proc (spike-notes §2.1 cmdline,
 * §2.2 pane → subtree, §2.3 + spike-notes §10.2 fd ↔ net/tcp inodes,
 * §2.5 Heartbeat; spike-notes §10.3: first-argument token, 401
 * without it, ANTIGRAVITY_* in the environment of processes agy spawns).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPrivateTmux, type PrivateTmux } from "../support/tmux-server.js";
import { ownedLoopbackListeners } from "../support/proc-listeners.js";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = resolve(ROOT, "src/cli/bin.ts");
const HEARTBEAT = "/exa.language_server_pb.LanguageServerService/Heartbeat";
const TOKEN = "sim-token-5f2c";

let tmux: PrivateTmux;
let cacheDir: string;

beforeAll(() => {
  tmux = createPrivateTmux();
  cacheDir = mkdtempSync(join(tmpdir(), "agy-as-agy-"));
});

afterAll(async () => {
  await tmux.kill();
  rmSync(cacheDir, { recursive: true, force: true });
});

function cmdline(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  } catch {
    return [];
  }
}

function children(pid: number): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((child) => {
      try {
        const stat = readFileSync(`/proc/${child}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid;
      } catch {
        return false;
      }
    });
}

/** Breadth-first from the pane pid to the first process whose cmdline contains bin/agy (spike-notes §2.2). */
function agyInSubtree(root: number): number | undefined {
  const queue = [root];
  const seen = new Set<number>();
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    if (seen.has(pid)) continue;
    seen.add(pid);
    if (cmdline(pid).join(" ").includes("bin/agy")) return pid;
    queue.push(...children(pid));
  }
  return undefined;
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
  it("runs in a tmux pane as a …/bin/agy process that owns two loopback listeners answering Heartbeat, TLS below plain", async () => {
    await tmux.newSession("agy", [process.execPath, "--import", "tsx", BIN, "sim", "--as-agy", "--csrf_token", TOKEN, "--speed", "0"], {
      cwd: ROOT,
      env: { AGY_BRIDGE_CACHE_DIR: cacheDir },
    });
    const screen = await tmux.waitForScreen("agy", (s) => s.includes("? for shortcuts"), "the fake TUI", 20_000);
    expect(screen).not.toContain(TOKEN);

    const panePid = Number((await tmux.run(["display-message", "-p", "-t", "agy", "#{pane_pid}"])).trim());
    const agyPid = agyInSubtree(panePid);
    expect(agyPid).toBeDefined();
    const argv = cmdline(agyPid as number);
    expect(argv[0]).toMatch(/\/bin\/agy$/);
    expect(argv.slice(1, 3)).toEqual(["--csrf_token", TOKEN]);

    const ports = ownedLoopbackListeners(agyPid as number);
    expect(ports).toHaveLength(2);
    const [tlsPort, plainPort] = ports as [number, number];
    expect(await tlsHeartbeat(tlsPort, TOKEN)).toBe(200);
    expect(await plainHeartbeat(plainPort, TOKEN)).toBe(200);
    expect(await tlsHeartbeat(tlsPort)).toBe(401);
    expect(await plainHeartbeat(plainPort)).toBe(401);

    // The simulator is a process agy spawned: its environment carries the spike-notes §10.3 variables.
    const [simPid] = children(agyPid as number);
    const environ = readFileSync(`/proc/${simPid}/environ`, "utf8").split("\0");
    expect(environ).toContain(`ANTIGRAVITY_CSRF_TOKEN=${TOKEN}`);
    expect(environ).toContain(`ANTIGRAVITY_LS_ADDRESS=localhost:${plainPort}`);
    expect(environ).toContain("ANTIGRAVITY_LS_VERSION=cli-sim");

    // C-c on an empty draft quits the TUI; launcher and CLI exit with it.
    await tmux.sendKeys("agy", "C-c");
    await expect.poll(() => cmdline(agyPid as number).length).toBe(0);
  });

  it("prints one JSON line headless with the launcher's pid, never the token, and stops on SIGTERM", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", BIN, "sim", "--as-agy", "--headless", "--csrf-token", TOKEN], {
      cwd: ROOT,
      env: { ...process.env, AGY_BRIDGE_CACHE_DIR: cacheDir },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const line = await new Promise<string>((resolvePromise, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString("utf8");
        if (stdout.includes("\n")) resolvePromise(stdout.split("\n")[0] as string);
      });
      child.once("exit", (code) => reject(new Error(`exited ${code}: ${stderr}`)));
    });
    const info = JSON.parse(line) as { conversationId: string; tlsUrl: string; plainUrl: string; pid: number; agyPid: number };
    expect(Object.keys(info).sort()).toEqual(["agyPid", "conversationId", "pid", "plainUrl", "tlsUrl"]);
    expect(cmdline(info.agyPid)[0]).toMatch(/\/bin\/agy$/);
    const plainPort = Number(new URL(info.plainUrl).port);
    expect(ownedLoopbackListeners(info.agyPid)).toContain(plainPort);
    expect(await plainHeartbeat(plainPort, TOKEN)).toBe(200);

    child.kill("SIGTERM");
    const code = await new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
    expect(code).toBe(0);
    expect(stdout + stderr).not.toContain(TOKEN);
    await expect.poll(() => cmdline(info.agyPid).length).toBe(0);
  });
});
