/**
 * `-L` means the same for every command that offers many sessions: the
 * simulator runs as agy in a pane of a private tmux server, a second one runs
 * outside any tmux, and `serve -L`, `mcp -L`, `acp -L` and `relay -L` (real processes,
 * through the CLI's own wiring) each offer only the one inside, saying once
 * which agy they left out; without -L they offer both.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startSimAsAgy, tempCache, type AgyProcess } from "../discovery/support/agy-process.js";
import { SESSIONS_STREAM } from "../../src/fleet/index.js";
import { startRedis } from "../fleet/support/redis-process.js";
import { startRelayProcess } from "../fleet/support/relay-process.js";
import { asEntries } from "../fleet/support/relay-world.js";
import { BIN, ROOT, startServeProcess, type ServeProcess } from "../server/support/serve-process.js";
import { createPrivateTmux, type PrivateTmux } from "../support/tmux-server.js";
import { until } from "../support/until.js";

const SERVICE = "exa.language_server_pb.LanguageServerService";
const URL_ON_SCREEN = /http:\/\/127\.0\.0\.1:\d+/;

interface ScopeWorld {
  tmux: PrivateTmux;
  dir: string;
  /** The conversation of the simulator in our tmux pane. */
  inside: string;
  outside: AgyProcess;
  close(): Promise<void>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function onlyConversation(url: string, token: string): Promise<string> {
  const res = await fetch(`${url}/${SERVICE}/GetAllCascadeTrajectories`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-codeium-csrf-token": token },
    body: "{}",
  });
  const all = (await res.json()) as { trajectorySummaries?: Record<string, unknown> };
  const [id] = Object.keys(all.trajectorySummaries ?? {});
  if (id === undefined) throw new Error("the simulator in the pane hosts no conversation");
  return id;
}

/** One simulator as agy in a pane of a private tmux server, one outside any tmux. */
async function startScopeWorld(): Promise<ScopeWorld> {
  const tmux = createPrivateTmux();
  const cache = tempCache();
  const dir = await mkdtemp(join(tmpdir(), "agyb-scope-"));
  const token = `tok-scope-${tmux.socketName}`;
  let outside: AgyProcess | undefined;
  const close = async () => {
    await outside?.stop();
    await tmux.kill();
    cache.remove();
    await rm(dir, { recursive: true, force: true });
  };
  cleanups.push(close);
  await tmux.newSession("agy", [process.execPath, "--import", "tsx", BIN, "sim", "--as-agy", "--csrf_token", token, "--speed", "0"], {
    columns: 120,
    rows: 40,
    cwd: ROOT,
    env: { AGY_BRIDGE_CACHE_DIR: cache.dir },
  });
  const screen = await tmux.waitForScreen("agy", (s) => s.includes("? for shortcuts") && URL_ON_SCREEN.test(s), "the simulator's TUI with its URL", 30_000);
  const inside = await onlyConversation((URL_ON_SCREEN.exec(screen) as RegExpExecArray)[0], token);
  outside = await startSimAsAgy(cache.dir);
  return { tmux, dir, inside, outside, close };
}

function cliEnv(dir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: dir, XDG_STATE_HOME: dir };
  delete env["TMUX"];
  delete env["AGY_BRIDGE_TOKEN"];
  return env;
}

/** The agy pids a left-out line names. */
function leftOutPids(stderr: string): number[] {
  return [...stderr.matchAll(/left out agy \(pid (\d+)\): it runs in no pane of the tmux server -L /g)].map((m) => Number(m[1]));
}

/** What a scoped command offered, and what a run without -L offered. */
interface Offers {
  scoped: string[];
  unscoped: string[];
  scopedStderr: string;
}

function expectScoped(world: ScopeWorld, offers: Offers): void {
  expect(offers.scoped, offers.scopedStderr).toEqual([world.inside]);
  expect(offers.unscoped).toEqual(expect.arrayContaining([world.inside, world.outside.info.conversationId]));
  // Discovery may see the launcher or the simulator under it; either way the line names the agy outside, once.
  const named = leftOutPids(offers.scopedStderr).filter((pid) => pid === world.outside.info.agyPid || pid === world.outside.info.pid);
  expect(named, offers.scopedStderr).toHaveLength(1);
}

async function serveOffers(world: ScopeWorld, args: string[], want: (ids: string[]) => boolean): Promise<Offered> {
  const serve: ServeProcess = await startServeProcess({ configHome: world.dir, args: [...args, "--refresh-ms", "200"] });
  cleanups.push(() => serve.stop());
  const list = async () => {
    const res = await fetch(`${serve.url}/v1/sessions`, { headers: { authorization: `Bearer ${serve.token}` } });
    return ((await res.json()) as { sessions: Array<{ conversationId: string }> }).sessions.map((s) => s.conversationId);
  };
  const ids = await until(async () => ((ids) => (want(ids) ? ids : undefined))(await list()), "serve to list the simulators", {
    ms: 30_000,
    everyMs: 100,
    seen: () => `serve's stderr: ${serve.stderr().slice(-2000)}`,
  });
  // It keeps refreshing (every 200 ms) while the test goes on: a left-out agy must still be said once.
  return { ids, stderr: () => serve.stderr() };
}

/** A JSON-RPC peer over a child's stdin/stdout lines (MCP and ACP stdio both are). */
interface LinePeer {
  request(method: string, params: unknown): Promise<Record<string, unknown>>;
  notify(method: string, params?: unknown): void;
  stderr(): string;
}

function startLinePeer(argv: string[], dir: string): LinePeer {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", BIN, ...argv], { cwd: ROOT, env: cliEnv(dir), stdio: ["pipe", "pipe", "pipe"] });
  cleanups.push(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((done) => child.once("exit", done));
    child.stdin?.end();
    child.kill("SIGTERM");
    await exited;
  });
  let out = "";
  let err = "";
  let nextId = 1;
  const replies = new Map<number, Record<string, unknown>>();
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
    let at: number;
    while ((at = out.indexOf("\n")) >= 0) {
      const message = JSON.parse(out.slice(0, at)) as Record<string, unknown>;
      out = out.slice(at + 1);
      if (typeof message["id"] === "number" && !("method" in message)) replies.set(message["id"], message);
    }
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const write = (message: object) => child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
  return {
    async request(method, params) {
      const id = nextId++;
      write({ id, method, params });
      const reply = await until(() => replies.get(id), `the reply to ${method}`, { ms: 60_000, everyMs: 50, seen: () => `stderr: ${err.slice(-2000)}` });
      if ("error" in reply) throw new Error(`${method} failed: ${JSON.stringify(reply["error"])}; stderr: ${err.slice(-2000)}`);
      return reply["result"] as Record<string, unknown>;
    },
    notify: (method, params) => write({ method, ...(params === undefined ? {} : { params }) }),
    stderr: () => err,
  };
}

async function mcpOffers(world: ScopeWorld, args: string[], want: (ids: string[]) => boolean): Promise<Offered> {
  const peer = startLinePeer(["mcp", ...args, "--audit-file", join(world.dir, "audit.jsonl")], world.dir);
  await peer.request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "scope", version: "1" } });
  peer.notify("notifications/initialized");
  const list = async () => {
    const result = await peer.request("tools/call", { name: "list_sessions", arguments: {} });
    return (result["structuredContent"] as { sessions: Array<{ conversationId: string }> }).sessions.map((s) => s.conversationId);
  };
  const ids = await until(async () => ((ids) => (want(ids) ? ids : undefined))(await list()), "mcp to list the simulators", {
    ms: 30_000,
    everyMs: 200,
    seen: () => `mcp's stderr: ${peer.stderr().slice(-2000)}`,
  });
  // Each list is a discovery pass of its own: a left-out agy must still be said once.
  await list();
  return { ids, stderr: () => peer.stderr() };
}

async function acpOffers(world: ScopeWorld, args: string[], want: (ids: string[]) => boolean): Promise<Offered> {
  const peer = startLinePeer(["acp", ...args, "--audit-file", join(world.dir, "audit.jsonl")], world.dir);
  await peer.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  const list = async () => ((await peer.request("session/list", {}))["sessions"] as Array<{ sessionId: string }>).map((s) => s.sessionId);
  const ids = await until(async () => ((ids) => (want(ids) ? ids : undefined))(await list()), "acp to list the simulators", {
    ms: 30_000,
    everyMs: 200,
    seen: () => `acp's stderr: ${peer.stderr().slice(-2000)}`,
  });
  await list();
  return { ids, stderr: () => peer.stderr() };
}

async function relayOffers(world: ScopeWorld, args: string[], want: (ids: string[]) => boolean): Promise<Offered> {
  // A Redis of its own per run: its session index holds only what this relay followed.
  const redis = await startRedis();
  cleanups.push(() => redis.stop());
  const relay = await startRelayProcess(["--redis", redis.url, "--host", "scope-host", "--refresh-ms", "200", ...args], world.dir);
  cleanups.push(() => relay.kill());
  const bot = redis.client();
  cleanups.push(async () => bot.disconnect());
  const list = async () => {
    const entries = asEntries((await bot.xrange(SESSIONS_STREAM, "-", "+")) as [string, string[]][]);
    return [...new Set(entries.filter((e) => e.fields["type"] === "session.attached").map((e) => e.fields["conversationId"] ?? ""))];
  };
  const ids = await until(async () => ((ids) => (want(ids) ? ids : undefined))(await list()), "relay to publish the simulators", {
    ms: 30_000,
    everyMs: 100,
    seen: () => `relay's stderr: ${relay.stderr().slice(-2000)}`,
  });
  // It keeps refreshing (every 200 ms) while the test goes on: a left-out agy must still be said once, and never published.
  return { ids, stderr: () => relay.stderr(), later: list };
}

type Offered = { ids: string[]; stderr: () => string; later?: () => Promise<string[]> };
type Offer = (world: ScopeWorld, args: string[], want: (ids: string[]) => boolean) => Promise<Offered>;

async function offersOf(world: ScopeWorld, offer: Offer): Promise<Offers> {
  const scoped = await offer(world, ["-L", world.tmux.socketName], (ids) => ids.includes(world.inside));
  const unscoped = await offer(world, [], (ids) => ids.includes(world.inside) && ids.includes(world.outside.info.conversationId));
  return { scoped: (await scoped.later?.()) ?? scoped.ids, unscoped: unscoped.ids, scopedStderr: scoped.stderr() };
}

describe("-L on the commands that offer many sessions", { timeout: 180_000 }, () => {
  it("serve -L lists only the agy in a pane of that tmux server, and says once which agy it left out", async () => {
    const world = await startScopeWorld();
    expectScoped(world, await offersOf(world, serveOffers));
  });

  it("mcp -L lists only the agy in a pane of that tmux server, and says once which agy it left out", async () => {
    const world = await startScopeWorld();
    expectScoped(world, await offersOf(world, mcpOffers));
  });

  it("relay -L publishes only the agy in a pane of that tmux server, and says once which agy it left out", async () => {
    const world = await startScopeWorld();
    expectScoped(world, await offersOf(world, relayOffers));
  });

  it("acp -L offers only the agy in a pane of that tmux server, and says once which agy it left out", async () => {
    const world = await startScopeWorld();
    expectScoped(world, await offersOf(world, acpOffers));
  });
});
