/**
 * One POST to agy's language server over `node:http`, `node:https` or
 * `node:http2`, as the client's transport: a status and a body the client
 * reads as chunks. The client owns everything above that (envelopes,
 * trailers, deadlines, error mapping), so this file needs no Connect library:
 * loading one cost a CLI command more than the rest of its start-up
 * (docs/scale.md, "Start-up").
 *
 * Failure contract: `post` rejects, and a body's iteration throws, with the
 * Node error that stopped the exchange (or the signal's reason); the client
 * turns either into an `RpcError`. Once the signal fires, the request (or
 * the HTTP/2 stream, closed with CANCEL) is torn down and the server sees it
 * go; after a body was read to its end the signal no longer touches the
 * connection, so a kept-alive socket goes back to its pool.
 */
import * as http from "node:http";
import * as http2 from "node:http2";
import type { Readable } from "node:stream";
import type { CertificatePin } from "./certificate-pin.js";
import { connectTls, Http2Sessions, PinnedHttpsAgent } from "./connections.js";

/** What came back: the status and the body, read once. */
export interface HttpAnswer {
  status: number;
  body: AsyncIterable<Uint8Array>;
}

export interface HttpTransport {
  /** POSTs `payload` to `path` with `headers` (lowercase names). */
  post(path: string, headers: Readonly<Record<string, string>>, payload: Uint8Array, signal: AbortSignal): Promise<HttpAnswer>;
  /** Closes every connection; exchanges in flight fail. */
  close(): void;
}

export interface HttpTransportOptions {
  /** The server's origin, already checked to be loopback. */
  url: URL;
  httpVersion: "1.1" | "2";
  /** The certificate pin for `https:`; undefined accepts any certificate. */
  pin: CertificatePin | undefined;
  /** Deadline for the TLS handshake and an HTTP/2 session's first SETTINGS; 0 = none. */
  connectTimeoutMs: number;
}

export function createHttpTransport(options: HttpTransportOptions): HttpTransport {
  const { url, pin, connectTimeoutMs } = options;
  const secure = url.protocol === "https:";
  if (options.httpVersion === "2") {
    const connect = secure ? () => connectTls(url, ["h2"], pin, connectTimeoutMs) : undefined;
    const sessions = new Http2Sessions(url.origin, connect, connectTimeoutMs);
    return {
      post: (path, headers, payload, signal) => postHttp2(sessions, path, headers, payload, signal),
      close: () => sessions.close(),
    };
  }
  const agent = secure ? new PinnedHttpsAgent(url, pin, connectTimeoutMs) : new http.Agent({ keepAlive: true });
  return {
    post: (path, headers, payload, signal) => postHttp1(url, agent, path, headers, payload, signal),
    close: () => agent.destroy(),
  };
}

/** Calls `stop` with the signal's reason once it fires, until the returned function is called. */
function onAbort(signal: AbortSignal, stop: (reason: Error) => void): () => void {
  const listener = () => stop(abortReason(signal));
  signal.addEventListener("abort", listener, { once: true });
  return () => signal.removeEventListener("abort", listener);
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error("the call was aborted");
}

function postHttp1(
  url: URL,
  agent: http.Agent,
  path: string,
  headers: Readonly<Record<string, string>>,
  payload: Uint8Array,
  signal: AbortSignal,
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(abortReason(signal));
      return;
    }
    // `http.request` speaks TLS when the agent's sockets do (PinnedHttpsAgent hands over pinned TLS sockets);
    // Node only wants the protocol to match the agent's.
    const request = http.request({
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[|\]$/g, ""),
      port: url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port),
      path,
      method: "POST",
      headers: { ...headers },
      agent,
    });
    let answered = false;
    const forget = onAbort(signal, (reason) => request.destroy(reason));
    request.on("error", (error) => {
      forget();
      reject(error);
    });
    request.once("close", () => {
      if (!answered) reject(new Error("the server closed the connection before answering"));
    });
    request.once("response", (response) => {
      answered = true;
      forget();
      // The body's reader sees a failure through its iterator; this listener keeps an unread one from throwing.
      response.on("error", () => undefined);
      resolve({ status: response.statusCode ?? 0, body: readBody(response, signal, (reason) => response.destroy(reason)) });
    });
    request.end(payload);
  });
}

function postHttp2(
  sessions: Http2Sessions,
  path: string,
  headers: Readonly<Record<string, string>>,
  payload: Uint8Array,
  signal: AbortSignal,
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(abortReason(signal));
      return;
    }
    // Until a stream exists, an abort only has to fail the wait for it.
    let forget = onAbort(signal, reject);
    sessions.request("POST", path, headers).then((stream) => {
      forget();
      if (signal.aborted) {
        stream.close(http2.constants.NGHTTP2_CANCEL);
        reject(abortReason(signal));
        return;
      }
      let answered = false;
      // RST_STREAM CANCEL is how an HTTP/2 client says it stopped listening; then the reader fails with `reason`.
      const cancel = (reason?: Error) => {
        if (!stream.closed) stream.close(http2.constants.NGHTTP2_CANCEL);
        if (reason !== undefined) stream.destroy(reason);
      };
      forget = onAbort(signal, (reason) => {
        cancel();
        reject(reason);
      });
      stream.on("error", (error) => {
        if (!answered) reject(error);
      });
      stream.once("close", () => {
        if (!answered) reject(new Error(`the server closed the HTTP/2 stream before answering (code ${stream.rstCode})`));
      });
      stream.once("response", (answer) => {
        answered = true;
        forget();
        resolve({ status: Number(answer[":status"] ?? 0), body: readBody(stream, signal, cancel) });
      });
      stream.end(payload);
    }, reject);
  });
}

/**
 * The body's chunks until its end. The signal firing while it is read stops
 * the exchange (`stop` with the reason, which the read then fails with); a
 * reader that leaves early stops it too (`stop` without one). Once the end
 * was read it touches nothing.
 */
async function* readBody(body: Readable, signal: AbortSignal, stop: (reason?: Error) => void): AsyncGenerator<Uint8Array, void, undefined> {
  const forget = onAbort(signal, stop);
  let ended = false;
  try {
    for await (const chunk of body) yield chunk as Uint8Array;
    if (signal.aborted) throw abortReason(signal);
    ended = true;
  } finally {
    forget();
    if (!ended) stop();
  }
}
