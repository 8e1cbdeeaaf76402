/**
 * A whole world for `agy-bridge serve`: the simulator running as agy with its
 * TUI in a private tmux server, and `agy-bridge serve` as a subprocess that
 * finds it through discovery. Built fresh for each test, torn down after.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { firstLine } from "../../support/first-line.js";
import { createPrivateTmux, type PrivateTmux } from "../../support/tmux-server.js";

const ROOT = resolve(import.meta.dirname, "../../..");
const BIN = resolve(ROOT, "src/cli/bin.ts");

export interface ServeWorld {
  tmux: PrivateTmux;
  url: string;
  token: string;
  conversationId: string;
  /** Everything `serve` wrote to stderr so far. */
  stderr(): string;
  api(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last === undefined ? "" : ` (last error: ${(last as Error).message})`}`);
}

async function parentOf(pid: number): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ppid = Number(fields[1]);
  return Number.isInteger(ppid) && ppid > 0 ? ppid : undefined;
}

async function descendsFrom(pid: number, ancestor: number): Promise<boolean> {
  let current: number | undefined = pid;
  for (let hops = 0; current !== undefined && hops < 32; hops++) {
    if (current === ancestor) return true;
    current = await parentOf(current);
  }
  return false;
}

export async function startServeWorld(): Promise<ServeWorld> {
  const tmux = createPrivateTmux();
  const dir = await mkdtemp(join(tmpdir(), "agyb-serve-"));
  let serve: ChildProcess | undefined;
  let stderr = "";
  try {
    await tmux.newSession("agy", [process.execPath, "--import", "tsx", BIN, "sim", "--as-agy"], { columns: 120, rows: 40, cwd: ROOT });
    const panePid = Number((await tmux.run(["display-message", "-p", "-t", "agy", "#{pane_pid}"])).trim());
    await tmux.waitForScreen("agy", (s) => /\? for shortcuts|esc to interrupt/i.test(s) || s.includes("─────"), "the simulator's TUI", 30_000);
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: dir };
    delete env["AGY_BRIDGE_TOKEN"];
    delete env["TMUX"];
    serve = spawn(
      process.execPath,
      ["--import", "tsx", BIN, "serve", "--listen", "127.0.0.1:0", "--json", "-L", tmux.socketName, "--refresh-ms", "300"],
      { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] },
    );
    serve.stderr?.setEncoding("utf8");
    serve.stderr?.on("data", (chunk: string) => (stderr += chunk));
    const child = serve;
    const exited = new Promise<never>((_, reject) => child.once("exit", (code) => reject(new Error(`serve exited with ${code}; stderr: ${stderr}`))));
    exited.catch(() => undefined); // it also ends when the test closes the world
    const first = await Promise.race([firstLine(child.stdout!, "agy-bridge serve", 30_000, () => `stderr: ${stderr}`), exited]);
    const { url, tokenFile } = JSON.parse(first) as { url: string; tokenFile: string };
    const token = (await readFile(tokenFile, "utf8")).trim();
    const api = (path: string, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      headers.set("authorization", `Bearer ${token}`);
      if (init.body !== undefined) headers.set("content-type", "application/json");
      return fetch(`${url}${path}`, { ...init, headers });
    };
    // Other tests' simulators may be running too: ours is the one inside our pane.
    const conversationId = await until(
      async () => {
        const { sessions } = (await (await api("/v1/sessions")).json()) as { sessions: { conversationId: string; pid?: number }[] };
        for (const s of sessions) if (s.pid !== undefined && (await descendsFrom(s.pid, panePid))) return s.conversationId;
        return undefined;
      },
      "serve to list the simulator in our pane",
      30_000,
    );
    return {
      tmux,
      url,
      token,
      conversationId,
      stderr: () => stderr,
      api,
      async close() {
        serve?.kill("SIGTERM");
        await tmux.kill();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    serve?.kill("SIGKILL");
    await tmux.kill();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

export { until };
