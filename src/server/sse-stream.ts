/**
 * One SSE response with backpressure. A writer stops when the socket's buffer
 * is full (`write` returns false) and resumes on `drain`; since every event
 * stays in the conversation's log, a client that stops reading costs one
 * cursor, never a growing queue, and delays no one.
 */
import type { ServerResponse } from "node:http";

export interface SseTimers {
  setInterval(fn: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

export interface SseStreamOptions {
  /** A comment line at least this often, so proxies and clients see the stream alive (default 15 s). */
  heartbeatMs?: number;
  timers?: SseTimers;
  /** Called once when the stream ends, for any reason. */
  onClose?: () => void;
  /** Called when a full buffer has drained. */
  onDrain?: () => void;
}

export interface SseStream {
  readonly closed: boolean;
  /** Writes a finished frame; false when the buffer is now full (wait for `onDrain`) or the stream closed. */
  write(frame: string): boolean;
  /** Ends the stream with a final comment. */
  end(comment?: string): void;
}

const defaultTimers: SseTimers = {
  setInterval: (fn, ms) => setInterval(fn, ms).unref(),
  clearInterval: (handle) => clearInterval(handle as NodeJS.Timeout),
};

export function createSseStream(res: ServerResponse, options: SseStreamOptions = {}): SseStream {
  const timers = options.timers ?? defaultTimers;
  let closed = false;
  let full = false;
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  res.flushHeaders();
  // A client that is behind already has bytes coming: it needs no heartbeat.
  const heartbeat = timers.setInterval(() => {
    if (!full) stream.write(": keep-alive\n\n");
  }, options.heartbeatMs ?? 15_000);
  const finish = () => {
    if (closed) return;
    closed = true;
    timers.clearInterval(heartbeat);
    options.onClose?.();
  };
  res.on("close", finish);
  res.on("drain", () => {
    full = false;
    if (!closed) options.onDrain?.();
  });
  const stream: SseStream = {
    get closed() {
      return closed;
    },
    write(frame) {
      if (closed) return false;
      full = !res.write(frame);
      return !full;
    },
    end(comment = "server closing") {
      if (closed) return;
      res.end(`: ${comment.replace(/[\r\n]+/g, " ")}\n\n`);
      finish();
    },
  };
  return stream;
}
