/**
 * The HTTP edge shared by both listeners: request bodies, JSON answers, the
 * CSRF check, and aborting a connection (node:http and the node:http2
 * compatibility API look alike, except for how a connection is torn down).
 */
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { constants, type Http2ServerRequest, type Http2ServerResponse } from "node:http2";

export type SimRequest = IncomingMessage | Http2ServerRequest;
export type SimResponse = ServerResponse | Http2ServerResponse;

export const CSRF_HEADER = "x-codeium-csrf-token";

export async function readBody(req: SimRequest): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks);
}

export function sendJson(res: SimResponse, status: number, body: unknown): void {
  const bytes = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { "content-type": "application/json", "content-length": String(bytes.byteLength) });
  res.end(bytes);
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

/** Tears the connection (HTTP/1.1) or the stream (HTTP/2) down without a clean end. */
export function abortResponse(res: SimResponse): void {
  if ("stream" in res && res.stream !== undefined) {
    res.stream.close(constants.NGHTTP2_INTERNAL_ERROR);
    return;
  }
  (res as ServerResponse).socket?.destroy();
}

/** Writes a chunk of a streaming answer; `done` runs once it is flushed. */
export function writeChunk(res: SimResponse, bytes: Uint8Array, done?: () => void): void {
  (res as ServerResponse).write(bytes, done === undefined ? undefined : () => done());
}
