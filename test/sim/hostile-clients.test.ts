/**
 * The simulator under hostile or broken clients and broken effects, with raw
 * requests over real loopback sockets: refusals come before a body is read,
 * bodies are bounded, and a failure is reported with its reason (never the
 * CSRF token) instead of being swallowed.
 */
import { connect as netConnect } from "node:net";
import { connect as http2Connect } from "node:http2";
import { afterEach, describe, expect, it } from "vitest";
import type { AgyBridgeError } from "../../src/errors.js";
import { SERVICE_NAME } from "../../src/protocol/methods.js";
import { systemClock, type SimClock } from "../../src/sim/engine/sim-clock.js";
import type { SimServer, SimServerOptions } from "../../src/sim/server/server.js";
import { pollSteps, sendTurn, startTestSim, summaries } from "./support/sim-harness.js";
import { eventually, openStream, unary, type Json } from "./support/wire-client.js";

const servers: SimServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function sim(options: SimServerOptions = {}): Promise<SimServer> {
  const server = await startTestSim(options);
  servers.push(server);
  return server;
}

const GIB = 1024 * 1024 * 1024;

interface RawAnswer {
  head: string;
  body: string;
  /** Body bytes we had written when the answer arrived. */
  sentBodyBytes: number;
}

/**
 * Sends request headers that promise `declaredBytes` (or a chunked body), then
 * trickles body bytes until the server answers; bounded at 10 s.
 */
function rawPost(port: number, method: string, headers: Record<string, string>, declaredBytes?: number): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(port, "127.0.0.1");
    const chunked = declaredBytes === undefined;
    let sent = 0;
    let received = Buffer.alloc(0);
    let ticker: ReturnType<typeof setInterval> | undefined;
    const finish = (error?: Error): void => {
      clearTimeout(bound);
      if (ticker !== undefined) clearInterval(ticker);
      socket.destroy();
      if (error !== undefined) {
        reject(error);
        return;
      }
      const text = received.toString("latin1");
      const split = text.indexOf("\r\n\r\n");
      resolve({ head: text.slice(0, split), body: text.slice(split + 4), sentBodyBytes: sent });
    };
    const bound = setTimeout(
      () => finish(new Error(`no complete answer within 10 s after ${sent} body bytes; got ${JSON.stringify(received.toString("latin1"))}`)),
      10_000,
    );
    socket.on("connect", () => {
      const lines = [
        `POST /${SERVICE_NAME}/${method} HTTP/1.1`,
        "Host: 127.0.0.1",
        ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
        chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${declaredBytes}`,
      ];
      socket.write(`${lines.join("\r\n")}\r\n\r\n`);
      const piece = Buffer.alloc(16 * 1024, 0x20);
      ticker = setInterval(() => {
        if (socket.destroyed || !socket.writable) return;
        socket.write(chunked ? Buffer.concat([Buffer.from(`${piece.byteLength.toString(16)}\r\n`), piece, Buffer.from("\r\n")]) : piece);
        sent += piece.byteLength;
      }, 5);
    });
    socket.on("data", (chunk) => {
      received = Buffer.concat([received, chunk]);
      const text = received.toString("latin1");
      const split = text.indexOf("\r\n\r\n");
      if (split < 0) return;
      const length = /content-length: (\d+)/i.exec(text.slice(0, split));
      if (length !== null && received.byteLength >= split + 4 + Number(length[1])) finish();
    });
    socket.on("error", (error) => finish(error));
  });
}

describe("hostile request bodies", () => {
  it("answers 401 to a call without the CSRF token before reading its 1 GiB body", async () => {
    const server = await sim({ csrfToken: "s3cret-token" });
    const answer = await rawPost(server.plainPort, "Heartbeat", { "Content-Type": "application/json" }, GIB);
    expect(answer.head).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer.head).toMatch(/\r\nconnection: close/i);
    expect(JSON.parse(answer.body)).toEqual({ code: "unauthenticated", message: "missing CSRF token" });
    expect(answer.sentBodyBytes).toBeLessThan(GIB);
    // The server is still healthy for a proper client.
    expect((await unary(server.tlsUrl, "Heartbeat", {}, { headers: { "x-codeium-csrf-token": "s3cret-token" } })).status).toBe(200);
  });

  it("answers 401 over HTTP/2 while the client is still sending its body", async () => {
    const server = await sim({ csrfToken: "s3cret-token" });
    const session = http2Connect(server.tlsUrl, { rejectUnauthorized: false });
    try {
      const stream = session.request({ ":method": "POST", ":path": `/${SERVICE_NAME}/Heartbeat`, "content-type": "application/json" });
      stream.write(Buffer.alloc(32 * 1024, 0x20)); // never ended
      const status = await new Promise<number>((resolve, reject) => {
        const bound = setTimeout(() => reject(new Error("no HTTP/2 answer within 10 s")), 10_000);
        stream.on("response", (headers) => {
          clearTimeout(bound);
          resolve(Number(headers[":status"]));
        });
        stream.on("error", reject);
      });
      expect(status).toBe(401);
    } finally {
      session.destroy();
    }
  });

  it("refuses a body that declares more than the cap with 413 and a Connect error, unread", async () => {
    const server = await sim({ maxRequestBytes: 64 * 1024 });
    const answer = await rawPost(server.plainPort, "SendUserCascadeMessage", { "Content-Type": "application/json" }, GIB);
    expect(answer.head).toMatch(/^HTTP\/1\.1 413 /);
    expect(JSON.parse(answer.body)).toEqual({ code: "resource_exhausted", message: "request body larger than 65536 bytes" });
    expect(answer.sentBodyBytes).toBeLessThan(GIB);
  });

  it("stops reading a chunked body at the cap and answers 413, for unary and stream calls alike", async () => {
    const server = await sim({ maxRequestBytes: 64 * 1024 });
    for (const [method, contentType] of [
      ["SendUserCascadeMessage", "application/json"],
      ["StreamAgentStateUpdates", "application/connect+json"],
    ] as const) {
      const answer = await rawPost(server.plainPort, method, { "Content-Type": contentType });
      expect(answer.head, method).toMatch(/^HTTP\/1\.1 413 /);
      expect(JSON.parse(answer.body).code, method).toBe("resource_exhausted");
      expect(answer.sentBodyBytes, method).toBeGreaterThan(64 * 1024);
    }
    // Small calls still work.
    expect((await unary(server.plainUrl, "Heartbeat", {})).status).toBe(200);
  });
});

/** The system clock, except that timers can be made to throw, as a broken injected effect would. */
class BreakableClock implements SimClock {
  failWith: string | undefined;
  now(): number {
    return systemClock.now();
  }
  setTimeout(callback: () => void, ms: number): unknown {
    if (this.failWith !== undefined) throw new Error(this.failWith);
    return systemClock.setTimeout(callback, ms);
  }
  clearTimeout(timer: unknown): void {
    systemClock.clearTimeout(timer);
  }
}

describe("simulator failures are reported, never swallowed", () => {
  it("answers a call it cannot serve with 500 naming the reason, without the CSRF token, and tells onError", async () => {
    const clock = new BreakableClock();
    const reported: AgyBridgeError[] = [];
    const token = "tok-7f3a9c";
    const server = await sim({ clock, csrfToken: token, faults: { unaryDelayMs: 1 }, onError: (e) => reported.push(e) });
    clock.failWith = `timer wheel jammed while holding ${token}`;
    const res = await unary(server.plainUrl, "Heartbeat", {}, { headers: { "x-codeium-csrf-token": token } });
    expect(res.status).toBe(500);
    expect(res.json).toEqual({ code: "internal", message: "simulator failure: timer wheel jammed while holding [redacted]" });
    expect(reported).toHaveLength(1);
    expect(reported[0]?.code).toBe("internal");
    expect(reported[0]?.message).toContain("timer wheel jammed");
    expect(reported[0]?.message).not.toContain(token);
  });

  it("settles a turn that failed inside the simulator: its open steps become ERROR with the reason, the run goes IDLE, onError hears it", async () => {
    const clock = new BreakableClock();
    const reported: AgyBridgeError[] = [];
    const server = await sim({ clock, onError: (e) => reported.push(e) });
    const cascadeId = server.engine.activeConversationId;
    const reader = await openStream(server.tlsUrl, { conversationId: cascadeId });
    try {
      await reader.waitForFrame();
      clock.failWith = "no timers left";
      await sendTurn(server, cascadeId, "Say hello in one short sentence.");
      const summary = await eventually(
        async () => (await summaries(server))[cascadeId] as Json,
        (s) => s.status === "CASCADE_RUN_STATUS_IDLE" && (s.stepCount ?? 0) > 0,
        { what: "the failed turn to end" },
      );
      expect(summary.waitingSteps).toBeUndefined();
      const steps = await pollSteps(server, cascadeId);
      const planner = steps.find((s) => s.type === "CORTEX_STEP_TYPE_PLANNER_RESPONSE") as Json;
      expect(planner.status).toBe("CORTEX_STEP_STATUS_ERROR");
      expect(planner.error.fullError).toBe("simulator failure: no timers left");
      const open = steps.filter((s) => ["PENDING", "RUNNING", "GENERATING", "WAITING"].some((x) => s.status === `CORTEX_STEP_STATUS_${x}`));
      expect(open).toEqual([]);
      expect(reported.map((e) => e.message)).toEqual([expect.stringContaining("no timers left")]);
      // Stream clients see the step settle too.
      await reader.waitForFrame((f) => (f.update.mainTrajectoryUpdate.stepsUpdate.steps ?? []).some((s: Json) => s.status === "CORTEX_STEP_STATUS_ERROR"));
    } finally {
      reader.cancel();
    }
  });
});
