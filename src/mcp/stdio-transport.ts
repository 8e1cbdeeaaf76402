/**
 * MCP over stdio: newline-delimited JSON-RPC on a readable and a writable,
 * in place of the SDK's `StdioServerTransport`, for three guarantees it does
 * not give:
 *
 * - **Every reply is written.** When stdin ends, requests already read are
 *   finished and their replies written before the transport closes (a host
 *   that pipes `initialize` and a `tools/call` and closes its end gets both
 *   replies). A request the client cancelled (`notifications/cancelled`)
 *   gets no reply, as MCP says, and is not waited for.
 * - **Every bad line is answered** on stdout with a JSON-RPC error, and
 *   reading goes on with the next line: a line that is not JSON gets -32700
 *   (parse error) with id null; JSON that is not a JSON-RPC message gets
 *   -32600 (invalid request) with its id when it has a usable one, else null;
 *   a line longer than `maxLineBytes` gets -32600 with id null — its bytes
 *   are skipped up to the next newline, never held, so memory stays bounded
 *   whatever the line's size. Blank lines are ignored.
 * - **stdout carries JSON-RPC only**: this transport is its one writer.
 */
import type { Readable, Writable } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { JSONRPCMessageSchema, type JSONRPCMessage, type RequestId } from "@modelcontextprotocol/sdk/types.js";

/** The longest line read (bytes, newline excluded): as much as one HTTP request body may carry. */
export const MAX_STDIO_LINE_BYTES = 4 * 1024 * 1024;

export interface StdioTransportOptions {
  stdin: Readable;
  stdout: Writable;
  /** Default {@link MAX_STDIO_LINE_BYTES}. */
  maxLineBytes?: number;
  /** Told, in a sentence, about each line refused (for stderr). */
  onProblem?: (message: string) => void;
}

export interface AgyStdioTransport extends Transport {
  /** Settles once stdin ended and every request read from it was answered (or the transport was closed). */
  readonly drained: Promise<void>;
}

const NEWLINE = 0x0a;

function usableId(value: unknown): RequestId | null {
  if (typeof value !== "object" || value === null || !("id" in value)) return null;
  const id = (value as { id: unknown }).id;
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : null;
}

interface LineSplitter {
  push(chunk: Buffer | string): void;
  /** Hands on a last line that came without its newline. */
  flush(): void;
}

/** Cuts bytes into lines, holding at most `maxLineBytes` of one; a longer line is reported once and skipped to its newline. */
function createLineSplitter(maxLineBytes: number, onLine: (bytes: Buffer) => void, onTooLong: () => void): LineSplitter {
  /** The start of the line being read, in pieces (never more than `maxLineBytes` in all). */
  let pieces: Buffer[] = [];
  let held = 0;
  /** The line being read is too long: skip to its newline. */
  let skipping = false;
  return {
    push(chunk) {
      let data = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
      while (data.length > 0) {
        const at = data.indexOf(NEWLINE);
        const part = at === -1 ? data : data.subarray(0, at);
        if (!skipping) {
          if (held + part.length > maxLineBytes) {
            skipping = true;
            pieces = [];
            held = 0;
            onTooLong();
          } else {
            pieces.push(part);
            held += part.length;
          }
        }
        if (at === -1) return;
        if (!skipping) {
          const whole = pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces, held);
          pieces = [];
          held = 0;
          onLine(whole);
        }
        skipping = false;
        data = data.subarray(at + 1);
      }
    },
    flush() {
      // A last line without its newline is still a line.
      if (!skipping && held > 0) {
        const rest = Buffer.concat(pieces, held);
        pieces = [];
        held = 0;
        onLine(rest);
      }
    },
  };
}

export function createStdioTransport(options: StdioTransportOptions): AgyStdioTransport {
  const { stdin, stdout } = options;
  const maxLineBytes = options.maxLineBytes ?? MAX_STDIO_LINE_BYTES;
  let ended = false;
  let closed = false;
  /** Requests read and not yet answered, by the id they came with (`typeof` kept apart: 1 is not "1"). */
  const inFlight = new Set<string>();
  const idKey = (id: RequestId): string => `${typeof id}:${String(id)}`;
  let settle!: () => void;
  const drained = new Promise<void>((resolve) => (settle = resolve));
  /** Writes in order; resolves once the bytes are handed to stdout (after `drain` when it pushes back). */
  let writing: Promise<void> = Promise.resolve();

  const write = (message: unknown): Promise<void> => {
    const line = `${JSON.stringify(message)}\n`;
    writing = writing.then(
      () =>
        new Promise<void>((resolve) => {
          if (stdout.destroyed || stdout.writableEnded) return resolve();
          if (stdout.write(line)) resolve();
          else stdout.once("drain", resolve);
        }),
    );
    return writing;
  };

  const refuse = (code: number, message: string, id: RequestId | null): void => {
    options.onProblem?.(message);
    void write({ jsonrpc: "2.0", id, error: { code, message } });
  };

  const maybeDone = (): void => {
    if (!ended || inFlight.size > 0 || closed) return;
    void writing.then(() => transport.close());
  };

  const line = (bytes: Buffer): void => {
    const text = bytes.toString("utf8").replace(/\r$/, "");
    if (text.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      refuse(-32700, "Parse error: the line is not JSON; send one JSON-RPC message per line", null);
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      refuse(
        -32600,
        'Invalid Request: the line is JSON but not a JSON-RPC 2.0 message (jsonrpc "2.0" with a method, or a result or error with an id)',
        usableId(value),
      );
      return;
    }
    const message = parsed.data;
    if ("method" in message && "id" in message) inFlight.add(idKey(message.id));
    if ("method" in message && message.method === "notifications/cancelled" && !("id" in message)) {
      const cancelled = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof cancelled === "string" || typeof cancelled === "number") inFlight.delete(idKey(cancelled));
    }
    transport.onmessage?.(message);
    maybeDone();
  };

  const splitter = createLineSplitter(
    maxLineBytes,
    (bytes) => line(bytes),
    () =>
      refuse(
        -32600,
        `Invalid Request: a line is longer than ${maxLineBytes} bytes, so it was skipped unread; send smaller messages (one JSON-RPC message per line)`,
        null,
      ),
  );
  const onData = (chunk: Buffer | string): void => splitter.push(chunk);

  const onEnd = (): void => {
    if (ended) return;
    ended = true;
    splitter.flush();
    maybeDone();
  };
  const onError = (error: Error): void => {
    transport.onerror?.(error);
    onEnd();
  };

  const transport: AgyStdioTransport = {
    drained,
    async start() {
      stdin.on("data", onData);
      stdin.once("end", onEnd);
      stdin.once("close", onEnd);
      stdin.on("error", onError);
      stdout.on("error", () => undefined);
    },
    async send(message: JSONRPCMessage) {
      if (closed) return;
      const answered = ("result" in message || "error" in message) && "id" in message && message.id !== undefined ? message.id : undefined;
      await write(message);
      if (answered !== undefined && answered !== null) {
        inFlight.delete(idKey(answered));
        maybeDone();
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      stdin.off("data", onData);
      stdin.off("end", onEnd);
      stdin.off("close", onEnd);
      stdin.off("error", onError);
      stdin.pause();
      await writing;
      settle();
      transport.onclose?.();
    },
  };
  return transport;
}
