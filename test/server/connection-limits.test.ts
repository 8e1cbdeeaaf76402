import { mkdtemp, readFile, rm } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startApiHarness, TEST_TOKEN, type ApiHarness } from "./support/api-harness.js";
import { userMessage } from "./support/scripted-session.js";
import { startServeProcess, type ServeProcess } from "./support/serve-process.js";
import { openSse } from "./support/sse-client.js";
import { until } from "../support/until.js";

let harness: ApiHarness | undefined;
let serve: ServeProcess | undefined;
let dir: string | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await harness?.close();
  await serve?.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  harness = undefined;
  serve = undefined;
  dir = undefined;
});

/** Opens `count` sockets that send `bytes` (maybe nothing) and then idle; resolves once each is connected or refused. */
async function idleSockets(port: number, count: number, bytes = ""): Promise<Socket[]> {
  const opened = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Socket>((resolve) => {
          const socket = connect(port, "127.0.0.1");
          sockets.push(socket);
          socket.on("error", () => undefined);
          socket.resume();
          socket.once("connect", () => {
            if (bytes !== "") socket.write(bytes);
            resolve(socket);
          });
          socket.once("close", () => resolve(socket));
        }),
    ),
  );
  return opened;
}

function closedWithin(socket: Socket, ms: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (socket.destroyed || socket.readyState === "closed") return resolve();
    const timer = setTimeout(() => reject(new Error(`${what} was still open after ${ms} ms`)), ms);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

describe("serve under a flood of idle connections", () => {
  it("cuts a silent socket and one stuck mid-header once the header deadline passes", async () => {
    harness = await startApiHarness({ timeouts: { headersMs: 300, requestMs: 600, checkIntervalMs: 50 } });
    const port = Number(new URL(harness.url).port);
    const [silent] = await idleSockets(port, 1);
    const [halfHeader] = await idleSockets(port, 1, "GET /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    await closedWithin(silent!, 10_000, "a socket that sent nothing");
    await closedWithin(halfHeader!, 10_000, "a socket that sent half a header");
  });

  it("keeps an event stream open long past the request deadline (it covers receiving the request only)", async () => {
    harness = await startApiHarness({ heartbeatMs: 50, timeouts: { headersMs: 200, requestMs: 300, keepAliveMs: 200, checkIntervalMs: 50 } });
    const h = harness;
    const session = h.addSession("conv-a");
    await h.hub.refresh();
    const stream = await openSse(`${h.url}/v1/sessions/conv-a/events`, { authorization: `Bearer ${TEST_TOKEN}` });
    // Twenty heartbeats: over three times the request deadline has passed.
    await stream.until((c) => c.comments.filter((x) => x === "keep-alive").length >= 20, "twenty heartbeats");
    session.push(userMessage("conv-a", "later"));
    await stream.until((c) => c.messages.length === 1, "the event after the deadlines");
    expect(stream.ended).toBe(false);
    stream.close();
  });

  it("uses deadlines of seconds by default, not Node's 60 s checked every 30 s", async () => {
    harness = await startApiHarness();
    const { server } = harness.api;
    expect(server.headersTimeout).toBe(10_000);
    expect(server.requestTimeout).toBe(30_000);
    expect(server.keepAliveTimeout).toBe(5_000);
  });

  it("keeps its connections under the cap by pushing out the oldest idle ones, and still answers the bot and keeps its stream", async () => {
    harness = await startApiHarness({ connectionLimits: { perAddress: 20, total: 30 } });
    const h = harness;
    const session = h.addSession("conv-a");
    await h.hub.refresh();
    const stream = await openSse(`${h.url}/v1/sessions/conv-a/events`, { authorization: `Bearer ${TEST_TOKEN}` });
    const port = Number(new URL(h.url).port);
    await idleSockets(port, 200);
    // A client's connect completes in the kernel's backlog: wait for the server to have taken all 201.
    await until(() => h.api.connections.open + h.api.connections.shed >= 201, "the server to take every connection (201)", {
      ms: 10_000,
      everyMs: 20,
      seen: () => `open ${h.api.connections.open}, shed ${h.api.connections.shed}`,
    });
    expect(h.api.connections.open).toBeLessThanOrEqual(30);
    expect(h.api.connections.shed).toBeGreaterThanOrEqual(170);
    const res = await h.fetch("/v1/sessions");
    expect(res.status).toBe(200);
    session.push(userMessage("conv-a", "still streaming"));
    await stream.until((c) => c.messages.length === 1, "the event on the stream opened before the flood");
    stream.close();
  });

  it("reports an accept failure (EMFILE) to its owner and keeps serving instead of throwing", async () => {
    const reported: string[] = [];
    harness = await startApiHarness({ onServerError: (error) => reported.push(error.code ?? "?") });
    const failure = Object.assign(new Error("accept EMFILE"), { code: "EMFILE", syscall: "accept" });
    expect(() => harness!.api.server.emit("error", failure)).not.toThrow();
    expect(reported).toEqual(["EMFILE"]);
    expect((await harness.fetch("/v1/sessions")).status).toBe(200);
  });

  it("survives 2,000 idle tokenless sockets with 1,024 file descriptors and answers an authenticated request", { timeout: 120_000 }, async () => {
    // The test itself holds the 2,000 client ends: it needs that many descriptors of its own.
    const own = /^Max open files\s+(\d+|unlimited)/m.exec(await readFile("/proc/self/limits", "utf8"))?.[1] ?? "0";
    if (own !== "unlimited" && Number(own) < 2500)
      throw new Error(`this test needs 2,500 open files but the limit is ${own}; raise it (ulimit -n 4096) and run it again`);
    dir = await mkdtemp(join(tmpdir(), "agyb-flood-"));
    serve = await startServeProcess({ configHome: dir, args: ["--refresh-ms", "60000"], fileLimit: 1024 });
    const port = Number(new URL(serve.url).port);
    await idleSockets(port, 2000);
    const res = await fetch(`${serve.url}/v1/sessions`, { headers: { authorization: `Bearer ${serve.token}` }, signal: AbortSignal.timeout(20_000) });
    expect(res.status, serve.stderr()).toBe(200);
    expect(serve.exited(), serve.stderr()).toBeUndefined();
    expect(serve.stderr()).not.toMatch(/EMFILE|Error:/);
  });
});
