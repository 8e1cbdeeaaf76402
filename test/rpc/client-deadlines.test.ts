/**
 * Servers that accept a connection and then do not answer: the client must
 * give up on opening (TLS, HTTP/2 SETTINGS, response headers, an error body)
 * within its connect deadline, and try again on the next call or attempt.
 */
import * as http2 from "node:http2";
import * as net from "node:net";
import * as tls from "node:tls";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { RpcError } from "../../src/errors.js";
import { createAgyRpcClient, type AgyRpcClient } from "../../src/rpc/client.js";
import { watchAgentStateUpdates, type WatchEvent } from "../../src/rpc/stream-watcher.js";
import { createSelfSignedCertificate, type SelfSignedCertificate } from "../../src/sim/server/certificate.js";
import { dataFrame } from "../support/connect-replies.js";
import { startLoopbackServer } from "../support/loopback-server.js";

const CONNECT_MS = 150;
/** Far above CONNECT_MS: a test that reaches it has hung. */
const BOUND_MS = 8_000;

let certificate: SelfSignedCertificate;
beforeAll(async () => {
  certificate = await createSelfSignedCertificate();
});

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${BOUND_MS} ms`)), BOUND_MS);
  });
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer));
}

interface Listener {
  url: string;
  /** Connections accepted so far. */
  connections(): number;
}

/**
 * A listener whose first `silent` connections are held open and never
 * answered; later ones go to `serve` (or are held too when it is undefined).
 */
async function startListener(options: { tls?: { alpn: string[] }; silent?: number; serve?: (socket: net.Socket) => void }): Promise<Listener> {
  let count = 0;
  const held = new Set<net.Socket>();
  const accept = (socket: net.Socket) => {
    count++;
    if (count <= (options.silent ?? Infinity) || options.serve === undefined) {
      held.add(socket);
      socket.on("data", () => undefined);
      socket.on("error", () => undefined);
      socket.once("close", () => held.delete(socket));
      return;
    }
    options.serve(socket);
  };
  const server: net.Server =
    options.tls === undefined
      ? net.createServer(accept)
      : tls.createServer({ cert: certificate.cert, key: certificate.key, ALPNProtocols: options.tls.alpn }, accept);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of held) socket.destroy();
        server.close(() => resolve());
      }),
  );
  const port = (server.address() as net.AddressInfo).port;
  return { url: `${options.tls === undefined ? "http" : "https"}://127.0.0.1:${port}`, connections: () => count };
}

/** An HTTP/2 server that answers every unary call with `{}`, fed sockets by a listener. */
function h2Answering(): (socket: net.Socket) => void {
  const server = http2.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session: http2.ServerHttp2Session) => sessions.add(session));
  cleanups.push(() => {
    for (const session of sessions) session.destroy();
  });
  return (socket) => server.emit("connection", socket);
}

function client(url: string, httpVersion: "1.1" | "2"): AgyRpcClient {
  const c = createAgyRpcClient({ baseUrl: url, httpVersion, connectTimeoutMs: CONNECT_MS });
  cleanups.push(() => c.close());
  return c;
}

type Disconnected = Extract<WatchEvent, { type: "disconnected" }>;

/** Watches until `enough` says so after a disconnection, then stops the watch. */
async function disconnections(c: AgyRpcClient, enough: (seen: Disconnected[]) => boolean): Promise<Disconnected[]> {
  const controller = new AbortController();
  const seen: Disconnected[] = [];
  const events: WatchEvent[] = [];
  const run = (async () => {
    for await (const event of watchAgentStateUpdates(c, {
      conversationId: "c-1",
      signal: controller.signal,
      backoff: { initialMs: 1, maxMs: 2, factor: 2 },
    })) {
      events.push(event);
      if (event.type === "disconnected") seen.push(event);
      if (event.type === "disconnected" && enough(seen)) controller.abort();
    }
  })();
  try {
    await within(run, `waiting for disconnections (saw ${JSON.stringify(events.map((e) => e.type))})`);
  } finally {
    controller.abort();
  }
  return seen;
}

describe("stream opening deadline", () => {
  const cases: Array<[string, () => Promise<Listener>, "1.1" | "2"]> = [
    ["a plain listener that accepts and says nothing", () => startListener({}), "1.1"],
    ["a TLS server that completes the handshake but never sends headers", () => startListener({ tls: { alpn: ["http/1.1"] } }), "1.1"],
    ["a TLS server that speaks no HTTP/2 after the handshake", () => startListener({ tls: { alpn: ["h2"] } }), "2"],
    ["an h2c listener that never sends SETTINGS", () => startListener({}), "2"],
  ];
  for (const [label, start, httpVersion] of cases) {
    it(`reports ${label} as a timeout and reconnects (HTTP/${httpVersion})`, async () => {
      const listener = await start();
      // Two attempts may share one failing HTTP/2 setup, so wait for a second connection too.
      const seen = await disconnections(client(listener.url, httpVersion), (s) => s.length >= 2 && listener.connections() >= 2);
      for (const event of seen) {
        expect(event.retryInMs).toBeGreaterThan(0);
        expect(event.reason).toBeInstanceOf(RpcError);
        expect(event.reason?.code === "timeout" || event.reason?.code === "transport", event.reason?.message).toBe(true);
        expect(event.reason?.message).toMatch(new RegExp(`within ${CONNECT_MS} ms`));
      }
      expect(listener.connections()).toBeGreaterThanOrEqual(2);
    });
  }

  it("reports an error status whose body stalls as a timeout and reconnects", async () => {
    let requests = 0;
    const server = await startLoopbackServer({
      kind: "http1",
      handler: async ({ res, closed }) => {
        requests++;
        res.writeHead(500, { "content-type": "text/plain" });
        (res as { write(chunk: string): boolean }).write("the first half of an error");
        await closed;
      },
    });
    cleanups.push(() => server.close());
    const seen = await disconnections(client(server.url, "1.1"), (s) => s.length >= 2);
    expect(seen.map((e) => e.reason?.code)).toEqual(["timeout", "timeout"]);
    expect(seen[0]?.reason?.message).toMatch(/HTTP 500 error body within 150 ms/);
    expect(requests).toBeGreaterThanOrEqual(2);
  });

  it("lets a stream whose headers arrived stay quiet for longer than the connect deadline", async () => {
    const server = await startLoopbackServer({
      kind: "http1",
      handler: async ({ res, closed }) => {
        res.writeHead(200, { "content-type": "application/connect+json" });
        const write = (status: string) => (res as { write(b: Uint8Array): boolean }).write(dataFrame({ update: { status } }));
        write("CASCADE_RUN_STATUS_RUNNING");
        // The server, not the test, waits: several connect deadlines of silence, then a frame.
        const timer = setTimeout(() => write("CASCADE_RUN_STATUS_IDLE"), CONNECT_MS * 4);
        await closed;
        clearTimeout(timer);
      },
    });
    cleanups.push(() => server.close());
    const statuses: Array<string | undefined> = [];
    const read = (async () => {
      for await (const update of client(server.url, "1.1").streamAgentStateUpdates({ conversationId: "c-1" })) {
        statuses.push(update.status);
        if (statuses.length === 2) break;
      }
    })();
    await within(read, `reading two frames (saw ${JSON.stringify(statuses)})`);
    expect(statuses).toEqual(["CASCADE_RUN_STATUS_RUNNING", "CASCADE_RUN_STATUS_IDLE"]);
  });
});

describe("HTTP/2 session setup", () => {
  const servers: Array<[string, () => Promise<Listener>]> = [
    ["TLS", () => startListener({ tls: { alpn: ["h2"] }, silent: 1, serve: h2Answering() })],
    ["h2c", () => startListener({ silent: 1, serve: h2Answering() })],
  ];
  for (const [label, start] of servers) {
    it(`drops a ${label} connection that never sends SETTINGS, so the next call opens a new one`, async () => {
      const listener = await start();
      const c = client(listener.url, "2");
      const first = await within(
        c.heartbeat({}, { timeoutMs: BOUND_MS }).then(
          () => undefined,
          (e: unknown) => e,
        ),
        "the first call",
      );
      expect(first).toBeInstanceOf(RpcError);
      expect((first as RpcError).code).toBe("transport");
      expect((first as RpcError).message).toMatch(/no HTTP\/2 SETTINGS from the server within 150 ms/);
      await within(c.heartbeat({}, { timeoutMs: BOUND_MS }), "the second call");
      expect(listener.connections()).toBe(2);
    });
  }
});
