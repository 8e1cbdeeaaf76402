/**
 * A whole world for `agy-bridge serve`: the simulator running as agy with its
 * TUI in a private tmux server, and `agy-bridge serve` as a subprocess that
 * finds it through discovery. Built fresh for each test, torn down after.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPrivateTmux, type PrivateTmux } from "../../support/tmux-server.js";
import { until } from "../../support/until.js";
import { BIN, ROOT, startServeProcess, type ServeProcess } from "./serve-process.js";

export interface ServeWorld {
  tmux: PrivateTmux;
  url: string;
  token: string;
  conversationId: string;
  /** serve's XDG_CONFIG_HOME and XDG_STATE_HOME: the token file and `agy-bridge/audit.jsonl`. */
  stateDir: string;
  /** Everything the current `serve` wrote to stderr so far. */
  stderr(): string;
  api(path: string, init?: RequestInit): Promise<Response>;
  /** Stops `serve` and starts it again (same token, a new run): `url` changes. */
  restartServe(args?: string[]): Promise<void>;
  close(): Promise<void>;
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

export async function startServeWorld(options: { serveArgs?: (tmux: PrivateTmux) => string[] } = {}): Promise<ServeWorld> {
  const tmux = createPrivateTmux();
  const dir = await mkdtemp(join(tmpdir(), "agyb-serve-"));
  let serve: ServeProcess | undefined;
  try {
    await tmux.newSession("agy", [process.execPath, "--import", "tsx", BIN, "sim", "--as-agy"], { columns: 120, rows: 40, cwd: ROOT });
    const panePid = Number((await tmux.run(["display-message", "-p", "-t", "agy", "#{pane_pid}"])).trim());
    await tmux.waitForScreen("agy", (s) => /\? for shortcuts|esc to interrupt/i.test(s) || s.includes("─────"), "the simulator's TUI", 30_000);
    const args = options.serveArgs?.(tmux) ?? ["-L", tmux.socketName, "--refresh-ms", "300"];
    serve = await startServeProcess({ configHome: dir, args });
    const api = (path: string, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      headers.set("authorization", `Bearer ${serve!.token}`);
      if (init.body !== undefined) headers.set("content-type", "application/json");
      return fetch(`${serve!.url}${path}`, { ...init, headers });
    };
    // Other tests' simulators may be running too: ours is the one inside our pane.
    const ours = () =>
      until(
        async () => {
          const { sessions } = (await (await api("/v1/sessions")).json()) as { sessions: { conversationId: string; pid?: number }[] };
          for (const s of sessions) if (s.pid !== undefined && (await descendsFrom(s.pid, panePid))) return s.conversationId;
          return undefined;
        },
        "serve to list the simulator in our pane",
        { ms: 30_000, everyMs: 100, seen: () => `serve's stderr: ${serve?.stderr().slice(-2000) ?? "(no serve)"}` },
      );
    const conversationId = await ours();
    const world: ServeWorld = {
      tmux,
      url: serve.url,
      token: serve.token,
      conversationId,
      stateDir: dir,
      stderr: () => serve?.stderr() ?? "",
      api,
      async restartServe(nextArgs) {
        await serve?.stop();
        serve = await startServeProcess({ configHome: dir, args: nextArgs ?? args });
        world.url = serve.url;
        world.token = serve.token;
        if ((await ours()) !== conversationId) throw new Error("after the restart serve lists another conversation in our pane");
      },
      async close() {
        await serve?.stop();
        await tmux.kill();
        await rm(dir, { recursive: true, force: true });
      },
    };
    return world;
  } catch (error) {
    await serve?.stop();
    await tmux.kill();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
