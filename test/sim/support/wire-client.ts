/**
 * A small raw-bytes client for the simulator tests: Connect JSON unary calls
 * and connect+json streams over HTTP/1.1, HTTPS/1.1 or HTTP/2 (TLS), so the
 * tests see exactly what a client on the wire sees.
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { connect as http2Connect } from "node:http2";
import { request as httpsRequest } from "node:https";
import { EnvelopeDecoder, FLAG_END_STREAM, encodeJsonEnvelope, type Envelope } from "../../../src/protocol/envelope.js";
import { SERVICE_NAME } from "../../../src/protocol/methods.js";

export type Json = Record<string, any>;

export interface CallOptions {
  headers?: Record<string, string>;
  /** Speak HTTP/2 (TLS URLs only). */
  http2?: boolean;
  /** Send these bytes instead of JSON-encoding the body. */
  rawBody?: Uint8Array;
  contentType?: string;
}

export interface UnaryResponse {
  status: number;
  contentType: string;
  text: string;
  json: Json;
}

function pathOf(method: string): string {
  return `/${SERVICE_NAME}/${method}`;
}

/** Sends one POST and hands back the response as a node stream-like object. */
interface RawResponse {
  status: number;
  contentType: string;
  on(event: "data", listener: (chunk: Buffer) => void): void;
  on(event: "end" | "close", listener: () => void): void;
  on(event: "error", listener: (error: Error) => void): void;
  cancel(): void;
}

function post(baseUrl: string, method: string, body: Uint8Array, contentType: string, options: CallOptions): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const headers = { "content-type": contentType, ...options.headers };
  if (options.http2 === true) {
    return new Promise((resolve, reject) => {
      const session = http2Connect(url.origin, { rejectUnauthorized: false });
      session.on("error", reject);
      const stream = session.request({ ":method": "POST", ":path": pathOf(method), ...headers });
      stream.on("response", (h) => {
        const events = stream as unknown as RawResponse;
        stream.on("close", () => session.close());
        resolve({
          status: Number(h[":status"]),
          contentType: String(h["content-type"] ?? ""),
          on: (event: string, listener: (...args: any[]) => void) => void events.on(event as "data", listener),
          cancel: () => {
            stream.close();
            session.destroy();
          },
        } as RawResponse);
      });
      stream.on("error", reject);
      stream.end(body);
    });
  }
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      { host: url.hostname, port: url.port, method: "POST", path: pathOf(method), headers, agent: false, rejectUnauthorized: false },
      (res: IncomingMessage) => {
        resolve({
          status: res.statusCode ?? 0,
          contentType: String(res.headers["content-type"] ?? ""),
          on: (event: string, listener: (...args: any[]) => void) => void res.on(event, listener),
          cancel: () => req.destroy(),
        } as RawResponse);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

export async function unary(baseUrl: string, method: string, body: unknown = {}, options: CallOptions = {}): Promise<UnaryResponse> {
  const bytes = options.rawBody ?? Buffer.from(JSON.stringify(body));
  const res = await post(baseUrl, method, bytes, options.contentType ?? "application/json", options);
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    res.on("data", (chunk) => chunks.push(chunk));
    res.on("end", () => resolve());
    res.on("error", reject);
  });
  const text = Buffer.concat(chunks).toString("utf8");
  let json: Json = {};
  try {
    json = JSON.parse(text) as Json;
  } catch {
    // Not JSON (e.g. a 404 page); callers read `text`.
  }
  return { status: res.status, contentType: res.contentType, text, json };
}

export interface StreamEnd {
  /** "clean": an end-stream frame then EOF; "aborted": the connection ended without one. */
  kind: "clean" | "aborted";
  /** The parsed end-stream payload, when one came. */
  trailer?: Json;
  /** Bytes of an incomplete frame left when the connection ended. */
  leftoverBytes: number;
}

export interface StreamReader {
  status: number;
  contentType: string;
  /** Every data frame's parsed payload so far. */
  readonly frames: Json[];
  /**
   * Resolves with the first data frame (from index `from`) matching
   * `predicate`; rejects, saying how many frames came, when the stream ends
   * first or after `timeoutMs` (default 10 s).
   */
  waitForFrame(predicate?: (frame: Json) => boolean, from?: number, timeoutMs?: number): Promise<Json>;
  readonly ended: Promise<StreamEnd>;
  cancel(): void;
}

/** Opens StreamAgentStateUpdates (or another server-stream `method`); `request` is enveloped unless `rawBody` is given. */
export async function openStream(baseUrl: string, request: Json, options: CallOptions = {}, method = "StreamAgentStateUpdates"): Promise<StreamReader> {
  const bytes = options.rawBody ?? encodeJsonEnvelope(0, request);
  const res = await post(baseUrl, method, bytes, options.contentType ?? "application/connect+json", options);
  const decoder = new EnvelopeDecoder();
  const frames: Json[] = [];
  const waiters = new Set<() => void>();
  let trailer: Json | undefined;
  let finish: (end: StreamEnd) => void = () => undefined;
  const ended = new Promise<StreamEnd>((resolve) => (finish = resolve));
  let done = false;
  const settle = (kind: "clean" | "aborted"): void => {
    if (done) return;
    done = true;
    finish({ kind, ...(trailer !== undefined ? { trailer } : {}), leftoverBytes: decoder.bufferedBytes });
    for (const wake of waiters) wake();
  };
  res.on("data", (chunk) => {
    let envelopes: Envelope[];
    try {
      envelopes = decoder.push(new Uint8Array(chunk));
    } catch {
      settle("aborted");
      return;
    }
    for (const envelope of envelopes) {
      const payload = JSON.parse(Buffer.from(envelope.payload).toString("utf8")) as Json;
      if ((envelope.flags & FLAG_END_STREAM) !== 0) trailer = payload;
      else frames.push(payload);
    }
    for (const wake of [...waiters]) wake();
  });
  res.on("end", () => settle(trailer !== undefined ? "clean" : "aborted"));
  res.on("close", () => settle(trailer !== undefined ? "clean" : "aborted"));
  res.on("error", () => settle("aborted"));
  return {
    status: res.status,
    contentType: res.contentType,
    frames,
    ended,
    cancel: () => res.cancel(),
    waitForFrame(predicate = () => true, from = 0, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching frame within ${timeoutMs} ms (${frames.length} frames so far)`));
        }, timeoutMs);
        const check = (): void => {
          const hit = frames.slice(from).find(predicate);
          if (hit !== undefined) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(hit);
          } else if (done) {
            clearTimeout(timer);
            waiters.delete(check);
            reject(new Error(`stream ended before a matching frame (${frames.length} frames)`));
          }
        };
        waiters.add(check);
        check();
      });
    },
  };
}

/**
 * Polls `read` until `until` holds, for at most `timeoutMs` (default 10 s,
 * generous for a shared machine); then fails naming `what` and the last value
 * it read.
 */
export async function eventually<T>(
  read: () => Promise<T>,
  until: (value: T) => boolean,
  options: { what?: string; timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  for (;;) {
    const value = await read();
    if (until(value)) return value;
    if (Date.now() > deadline) {
      const seen = JSON.stringify(value) ?? String(value);
      throw new Error(`gave up waiting for ${options.what ?? "a condition"}; last saw ${seen.length > 600 ? `${seen.slice(0, 600)}…` : seen}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 10));
  }
}
