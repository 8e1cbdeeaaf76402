/**
 * `agy-bridge mcp` over stdio as a host's raw pipes meet it: a real child
 * process, bytes written to its stdin and its stdout read line by line.
 * Every request read is answered even when stdin closes right after it,
 * every bad line gets a JSON-RPC error (and reading goes on), and stdout
 * carries nothing but JSON-RPC.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { until } from "../support/until.js";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = resolve(ROOT, "src/cli/bin.ts");

interface Child {
  child: ChildProcessWithoutNullStreams;
  /** Every stdout line so far, parsed (a line that is not JSON fails the test). */
  lines: Array<Record<string, unknown>>;
  raw(): string;
  stderr(): string;
  exit: Promise<number | null>;
}

let dir: string | undefined;
let running: Child | undefined;
afterEach(async () => {
  if (running !== undefined && running.child.exitCode === null) running.child.kill("SIGKILL");
  running = undefined;
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

async function startMcp(): Promise<Child> {
  dir = await mkdtemp(join(tmpdir(), "agyb-mcp-pipes-"));
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "TMUX" && k !== "AGY_BRIDGE_TOKEN") env[k] = v;
  env["XDG_CONFIG_HOME"] = dir;
  env["XDG_STATE_HOME"] = dir;
  // -L names a tmux server of its own that does not exist: no agy is in its scope, so no other test's agy is offered here.
  const child = spawn(
    process.execPath,
    ["--import", "tsx", BIN, "mcp", "-L", `agyb-pipes-${randomBytes(4).toString("hex")}`, "--audit-file", join(dir, "audit.jsonl")],
    { cwd: ROOT, env, stdio: ["pipe", "pipe", "pipe"] },
  );
  let out = "";
  let err = "";
  const lines: Array<Record<string, unknown>> = [];
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    out += chunk;
    let at: number;
    while ((at = out.indexOf("\n")) >= 0) {
      const text = out.slice(0, at);
      try {
        lines.push(JSON.parse(text) as Record<string, unknown>);
      } catch {
        lines.push({ notJson: text });
      }
      out = out.slice(at + 1);
    }
  });
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => (err += chunk));
  const exit = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  running = { child, lines, raw: () => out, stderr: () => err, exit };
  return running;
}

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "pipes", version: "1" } },
};
const INITIALIZED = { jsonrpc: "2.0", method: "notifications/initialized" };
const line = (message: unknown): string => `${JSON.stringify(message)}\n`;

async function exited(c: Child): Promise<number | null> {
  const timer = setTimeout(() => c.child.kill("SIGKILL"), 60_000);
  const code = await c.exit;
  clearTimeout(timer);
  return code;
}

describe("agy-bridge mcp over raw stdio pipes", { timeout: 120_000 }, () => {
  it("answers initialize and a tools/call written together with stdin closed right after, then exits 0", async () => {
    const c = await startMcp();
    c.child.stdin.end(
      line(INITIALIZE) + line(INITIALIZED) + line({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "list_sessions", arguments: {} } }),
    );
    const code = await exited(c);
    // Notifications (a session list that changed) may come between.
    const replies = c.lines.filter((l) => "id" in l);
    expect(
      replies.map((l) => l["id"]),
      c.stderr(),
    ).toEqual([1, 2]);
    expect(
      c.lines.every((l) => l["jsonrpc"] === "2.0"),
      JSON.stringify(c.lines),
    ).toBe(true);
    expect(replies[1]).toMatchObject({ jsonrpc: "2.0", id: 2, result: { structuredContent: { sessions: expect.any(Array) } } });
    expect(c.raw()).toBe("");
    expect(code, c.stderr()).toBe(0);
  });

  it("answers a line that is not JSON with a parse error (id null), JSON that is not JSON-RPC with an invalid request, and goes on", async () => {
    const c = await startMcp();
    c.child.stdin.write(line(INITIALIZE));
    await until(() => c.lines.length >= 1, "the reply to initialize", { ms: 30_000, seen: () => c.stderr() });
    c.child.stdin.write("this is not json\n");
    c.child.stdin.write("\n");
    c.child.stdin.write(line({ hello: "world" }));
    c.child.stdin.write(line({ jsonrpc: "2.0", id: 7, methd: "ping" }));
    c.child.stdin.end(line({ jsonrpc: "2.0", id: 8, method: "ping" }));
    const code = await exited(c);
    expect(
      c.lines.filter((l) => "id" in l),
      c.stderr(),
    ).toEqual([
      expect.objectContaining({ id: 1, result: expect.objectContaining({ serverInfo: expect.objectContaining({ name: "agy-bridge" }) }) }),
      { jsonrpc: "2.0", id: null, error: { code: -32700, message: expect.stringMatching(/^Parse error: the line is not JSON/) } },
      { jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.stringMatching(/^Invalid Request/) } },
      { jsonrpc: "2.0", id: 7, error: { code: -32600, message: expect.stringMatching(/^Invalid Request/) } },
      { jsonrpc: "2.0", id: 8, result: {} },
    ]);
    expect(code).toBe(0);
  });

  it("refuses a 16 MiB line with an error saying why, without holding it, and answers the next request", async () => {
    const c = await startMcp();
    c.child.stdin.write(line(INITIALIZE));
    await until(() => c.lines.length >= 1, "the reply to initialize", { ms: 30_000, seen: () => c.stderr() });
    // 16 MiB of one JSON string, written in 1 MiB pieces as a pipe delivers them.
    const piece = "x".repeat(1024 * 1024);
    c.child.stdin.write('{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":"');
    for (let i = 0; i < 16; i++) {
      if (!c.child.stdin.write(piece)) await new Promise((r) => c.child.stdin.once("drain", r));
    }
    c.child.stdin.write('"}}\n');
    c.child.stdin.end(line({ jsonrpc: "2.0", id: 4, method: "ping" }));
    const code = await exited(c);
    expect(c.lines.filter((l) => "id" in l).slice(1), c.stderr()).toEqual([
      { jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.stringMatching(/a line is longer than 4194304 bytes, so it was skipped/) } },
      { jsonrpc: "2.0", id: 4, result: {} },
    ]);
    expect(c.stderr()).toMatch(/agy-bridge mcp: refused a line on stdin: .*longer than 4194304 bytes/);
    expect(code).toBe(0);
  });
});
