/**
 * `mcp --http` under what any local process can do without the token, and
 * what abandoned clients leave behind: silent sockets are cut by the header
 * deadline, a flood of idle sockets is shed by serve's connection guard (the
 * real process, with 1,024 descriptors), and MCP sessions expire when idle
 * and make room at the cap instead of locking later clients out.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { connect, type AddressInfo, type Socket } from "node:net";
import { spawn, type ChildProcess } from "node:child_process";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  createAgyMcpServer,
  createMcpHttpServer,
  createSessionPool,
  type McpHttpOptions,
  type McpHttpServer,
  type McpSessionSource,
} from "../../src/mcp/index.js";
import { AgySession } from "../../src/session/index.js";
import { startSimServer, type SimServer } from "../../src/sim/index.js";
import { firstLine } from "../support/first-line.js";
import { until } from "../support/until.js";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = resolve(ROOT, "src/cli/bin.ts");
const TOKEN = "mcp-limits-token-0123456789abcdef";

let http: McpHttpServer | undefined;
let sim: SimServer | undefined;
let client: Client | undefined;
let child: ChildProcess | undefined;
let dir: string | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await client?.close().catch(() => undefined);
  client = undefined;
  await http?.close();
  http = undefined;
  await sim?.close();
  sim = undefined;
  if (child !== undefined && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((r) => child!.once("exit", r));
    child.kill("SIGKILL");
    await exited;
  }
  child = undefined;
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

/** An MCP-over-HTTP server in this process, over an empty pool unless given a source (no agy needed for most of what is tested here). */
async function startHttp(
  extra: Partial<McpHttpOptions> = {},
  source?: McpSessionSource,
  progressIntervalMs?: number,
): Promise<{ url: string; server: McpHttpServer }> {
  const pool = createSessionPool({ source: source ?? { list: async () => [], attach: async () => Promise.reject(new Error("no agy in this test")) } });
  const server = createMcpHttpServer({
    createServer: () => createAgyMcpServer({ pool, version: "test", ...(progressIntervalMs === undefined ? {} : { progressIntervalMs }) }),
    authorize: (authorization) => authorization === `Bearer ${TOKEN}`,
    checkOrigin: () => undefined,
    ...extra,
  });
  const close = server.close.bind(server);
  http = {
    ...server,
    server: server.server,
    get sessions() {
      return server.sessions;
    },
    close: async () => {
      await close();
      await pool.close();
    },
  };
  await new Promise<void>((done) => server.server.listen(0, "127.0.0.1", done));
  return { url: `http://127.0.0.1:${(server.server.address() as AddressInfo).port}/mcp`, server };
}

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "limits", version: "1" } },
};

/** One JSON-RPC POST; the status, the session id it got and the body. */
async function post(url: string, body: unknown, sessionId?: string, token = TOKEN): Promise<{ status: number; sessionId: string | null; text: string }> {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(sessionId === undefined ? {} : { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" }),
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  return { status: res.status, sessionId: res.headers.get("mcp-session-id"), text: await res.text() };
}

/** An initialized session that is then abandoned: its id. */
async function abandoned(url: string): Promise<string> {
  const init = await post(url, INITIALIZE);
  expect(init.status, init.text).toBe(200);
  return init.sessionId!;
}

const ping = (id: number) => ({ jsonrpc: "2.0", id, method: "ping" });

async function idleSockets(port: number, count: number, bytes = ""): Promise<Socket[]> {
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Socket>((done) => {
          const socket = connect(port, "127.0.0.1");
          sockets.push(socket);
          socket.on("error", () => undefined);
          socket.resume();
          socket.once("connect", () => {
            if (bytes !== "") socket.write(bytes);
            done(socket);
          });
          socket.once("close", () => done(socket));
        }),
    ),
  );
}

function closed(socket: Socket, what: string): Promise<void> {
  return until(() => socket.destroyed || socket.readyState === "closed" || undefined, what, { ms: 10_000 }).then(() => undefined);
}

describe("mcp --http limits", { timeout: 120_000 }, () => {
  it("cuts a silent socket and one stuck mid-header once the header deadline passes", async () => {
    const { server } = await startHttp({ timeouts: { headersMs: 300, requestMs: 600, checkIntervalMs: 50 } });
    const port = (server.server.address() as AddressInfo).port;
    const [silent] = await idleSockets(port, 1);
    const [halfHeader] = await idleSockets(port, 1, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    await closed(silent!, "a socket that sent nothing to be closed");
    await closed(halfHeader!, "a socket that sent half a header to be closed");
  });

  it("keeps a tool call's response stream open long past the request deadline (it covers receiving the request only)", async () => {
    sim = await startSimServer({ speed: 0.05 });
    const { plainUrl } = sim;
    const conversationId = sim.engine.activeConversationId;
    const source: McpSessionSource = {
      list: async () => [{ conversationId }],
      attach: (_descriptor, signal) => AgySession.attach({ url: plainUrl, conversationId, signal }),
    };
    const { url } = await startHttp({ timeouts: { headersMs: 200, requestMs: 300, keepAliveMs: 200, checkIntervalMs: 50 } }, source, 50);
    client = new Client({ name: "long-wait", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
    const progress: number[] = [];
    const c = client;
    const waiting = c.callTool({ name: "wait_for", arguments: { until: "event", eventType: "message", timeoutMs: 600_000 } }, undefined, {
      timeout: 120_000,
      onprogress: (p) => progress.push(p.progress),
    });
    // Twenty progress notifications on the call's own stream: over three times the request deadline has passed.
    await until(() => progress.length >= 20 || undefined, "twenty progress notifications of the waiting call", {
      ms: 30_000,
      seen: () => `${progress.length}`,
    });
    sim.engine.tuiPort().submitTurn("Say hello in one short sentence.");
    const result = (await waiting) as { structuredContent?: { outcome?: string } };
    expect(result.structuredContent?.outcome).toBe("event");
  });

  it("uses serve's deadlines by default (seconds, not Node's 60 s checked every 30 s)", async () => {
    const { server } = await startHttp();
    expect(server.server.headersTimeout).toBe(10_000);
    expect(server.server.requestTimeout).toBe(30_000);
    expect(server.server.keepAliveTimeout).toBe(5_000);
  });

  it("makes room at the cap by closing the session used longest ago, so abandoned sessions never lock a client out", async () => {
    const closedWhy: string[] = [];
    const { url, server } = await startHttp({ maxSessions: 4, onSessionClosed: (why) => closedWhy.push(why) });
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(await abandoned(url));
    expect(server.sessions).toBe(4);
    expect(closedWhy).toEqual(Array(6).fill("pushed_out"));
    // The newest four still answer; the oldest were closed and say so.
    for (const id of ids.slice(-4)) expect((await post(url, ping(2), id)).status).toBe(200);
    const gone = await post(url, ping(3), ids[0]);
    expect(gone.status).toBe(404);
    expect(gone.text).toMatch(/no such MCP session .*initialize a new one/);
    // Use keeps a session: after pinging the oldest of the four, the next initialize pushes out another.
    await post(url, ping(4), ids[6]);
    await abandoned(url);
    expect((await post(url, ping(5), ids[6])).status).toBe(200);
    expect((await post(url, ping(6), ids[7])).status).toBe(404);
  });

  it("closes an MCP session idle for longer than its expiry, and keeps one whose request is in progress", async () => {
    const closedWhy: string[] = [];
    const { url, server } = await startHttp({ sessionIdleMs: 2000, onSessionClosed: (why) => closedWhy.push(why) });
    const idle = await abandoned(url);
    const held = await abandoned(url);
    // An open GET stream of the second session is a request in progress.
    const stream = await fetch(url, {
      headers: { authorization: `Bearer ${TOKEN}`, accept: "text/event-stream", "mcp-session-id": held, "mcp-protocol-version": "2025-06-18" },
    });
    expect(stream.status).toBe(200);
    await until(() => (server.sessions === 1 ? true : undefined), "the idle session to expire", { ms: 10_000, seen: () => `${server.sessions} sessions` });
    expect(closedWhy).toEqual(["expired"]);
    expect((await post(url, ping(2), idle)).status).toBe(404);
    expect((await post(url, ping(3), held)).status).toBe(200);
    await stream.body?.cancel();
  });

  it("survives 2,000 idle tokenless sockets with 1,024 file descriptors and answers an authenticated initialize", async () => {
    // The test itself holds the 2,000 client ends: it needs that many descriptors of its own.
    const own = /^Max open files\s+(\d+|unlimited)/m.exec(await readFile("/proc/self/limits", "utf8"))?.[1] ?? "0";
    if (own !== "unlimited" && Number(own) < 2500)
      throw new Error(`this test needs 2,500 open files but the limit is ${own}; raise it (ulimit -n 4096) and run it again`);
    dir = await mkdtemp(join(tmpdir(), "agyb-mcp-flood-"));
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "TMUX") env[k] = v;
    Object.assign(env, { XDG_CONFIG_HOME: dir, XDG_STATE_HOME: dir, AGY_BRIDGE_TOKEN: TOKEN });
    // -L names a tmux server that does not exist: no agy is in scope, so none is attached while the sockets pile up.
    const argv = [process.execPath, "--import", "tsx", BIN, "mcp", "--http", "--listen", "127.0.0.1:0", "--json", "-L", `agyb-flood-${process.pid}`];
    const started = spawn("prlimit", ["--nofile=1024:1024", "--", ...argv], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    child = started;
    let stderr = "";
    started.stderr!.setEncoding("utf8");
    started.stderr!.on("data", (chunk: string) => (stderr += chunk));
    const { url } = JSON.parse(await firstLine(started.stdout!, "agy-bridge mcp --http", 30_000, () => `stderr: ${stderr}`)) as { url: string };
    await idleSockets(Number(new URL(url).port), 2000);
    const init = await post(url, INITIALIZE);
    expect(init.status, stderr).toBe(200);
    expect(init.text).toContain('"serverInfo"');
    expect(started.exitCode, stderr).toBeNull();
    expect(stderr).not.toMatch(/EMFILE|Error:/);
  });
});
