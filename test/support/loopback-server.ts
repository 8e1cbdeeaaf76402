/**
 * Real loopback servers for RPC tests: plain HTTP/1.1, plain HTTP/2 (h2c), or
 * TLS serving both HTTP/1.1 and HTTP/2 (like agy's connect-go listener). Every
 * request is recorded with its exact body bytes; handlers write exact bytes.
 */
import * as http from "node:http";
import * as http2 from "node:http2";
import type { AddressInfo, Socket } from "node:net";
import type { SelfSignedCertificate } from "../../src/sim/server/certificate.js";

export type ServerKind = "http1" | "h2c" | "tls";

export interface RecordedRequest {
  /** The RPC method: the last path segment. */
  rpc: string;
  path: string;
  httpVersion: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export type Response = http.ServerResponse | http2.Http2ServerResponse;

export interface HandlerContext {
  request: RecordedRequest;
  res: Response;
  /** Resolves when the response closed (finished, or the client went away). */
  closed: Promise<void>;
  /** Cuts the connection under the response without ending it. */
  destroy(): void;
}

export type Handler = (context: HandlerContext) => void | Promise<void>;

export interface LoopbackServerOptions {
  kind: ServerKind;
  certificate?: SelfSignedCertificate;
  /** When set, requests without this `x-codeium-csrf-token` get HTTP 401. */
  csrfToken?: string;
  handler: Handler;
}

export interface LoopbackServer {
  /** `http://127.0.0.1:<port>` or `https://…`. */
  url: string;
  requests: RecordedRequest[];
  /** Later TLS connections present this certificate instead. */
  useCertificate(certificate: SelfSignedCertificate): void;
  /** Destroys every open connection (the server keeps listening). */
  dropConnections(): void;
  close(): Promise<void>;
}

export async function startLoopbackServer(options: LoopbackServerOptions): Promise<LoopbackServer> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const sessions = new Set<http2.ServerHttp2Session>();

  const onRequest = (req: http.IncomingMessage | http2.Http2ServerRequest, res: Response) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const path = req.url ?? "";
      const request: RecordedRequest = {
        rpc: path.split("/").pop() ?? "",
        path,
        httpVersion: req.httpVersion,
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      requests.push(request);
      if (options.csrfToken !== undefined && req.headers["x-codeium-csrf-token"] !== options.csrfToken) {
        res.writeHead(401, { "content-type": "application/json" });
        res.end(JSON.stringify({ code: "unauthenticated", message: "missing CSRF token" }));
        return;
      }
      const closed = new Promise<void>((resolve) => res.once("close", () => resolve()));
      const destroy = () => {
        if ("stream" in res) res.stream.session?.destroy();
        else res.socket?.destroy();
      };
      await options.handler({ request, res, closed, destroy });
    })().catch(() => {
      if (!res.headersSent) res.writeHead(599);
      res.end();
    });
  };

  let server: http.Server | http2.Http2Server | http2.Http2SecureServer;
  if (options.kind === "http1") server = http.createServer(onRequest);
  else if (options.kind === "h2c") server = http2.createServer(onRequest);
  else {
    const certificate = options.certificate;
    if (certificate === undefined) throw new Error("a tls loopback server needs a certificate");
    server = http2.createSecureServer({ cert: certificate.cert, key: certificate.key, allowHTTP1: true }, onRequest);
  }
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  server.on("session", (session: http2.ServerHttp2Session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });

  server.listen(0, "127.0.0.1");
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  const port = (server.address() as AddressInfo).port;
  const dropConnections = () => {
    for (const session of sessions) session.destroy();
    for (const socket of sockets) socket.destroy();
  };

  return {
    url: `${options.kind === "tls" ? "https" : "http"}://127.0.0.1:${port}`,
    requests,
    useCertificate(certificate) {
      (server as http2.Http2SecureServer).setSecureContext({ cert: certificate.cert, key: certificate.key });
    },
    dropConnections,
    close() {
      dropConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
