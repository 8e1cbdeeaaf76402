/**
 * A whole world for `agy-bridge mcp`: the simulator running as agy with its
 * TUI in a private tmux server, and `agy-bridge mcp` as a real subprocess
 * (stdio, or streamable HTTP with its own token file) driven by the MCP
 * SDK's own client. Built fresh for each test, torn down after.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { firstLine } from "../../support/first-line.js";
import { createPrivateTmux, type PrivateTmux } from "../../support/tmux-server.js";

export const ROOT = resolve(import.meta.dirname, "../../..");
export const BIN = resolve(ROOT, "src/cli/bin.ts");

export interface McpWorld {
  tmux: PrivateTmux;
  dir: string;
  auditFile: string;
  /** Our simulator's pane (`%N`) on the private tmux server. */
  pane: string;
  client: Client;
  /** Set with `http`: where it listens and the token. */
  http?: { url: string; token: string };
  stderr(): string;
  call(
    name: string,
    args?: Record<string, unknown>,
    options?: { onprogress?: (p: { progress: number; total?: number | undefined; message?: string | undefined }) => void },
  ): Promise<CallToolResult>;
  close(): Promise<void>;
}

export interface McpWorldOptions {
  transport: "stdio" | "http";
  /** More arguments for `agy-bridge mcp` (e.g. `--policy FILE`). */
  args?: (dir: string) => string[];
  clientName?: string;
  /** Start the simulator as agy (default true); false: `mcp` alone, for what needs no session. */
  withAgy?: boolean;
}

/** The structured result of a tool call that must have succeeded; fails with the tool's error text otherwise. */
export function structured<T = Record<string, unknown>>(result: CallToolResult): T {
  if (result.isError === true) throw new Error(`the tool failed: ${textOf(result)}`);
  return result.structuredContent as T;
}

export function textOf(result: CallToolResult): string {
  return result.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("\n");
}

async function startHttp(argv: string[], env: NodeJS.ProcessEnv, err: { text: string }): Promise<{ child: ChildProcess; url: string; token: string }> {
  const child = spawn(process.execPath, argv, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (chunk: string) => (err.text += chunk));
  try {
    const line = await firstLine(child.stdout!, "agy-bridge mcp --http", 30_000, () => `stderr: ${err.text}`);
    const { url, tokenFile } = JSON.parse(line) as { url: string; tokenFile: string };
    return { child, url, token: (await readFile(tokenFile, "utf8")).trim() };
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
}

async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

export async function startMcpWorld(options: McpWorldOptions): Promise<McpWorld> {
  const tmux = createPrivateTmux();
  const dir = await mkdtemp(join(tmpdir(), "agyb-mcp-"));
  const auditFile = join(dir, "audit.jsonl");
  const err = { text: "" };
  let child: ChildProcess | undefined;
  let client: Client | undefined;
  try {
    let pane = "";
    if (options.withAgy !== false) {
      await tmux.newSession("agy", [process.execPath, "--import", "tsx", BIN, "sim", "--as-agy"], { columns: 120, rows: 40, cwd: ROOT });
      await tmux.waitForScreen("agy", (s) => /\? for shortcuts|esc to interrupt/i.test(s) || s.includes("─────"), "the simulator's TUI", 30_000);
      pane = (await tmux.run(["display-message", "-p", "-t", "agy", "#{pane_id}"])).trim();
    }
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "TMUX" && k !== "AGY_BRIDGE_TOKEN") env[k] = v;
    env["XDG_CONFIG_HOME"] = dir;
    env["XDG_STATE_HOME"] = dir;
    const common = [...(pane === "" ? [] : ["--pane", pane, "-L", tmux.socketName]), "--audit-file", auditFile, ...(options.args?.(dir) ?? [])];
    client = new Client({ name: options.clientName ?? "world-test", version: "1.0.0" });
    let http: McpWorld["http"];
    if (options.transport === "stdio") {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: ["--import", "tsx", BIN, "mcp", ...common],
        env,
        cwd: ROOT,
        stderr: "pipe",
      });
      transport.stderr?.on("data", (chunk: Buffer) => (err.text += chunk.toString("utf8")));
      await client.connect(transport);
    } else {
      const started = await startHttp(["--import", "tsx", BIN, "mcp", "--http", "--listen", "127.0.0.1:0", "--json", ...common], env, err);
      child = started.child;
      http = { url: started.url, token: started.token };
      await client.connect(new StreamableHTTPClientTransport(new URL(started.url), { requestInit: { headers: { authorization: `Bearer ${started.token}` } } }));
    }
    const c = client;
    const world: McpWorld = {
      tmux,
      dir,
      auditFile,
      pane,
      client: c,
      ...(http === undefined ? {} : { http }),
      stderr: () => err.text,
      call: (name, args = {}, callOptions = {}) =>
        c.callTool({ name, arguments: args }, undefined, {
          timeout: 120_000,
          ...(callOptions.onprogress === undefined ? {} : { onprogress: callOptions.onprogress }),
        }) as Promise<CallToolResult>,
      async close() {
        await c.close().catch(() => undefined);
        await stopChild(child);
        await tmux.kill();
        await rm(dir, { recursive: true, force: true });
      },
    };
    return world;
  } catch (error) {
    await client?.close().catch(() => undefined);
    await stopChild(child);
    await tmux.kill();
    await rm(dir, { recursive: true, force: true });
    throw new Error(`${(error as Error).message}; mcp stderr: ${err.text}`);
  }
}
