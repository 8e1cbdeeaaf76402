/**
 * Byte builders and reply helpers for loopback Connect servers. Frames are
 * written by hand so tests control every byte the client reads.
 */
import type { Handler, Response } from "./loopback-server.js";

/** `[flags][BE length][payload]`; objects are JSON-encoded. */
export function frame(flags: number, payload: string | Uint8Array | object = ""): Buffer {
  const bytes =
    typeof payload === "string" ? Buffer.from(payload) : payload instanceof Uint8Array ? Buffer.from(payload) : Buffer.from(JSON.stringify(payload));
  const header = Buffer.alloc(5);
  header[0] = flags;
  header.writeUInt32BE(bytes.byteLength, 1);
  return Buffer.concat([header, bytes]);
}

export const dataFrame = (value: object) => frame(0x00, value);
export const endFrame = (value: string | object = {}) => frame(0x02, value);

export function replyJson(res: Response, body: unknown, status = 200): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(typeof body === "string" ? body : JSON.stringify(body));
}

/** Writes each chunk as its own write, yielding to the event loop between them. */
export async function replyChunks(res: Response, chunks: readonly Uint8Array[], status = 200): Promise<void> {
  res.writeHead(status, { "content-type": "application/connect+json" });
  for (const chunk of chunks) {
    (res as { write(chunk: Uint8Array): boolean }).write(chunk);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  res.end();
}

export interface AgyLikeRoutes {
  /** Unary answers by method name; a missing method gets 404 like connect-go. */
  unary?: Record<string, (body: unknown) => unknown>;
  /** Updates sent as `{"update":…}` frames, then a `{}` trailer. */
  stream?: (body: unknown) => object[];
}

/** A well-behaved Connect JSON server: the happy path for every transport. */
export function agyLikeHandler(routes: AgyLikeRoutes): Handler {
  return async ({ request, res }) => {
    if (request.rpc === "StreamAgentStateUpdates" && routes.stream !== undefined) {
      const payload = JSON.parse(request.body.subarray(5).toString("utf8")) as unknown;
      const frames = routes.stream(payload).map((update) => dataFrame({ update }));
      await replyChunks(res, [...frames, endFrame({})]);
      return;
    }
    const route = routes.unary?.[request.rpc];
    if (route === undefined) {
      replyJson(res, { code: "unimplemented", message: `${request.rpc} is not implemented` }, 404);
      return;
    }
    replyJson(res, route(JSON.parse(request.body.toString("utf8") || "{}")));
  };
}
