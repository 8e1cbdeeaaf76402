/**
 * A whole world for `agy-bridge acp`: the simulator running as agy with its
 * TUI in a private tmux server, and `agy-bridge acp` as a subprocess on a
 * real stdio pipe, driven by the ACP SDK's own client. Every message in
 * both directions is recorded, for checking against the ACP schema. Built
 * fresh for each test, torn down after.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Readable, Writable } from "node:stream";
import {
  client,
  ndJsonStream,
  type AnyMessage,
  type ClientConnection,
  type CreateElicitationRequest,
  type CreateElicitationResponse,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
  type Stream,
} from "@agentclientprotocol/sdk";
import { createPrivateTmux, type PrivateTmux } from "../../support/tmux-server.js";
import { until as pollUntil } from "../../support/until.js";

export const ROOT = resolve(import.meta.dirname, "../../..");
export const BIN = resolve(ROOT, "src/cli/bin.ts");

/** A message on the wire, and which side sent it. */
export interface WireMessage {
  from: "client" | "agent";
  message: AnyMessage;
}

export type PermissionAnswer = (request: RequestPermissionRequest, signal: AbortSignal) => Promise<RequestPermissionResponse> | RequestPermissionResponse;

export interface AcpWorld {
  tmux: PrivateTmux;
  dir: string;
  connection: ClientConnection;
  updates: SessionNotification[];
  permissionRequests: RequestPermissionRequest[];
  /** Withdrawn permission requests (the agent cancelled them), by their tool call id. */
  withdrawn: string[];
  wire: WireMessage[];
  elicitations: CreateElicitationRequest[];
  /** How the client answers form elicitations (default: cancel). */
  answerElicitations(answer: (request: CreateElicitationRequest) => CreateElicitationResponse): void;
  /** How the client answers the next permission requests (default: cancelled). */
  answerPermissions(answer: PermissionAnswer): void;
  stderr(): string;
  /** The text of every chunk of `kind` so far. */
  text(kind: "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk"): string;
  /** Waits (bounded) for `predicate` over the world; fails saying what it saw. */
  until(predicate: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  auditLog(): Promise<Array<Record<string, unknown>>>;
  close(): Promise<void>;
}

export interface AcpWorldOptions {
  /** Extra `agy-bridge acp` arguments (after `-L <ours>`). */
  acpArgs?: (dir: string) => string[];
  /** Extra `agy-bridge sim` arguments. */
  simArgs?: string[];
  /** A second simulator as agy in the same tmux server (session `agy2`), with these arguments. */
  secondSimArgs?: string[];
}

function recorded(stream: Stream, wire: WireMessage[]): Stream {
  const incoming = new TransformStream<AnyMessage, AnyMessage>({
    transform(message, controller) {
      wire.push({ from: "agent", message: structuredClone(message) });
      controller.enqueue(message);
    },
  });
  const outgoing = new TransformStream<AnyMessage, AnyMessage>({
    transform(message, controller) {
      wire.push({ from: "client", message: structuredClone(message) });
      controller.enqueue(message);
    },
  });
  void stream.readable.pipeTo(incoming.writable).catch(() => undefined);
  void outgoing.readable.pipeTo(stream.writable).catch(() => undefined);
  return { readable: incoming.readable, writable: outgoing.writable };
}

export async function startAcpWorld(options: AcpWorldOptions = {}): Promise<AcpWorld> {
  const tmux = createPrivateTmux();
  const dir = await mkdtemp(join(tmpdir(), "agyb-acp-"));
  let child: ChildProcess | undefined;
  let stderr = "";
  try {
    await tmux.newSession("agy", [process.execPath, "--import", "tsx", BIN, "sim", "--as-agy", ...(options.simArgs ?? [])], {
      columns: 120,
      rows: 40,
      cwd: ROOT,
    });
    await tmux.waitForScreen("agy", (s) => s.includes("? for shortcuts"), "the simulator's TUI", 30_000);
    if (options.secondSimArgs !== undefined) {
      await tmux.newSession("agy2", [process.execPath, "--import", "tsx", BIN, "sim", "--as-agy", ...options.secondSimArgs], {
        columns: 120,
        rows: 40,
        cwd: ROOT,
      });
      await tmux.waitForScreen("agy2", (s) => s.includes("? for shortcuts"), "the second simulator's TUI", 30_000);
    }
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_STATE_HOME: dir, XDG_CONFIG_HOME: dir };
    delete env["TMUX"];
    const args = ["acp", "-L", tmux.socketName, "--audit-file", join(dir, "audit.jsonl"), ...(options.acpArgs?.(dir) ?? [])];
    child = spawn(process.execPath, ["--import", "tsx", BIN, ...args], { cwd: ROOT, env, stdio: ["pipe", "pipe", "pipe"] });
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const wire: WireMessage[] = [];
    const updates: SessionNotification[] = [];
    const permissionRequests: RequestPermissionRequest[] = [];
    const withdrawn: string[] = [];
    let answer: PermissionAnswer = () => ({ outcome: { outcome: "cancelled" } });
    const elicitations: CreateElicitationRequest[] = [];
    let elicit = (_request: CreateElicitationRequest): CreateElicitationResponse => ({ action: "cancel" });
    const app = client({ name: "acp-test" })
      .onNotification("session/update", ({ params }) => {
        updates.push(params);
      })
      .onRequest("session/request_permission", async ({ params, signal }) => {
        permissionRequests.push(params);
        signal.addEventListener("abort", () => withdrawn.push(params.toolCall.toolCallId), { once: true });
        return answer(params, signal);
      })
      .onRequest("elicitation/create", ({ params }) => {
        elicitations.push(params);
        return elicit(params);
      });
    const stream = ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>);
    const connection = app.connect(recorded(stream, wire));
    const proc = child;
    const world: AcpWorld = {
      tmux,
      dir,
      connection,
      updates,
      permissionRequests,
      withdrawn,
      wire,
      answerPermissions(next) {
        answer = next;
      },
      elicitations,
      answerElicitations(next) {
        elicit = next;
      },
      stderr: () => stderr,
      text(kind) {
        return updates
          .map((n) => n.update)
          .filter((u) => u.sessionUpdate === kind)
          .map((u) => {
            const content = (u as { content?: { type?: string; text?: string } }).content;
            return content?.type === "text" ? (content.text ?? "") : "";
          })
          .join("");
      },
      async until(predicate, what, timeoutMs = 30_000) {
        await pollUntil(predicate, what, {
          ms: timeoutMs,
          everyMs: 50,
          seen: () => `updates so far: [${updates.map((n) => n.update.sessionUpdate).join(", ")}]; stderr: ${stderr}`,
        });
      },
      async auditLog() {
        const text = await readFile(join(dir, "audit.jsonl"), "utf8").catch(() => "");
        return text
          .split("\n")
          .filter((l) => l !== "")
          .map((l) => JSON.parse(l) as Record<string, unknown>);
      },
      async close() {
        connection.close();
        await stopChild(proc);
        await tmux.kill();
        await rm(dir, { recursive: true, force: true });
      },
    };
    return world;
  } catch (error) {
    if (child !== undefined) await stopChild(child);
    await tmux.kill();
    await rm(dir, { recursive: true, force: true });
    throw new Error(`${(error as Error).message}${stderr === "" ? "" : `; acp stderr: ${stderr}`}`);
  }
}

/** Closes stdin (the editor going away), then SIGTERM, then SIGKILL, each bounded. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const within = (ms: number) => Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);
  child.stdin?.end();
  if (await within(3000)) return;
  child.kill("SIGTERM");
  if (await within(3000)) return;
  child.kill("SIGKILL");
  await within(3000);
}
