import { createServer } from "node:net";
import { beforeAll, describe, expect, it } from "vitest";
import { AgyBridgeError, RpcError } from "../../src/errors.js";
import { createAgyRpcClient } from "../../src/rpc/client.js";
import { assertLoopbackUrl } from "../../src/rpc/loopback.js";
import { createSelfSignedCertificate, type SelfSignedCertificate } from "../../src/sim/server/certificate.js";
import { agyLikeHandler, dataFrame, replyJson } from "../support/connect-replies.js";
import { startLoopbackServer } from "../support/loopback-server.js";
import { useRespondingServer } from "../support/responding-server.js";
import { collect, rpcFailure } from "../support/rpc-failure.js";
import { until } from "../support/until.js";

const TOKEN = "csrf-0d1e2f-very-secret";

async function failure(promise: Promise<unknown>): Promise<RpcError> {
  const error = await rpcFailure(promise);
  // Whatever went wrong, the token never shows.
  expect(`${error.message} ${error.serverMessage ?? ""} ${String(error.cause ?? "")}`).not.toContain(TOKEN);
  return error;
}

/** Waits for `condition`, failing with `seen()` after a few seconds. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe("loopback guard", () => {
  it("refuses non-loopback URLs before opening any socket", () => {
    for (const baseUrl of [
      "https://10.0.0.1:1/",
      "http://192.168.1.5:8080",
      "https://example.com",
      "https://[::ffff:10.0.0.1]:1",
      "https://[2001:db8::1]:1",
      "https://128.0.0.1:1",
      "ftp://127.0.0.1:21",
      "not a url",
    ]) {
      let thrown: unknown;
      try {
        createAgyRpcClient({ baseUrl, csrfToken: TOKEN });
      } catch (e) {
        thrown = e;
      }
      expect(thrown, baseUrl).toBeInstanceOf(AgyBridgeError);
      expect((thrown as AgyBridgeError).code).toBe("not_loopback");
      expect((thrown as Error).message).not.toContain(TOKEN);
    }
  });

  it("explains that loopback is what makes unverified TLS safe", () => {
    expect(() => assertLoopbackUrl("https://10.0.0.1:1/")).toThrow(/TLS verification is off/);
  });

  it("answers a value that is not a URL at all with a typed error, not a TypeError", () => {
    for (const value of [undefined, null, 42, {}]) {
      let thrown: unknown;
      try {
        assertLoopbackUrl(value as unknown as string);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, String(value)).toBeInstanceOf(AgyBridgeError);
      expect((thrown as AgyBridgeError).code).toBe("not_loopback");
    }
  });

  it("accepts every loopback spelling", () => {
    for (const url of ["https://127.0.0.1:1", "http://127.200.3.4:9", "https://localhost:1", "https://[::1]:1", "http://[::ffff:127.0.0.1]:1"]) {
      expect(assertLoopbackUrl(url).protocol, url).toMatch(/^https?:$/);
    }
  });
});

describe("unary failures", () => {
  const rpc = useRespondingServer(TOKEN);

  it("keeps a plain-text 500 body verbatim so callers can match 'input not registered'", async () => {
    rpc.respond = ({ res }) => {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end("input not registered for step 14");
    };
    const error = await failure(
      rpc.client.handleCascadeUserInteraction({ conversationId: "c", trajectoryId: "t", stepIndex: 14, permission: { allow: true } }),
    );
    expect(error.code).toBe("http_status");
    expect(error.httpStatus).toBe(500);
    expect(error.method).toBe("HandleCascadeUserInteraction");
    expect(error.serverMessage).toBe("input not registered for step 14");
    expect(error.isInputNotRegistered).toBe(true);
    expect(error.message).toMatch(/input not registered for step 14 \(the step is no longer waiting.*re-read the steps/);
  });

  it("takes the message and code of a Connect JSON error body", async () => {
    rpc.respond = ({ res }) => replyJson(res, { code: "unknown", message: "trajectory not found" }, 500);
    const error = await failure(rpc.client.getConversationMetadata({ conversationId: "c" }));
    expect(error.connectCode).toBe("unknown");
    expect(error.serverMessage).toBe("trajectory not found");
    expect(error.message).toContain("trajectory not found (this language server does not host that conversation)");
    expect(error.isTrajectoryNotFound).toBe(true);
  });

  it("scrubs the token from a server message that echoes it", async () => {
    rpc.respond = ({ res, request }) =>
      replyJson(res, { code: "unauthenticated", message: `bad token ${String(request.headers["x-codeium-csrf-token"])}` }, 401);
    const error = await failure(rpc.client.heartbeat());
    expect(error.isUnauthenticated).toBe(true);
    expect(error.serverMessage).toBe("bad token [redacted]");
  });

  it("reports a 200 whose body is not JSON as a protocol error", async () => {
    rpc.respond = ({ res }) => replyJson(res, "<html>", 200);
    const error = await failure(rpc.client.getCascadeTrajectorySteps({ conversationId: "c" }));
    expect(error.code).toBe("protocol");
  });

  it("reports a steps answer of the wrong shape as a protocol error", async () => {
    rpc.respond = ({ res }) => replyJson(res, { steps: "many" });
    const error = await failure(rpc.client.getCascadeTrajectorySteps({ conversationId: "c" }));
    expect(error.code).toBe("protocol");
    expect(error.message).toMatch(/at steps/);
  });

  it("wraps a refused connection as a transport error", async () => {
    const port = await closedPort();
    const offline = createAgyRpcClient({ baseUrl: `http://127.0.0.1:${port}`, csrfToken: TOKEN });
    const error = await failure(offline.heartbeat());
    await offline.close();
    expect(error.code).toBe("transport");
    expect(error.message).toMatch(/ECONNREFUSED/);
  });

  it("times out a unary call that gets no answer", async () => {
    rpc.respond = () => undefined;
    const error = await failure(rpc.client.getCascadeTrajectorySteps({ conversationId: "c" }, { timeoutMs: 50 }));
    expect(error.code).toBe("timeout");
  });

  it("applies the per-class default deadline from the options", async () => {
    rpc.respond = () => undefined;
    const quick = createAgyRpcClient({ baseUrl: rpc.server.url, timeouts: { probe: 40 } });
    const error = await failure(quick.heartbeat());
    await quick.close();
    expect(error.code).toBe("timeout");
  });

  it("stops a unary call when the caller aborts it", async () => {
    let arrived!: () => void;
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    rpc.respond = () => arrived();
    const controller = new AbortController();
    const pending = rpc.client.getCascadeTrajectorySteps({ conversationId: "c" }, { signal: controller.signal });
    await reached;
    controller.abort();
    const error = await failure(pending);
    expect(error.code).toBe("aborted");
  });

  it("refuses to start a call whose signal already fired", async () => {
    const seen = rpc.server.requests.length;
    const error = await failure(rpc.client.heartbeat({}, { signal: AbortSignal.abort() }));
    expect(error.code).toBe("aborted");
    expect(rpc.server.requests.length).toBe(seen);
  });
});

describe("stream stops", () => {
  /** An h2c server holding every stream open after one frame, counting its own streams. */
  async function holdingServer() {
    let opened = 0;
    let closed = 0;
    const server = await startLoopbackServer({
      kind: "h2c",
      handler: async ({ res, closed: gone }) => {
        opened++;
        res.writeHead(200, { "content-type": "application/connect+json" });
        (res as { write(b: Uint8Array): boolean }).write(dataFrame({ update: { status: "CASCADE_RUN_STATUS_RUNNING" } }));
        await gone;
        closed++;
      },
    });
    const client = createAgyRpcClient({ baseUrl: server.url, httpVersion: "2", csrfToken: TOKEN });
    return {
      client,
      opened: () => opened,
      closed: () => closed,
      async close() {
        await client.close();
        await server.close();
      },
    };
  }

  it("ends a held stream when the caller aborts, and the server sees it close", async () => {
    const world = await holdingServer();
    try {
      const controller = new AbortController();
      const iterator = world.client.streamAgentStateUpdates({ conversationId: "c" }, { signal: controller.signal })[Symbol.asyncIterator]();
      expect((await iterator.next()).value).toEqual({ status: "CASCADE_RUN_STATUS_RUNNING" });
      const pending = iterator.next();
      controller.abort();
      const error = await failure(pending);
      expect(error.code).toBe("aborted");
      await until(() => world.closed() === 1, "the server to see the stream close", {
        ms: 5_000,
        everyMs: 5,
        seen: () => `${world.closed()} of ${world.opened()} streams closed`,
      });
    } finally {
      await world.close();
    }
  });

  it("closes the request when the consumer leaves the loop early", async () => {
    const world = await holdingServer();
    try {
      for await (const update of world.client.streamAgentStateUpdates({ conversationId: "c" })) {
        expect(update.status).toBe("CASCADE_RUN_STATUS_RUNNING");
        break;
      }
      await until(() => world.closed() === 1, "the server to see the stream close", {
        ms: 5_000,
        everyMs: 5,
        seen: () => `${world.closed()} of ${world.opened()} streams closed`,
      });
      expect(world.opened()).toBe(1);
    } finally {
      await world.close();
    }
  });

  it("applies a whole-call deadline to a stream when one is given", async () => {
    const world = await holdingServer();
    try {
      const error = await failure(collect(world.client.streamAgentStateUpdates({ conversationId: "c" }, { timeoutMs: 50 })));
      expect(error.code).toBe("timeout");
    } finally {
      await world.close();
    }
  });

  it("aborts streams in flight when the client closes", async () => {
    const world = await holdingServer();
    try {
      const iterator = world.client.streamAgentStateUpdates({ conversationId: "c" })[Symbol.asyncIterator]();
      await iterator.next();
      const pending = iterator.next();
      await world.client.close();
      const error = await failure(pending);
      expect(error.code).toBe("aborted");
    } finally {
      await world.close();
    }
  });
});

describe("pin-first-seen TLS", () => {
  let first: SelfSignedCertificate;
  let second: SelfSignedCertificate;
  beforeAll(async () => {
    [first, second] = await Promise.all([createSelfSignedCertificate(), createSelfSignedCertificate()]);
  });

  for (const httpVersion of ["1.1", "2"] as const) {
    it(`refuses a different certificate later in the client's life (HTTP/${httpVersion})`, async () => {
      const server = await startLoopbackServer({
        kind: "tls",
        certificate: first,
        handler: agyLikeHandler({ unary: { Heartbeat: () => ({}) } }),
      });
      const client = createAgyRpcClient({ baseUrl: server.url, httpVersion, csrfToken: TOKEN });
      const lax = createAgyRpcClient({ baseUrl: server.url, httpVersion, tls: "insecure" });
      try {
        await client.heartbeat();
        await lax.heartbeat();
        server.useCertificate(second);
        server.dropConnections();
        const seen = server.requests.length;
        // The first call after the drop may still meet the dead pooled connection
        // (EPIPE, refused stream); the one after it must open a new connection.
        let error = await failure(client.heartbeat());
        for (let attempt = 0; attempt < 3 && !/different certificate/.test(error.message); attempt++) {
          error = await failure(client.heartbeat());
        }
        expect(error.code).toBe("transport");
        expect(error.message).toMatch(/different certificate/);
        // The request (and its token) never reached the impostor.
        expect(server.requests.length).toBe(seen);
        await expect(lax.heartbeat()).resolves.toBeUndefined();
      } finally {
        await client.close();
        await lax.close();
        await server.close();
      }
    });
  }
});
