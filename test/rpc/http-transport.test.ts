/**
 * The client's own transport over `node:http` and `node:http2`, against real
 * loopback servers built per test: what it does with connections (kept-alive
 * sockets reused, a stopped HTTP/2 stream reset with CANCEL) and that an
 * exchange cut short fails instead of looking like a clean end.
 */
import * as http from "node:http";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { createHttpTransport, type HttpAnswer, type HttpTransport } from "../../src/rpc/http-transport.js";
import { until } from "../support/until.js";

const HEADERS = { "content-type": "application/json", "content-length": "2" };
const PAYLOAD = new TextEncoder().encode("{}");

interface World<S> {
  server: S;
  transport: HttpTransport;
  close(): Promise<void>;
}

async function listen(server: http.Server | http2.Http2Server): Promise<URL> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
}

async function http1World(handler: http.RequestListener): Promise<World<http.Server> & { connections: () => number }> {
  const server = http.createServer(handler);
  let connections = 0;
  server.on("connection", () => connections++);
  const url = await listen(server);
  const transport = createHttpTransport({ url, httpVersion: "1.1", pin: undefined, connectTimeoutMs: 5_000 });
  return {
    server,
    transport,
    connections: () => connections,
    async close() {
      transport.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function h2World(onStream: (stream: http2.ServerHttp2Stream) => void): Promise<World<http2.Http2Server>> {
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => sessions.add(session));
  server.on("stream", (stream) => {
    // A reset stream errors on the server's side too; the test reads what it needs from the stream itself.
    stream.on("error", () => undefined);
    onStream(stream);
  });
  const url = await listen(server);
  const transport = createHttpTransport({ url, httpVersion: "2", pin: undefined, connectTimeoutMs: 5_000 });
  return {
    server,
    transport,
    async close() {
      transport.close();
      for (const session of sessions) session.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function text(answer: HttpAnswer): Promise<string> {
  let out = "";
  for await (const chunk of answer.body) out += Buffer.from(chunk).toString("utf8");
  return out;
}

async function failureOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected the exchange to fail, and it succeeded");
}

describe("HTTP/1.1 transport", () => {
  it("reuses one kept-alive connection for calls made one after another", async () => {
    const world = await http1World((_req, res) => res.end('{"ok":true}'));
    try {
      const signal = new AbortController().signal;
      for (let i = 0; i < 3; i++) {
        const answer = await world.transport.post("/m", HEADERS, PAYLOAD, signal);
        expect(await text(answer)).toBe('{"ok":true}');
      }
      expect(world.connections()).toBe(1);
    } finally {
      await world.close();
    }
  });

  it("sends the path, the headers and the payload as given", async () => {
    let seen: { path: string | undefined; type: string | undefined; body: string } | undefined;
    const world = await http1World((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
      req.on("end", () => {
        seen = { path: req.url, type: req.headers["content-type"], body };
        res.end();
      });
    });
    try {
      const answer = await world.transport.post("/exa.Service/Method", HEADERS, PAYLOAD, new AbortController().signal);
      expect(await text(answer)).toBe("");
      expect(seen).toEqual({ path: "/exa.Service/Method", type: "application/json", body: "{}" });
    } finally {
      await world.close();
    }
  });

  it("fails the read of a body whose connection is cut before its end", async () => {
    const world = await http1World((_req, res) => {
      res.writeHead(200, { "content-length": "100" });
      res.write("partial", () => res.socket?.destroy());
    });
    try {
      const answer = await world.transport.post("/m", HEADERS, PAYLOAD, new AbortController().signal);
      expect(answer.status).toBe(200);
      await expect(text(answer)).rejects.toThrow();
    } finally {
      await world.close();
    }
  });

  it("rejects when the server closes the connection without answering", async () => {
    const world = await http1World((req) => req.socket.destroy());
    try {
      const error = await failureOf(world.transport.post("/m", HEADERS, PAYLOAD, new AbortController().signal));
      expect(error.message).toMatch(/socket hang up|closed the connection/);
    } finally {
      await world.close();
    }
  });

  it("fails a held body with the signal's reason when the signal fires", async () => {
    const world = await http1World((_req, res) => {
      res.writeHead(200);
      res.write("first");
    });
    try {
      const controller = new AbortController();
      const answer = await world.transport.post("/m", HEADERS, PAYLOAD, controller.signal);
      const chunks = answer.body[Symbol.asyncIterator]();
      expect(Buffer.from((await chunks.next()).value as Uint8Array).toString("utf8")).toBe("first");
      const pending = chunks.next();
      controller.abort(new Error("stopped by the test"));
      expect((await failureOf(pending)).message).toBe("stopped by the test");
    } finally {
      await world.close();
    }
  });
});

describe("HTTP/2 transport", () => {
  it("resets a stream the caller stops with CANCEL, and the server sees it", async () => {
    const codes: number[] = [];
    const world = await h2World((stream) => {
      stream.respond({ ":status": 200 });
      stream.write("first");
      stream.on("close", () => codes.push(stream.rstCode));
    });
    try {
      const controller = new AbortController();
      const answer = await world.transport.post("/m", HEADERS, PAYLOAD, controller.signal);
      expect(answer.status).toBe(200);
      const chunks = answer.body[Symbol.asyncIterator]();
      await chunks.next();
      const pending = chunks.next();
      controller.abort(new Error("stopped by the test"));
      expect((await failureOf(pending)).message).toBe("stopped by the test");
      await until(() => (codes.length === 1 ? true : undefined), "the server's stream to close", { ms: 5_000, everyMs: 5, seen: () => `codes ${codes}` });
      expect(codes).toEqual([http2.constants.NGHTTP2_CANCEL]);
    } finally {
      await world.close();
    }
  });

  it("rejects when the server resets the stream before answering", async () => {
    const world = await h2World((stream) => stream.close(http2.constants.NGHTTP2_REFUSED_STREAM));
    try {
      const error = await failureOf(world.transport.post("/m", HEADERS, PAYLOAD, new AbortController().signal));
      expect(error.message).toMatch(/NGHTTP2_REFUSED_STREAM|code 7/);
    } finally {
      await world.close();
    }
  });

  it("runs calls one after another on one session", async () => {
    let sessions = 0;
    const world = await h2World((stream) => {
      stream.respond({ ":status": 200 });
      stream.end("ok");
    });
    world.server.on("session", () => sessions++);
    try {
      for (let i = 0; i < 3; i++) {
        expect(await text(await world.transport.post("/m", HEADERS, PAYLOAD, new AbortController().signal))).toBe("ok");
      }
      expect(sessions).toBe(1);
    } finally {
      await world.close();
    }
  });
});
