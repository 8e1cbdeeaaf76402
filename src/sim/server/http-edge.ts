/**
 * The HTTP edge shared by both listeners: bounded request bodies, JSON
 * answers, the CSRF check, refusing a call without reading its body, and
 * aborting a connection (node:http and the node:http2 compatibility API look
 * alike, except for how a connection is torn down).
 */
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { constants, type Http2ServerRequest, type Http2ServerResponse } from "node:http2";

export type SimRequest = IncomingMessage | Http2ServerRequest;
export type SimResponse = ServerResponse | Http2ServerResponse;

export const CSRF_HEADER = "x-codeium-csrf-token";

/** The client went away before its request body ended: nobody is left to answer. */
export class ClientGone extends Error {
  override name = "ClientGone";
}

/**
 * Reads a request body of at most `maxBytes`. A larger one — declared in
 * `content-length` or found while reading — is `"too_large"`, and reading
 * stops there: a hostile body never sits in memory whole.
 */
export function readBody(req: SimRequest, maxBytes: number): Promise<Buffer | "too_large"> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve("too_large");
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = (): void => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
    };
    const onData = (chunk: Buffer | string): void => {
      const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      size += bytes.byteLength;
      if (size > maxBytes) {
        cleanup();
        req.pause();
        chunks.length = 0;
        resolve("too_large");
        return;
      }
      chunks.push(bytes);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(Buffer.concat(chunks));
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(new ClientGone(`the request body broke off: ${error.message}`, { cause: error }));
    };
    const onClose = (): void => {
      cleanup();
      reject(new ClientGone("the client closed the connection before the request body ended"));
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("close", onClose);
  });
}

export function sendJson(res: SimResponse, status: number, body: unknown): void {
  const bytes = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { "content-type": "application/json", "content-length": String(bytes.byteLength) });
  res.end(bytes);
}

/**
 * Answers a Connect error without reading (the rest of) the request body,
 * then ends the exchange so the client stops sending: `connection: close`
 * on HTTP/1.1, the stream closed with NO_ERROR on HTTP/2 (RFC 9113 §8.1).
 */
export function refuse(res: SimResponse, status: number, code: string, message: string): void {
  const bytes = Buffer.from(JSON.stringify({ code, message }));
  const headers: Record<string, string> = { "content-type": "application/json", "content-length": String(bytes.byteLength) };
  const h2 = isHttp2(res);
  if (!h2) headers.connection = "close";
  res.writeHead(status, headers);
  res.end(bytes, () => {
    if (isHttp2(res)) res.stream.close(constants.NGHTTP2_NO_ERROR);
  });
}

/** Says the same text without `secret` (an error message must never carry the CSRF token). */
export function withoutSecret(text: string, secret: string | undefined): string {
  return secret === undefined || secret === "" ? text : text.split(secret).join("[redacted]");
}

/** Connect unary error body: `{"code","message"}` (agy answers 500 + "unknown" for not-found-like failures). */
export function sendConnectError(res: SimResponse, status: number, code: string, message: string): void {
  sendJson(res, status, { code, message });
}

/** True when the call carries the expected token (constant-time compare; the token is never logged). */
export function hasCsrfToken(req: SimRequest, expected: string): boolean {
  const got = req.headers[CSRF_HEADER];
  if (typeof got !== "string") return false;
  const a = Buffer.from(got);
  const b = Buffer.from(expected);
  return a.byteLength === b.byteLength && timingSafeEqual(a, b);
}

/** True for an HTTP/2 exchange (the compatibility API's response has a `stream`). */
export function isHttp2(res: SimResponse): res is Http2ServerResponse {
  return "stream" in res && res.stream !== undefined;
}

/** Tears the connection (HTTP/1.1) or the stream (HTTP/2) down without a clean end. */
export function abortResponse(res: SimResponse): void {
  if (isHttp2(res)) {
    res.stream.close(constants.NGHTTP2_INTERNAL_ERROR);
    return;
  }
  (res as ServerResponse).socket?.destroy();
}

/** Writes a chunk of a streaming answer; `done` runs once it is flushed. */
export function writeChunk(res: SimResponse, bytes: Uint8Array, done?: () => void): void {
  (res as ServerResponse).write(bytes, done === undefined ? undefined : () => done());
}
