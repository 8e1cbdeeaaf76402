/**
 * `agy-bridge serve` fan-out: one event reaching 100 SSE subscribers over real
 * loopback connections, against a raw-socket baseline that writes the same
 * bytes to 100 sockets in the same run. A second row adds a subscriber that
 * never reads, which must delay no one.
 * Goal (docs/architecture.md): p50 ≤ 10 ms to all 100; the stalled row about the same.
 */
import { connect, createServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { createApiServer } from "../src/server/http-api.js";
import { createSessionHub } from "../src/server/session-hub.js";
import { buildOpenApiDocument } from "../src/server/openapi.js";
import { createScriptedSession } from "../test/server/support/scripted-session.js";
import { measure, type BenchRow, type BenchSuite } from "./harness.js";

const SUBSCRIBERS = 100;
const TOKEN = "bench-token-bench-token-bench";

/** Subscribers that resolve `arrived(n)` once every one of them has seen event `n` (`id: <epoch>-<n>`, or a bare `n` from the baseline). */
function receivers(sockets: Socket[]) {
  const seen = new Map<number, number>();
  const waiters = new Map<number, () => void>();
  /** The first bytes the first socket got: what a wait that timed out says it saw. */
  let firstBytes = "";
  for (const socket of sockets) {
    let tail = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      if (firstBytes.length < 200) firstBytes += chunk.slice(0, 200 - firstBytes.length);
      const text = tail + chunk;
      for (const match of text.matchAll(/id: (?:[0-9a-z]+-)?(\d+)\n/g)) {
        const n = Number(match[1]);
        const count = (seen.get(n) ?? 0) + 1;
        seen.set(n, count);
        if (count === sockets.length) waiters.get(n)?.();
      }
      tail = text.slice(-64);
    });
  }
  return (n: number) =>
    new Promise<void>((resolve, reject) => {
      if ((seen.get(n) ?? 0) === sockets.length) return resolve();
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `bench: event ${n} reached ${seen.get(n) ?? 0} of ${sockets.length} subscribers within 10 s; the first bytes a subscriber got: ${JSON.stringify(firstBytes)}`,
            ),
          ),
        10_000,
      );
      waiters.set(n, () => {
        clearTimeout(timer);
        resolve();
      });
    });
}

async function openClients(port: number, request: string | undefined, count: number): Promise<Socket[]> {
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Socket>((resolve) => {
          const socket = connect(port, "127.0.0.1", () => {
            if (request !== undefined) socket.write(request);
            resolve(socket);
          });
        }),
    ),
  );
}

async function serveCase(stalled: boolean) {
  const session = createScriptedSession("bench-conv");
  const hub = createSessionHub({ list: async () => [{ conversationId: "bench-conv" }], attach: async () => session });
  await hub.refresh();
  const api = createApiServer({ hub, token: TOKEN, page: "", openapi: buildOpenApiDocument("bench") });
  await new Promise<void>((r) => api.server.listen(0, "127.0.0.1", r));
  const port = (api.server.address() as AddressInfo).port;
  const request = `GET /v1/sessions/bench-conv/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`;
  const sockets = await openClients(port, request, SUBSCRIBERS);
  const stuck = stalled ? await openClients(port, request, 1) : [];
  for (const s of stuck) s.pause();
  const arrived = receivers(sockets);
  const text = "x".repeat(2000);
  let n = 0;
  // Warm the connections (headers, the first frame) before measuring.
  session.push({ type: "user_message", conversationId: "bench-conv", trajectoryId: "t", text });
  await arrived(++n);
  const sample = await measure(
    async () => {
      session.push({ type: "user_message", conversationId: "bench-conv", trajectoryId: "t", text });
      await arrived(++n);
    },
    { warmup: 20, runs: 200 },
  );
  for (const s of [...sockets, ...stuck]) s.destroy();
  await api.close();
  await hub.close();
  return sample;
}

async function rawCase() {
  const accepted: Socket[] = [];
  const server = createServer((socket) => accepted.push(socket));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  const sockets = await openClients(port, undefined, SUBSCRIBERS);
  while (accepted.length < SUBSCRIBERS) await new Promise((r) => setImmediate(r));
  const arrived = receivers(sockets);
  const event = JSON.stringify({ type: "user_message", conversationId: "bench-conv", trajectoryId: "t", text: "x".repeat(2000) });
  let n = 0;
  const sample = await measure(
    async () => {
      const frame = `id: ${++n}\nevent: user_message\ndata: ${event}\n\n`;
      for (const s of accepted) s.write(frame);
      await arrived(n);
    },
    { warmup: 20, runs: 200 },
  );
  for (const s of [...sockets, ...accepted]) s.destroy();
  await new Promise((r) => server.close(r));
  return sample;
}

const suite: BenchSuite = {
  title: "serve: one event to 100 SSE subscribers (loopback)",
  async run(): Promise<BenchRow[]> {
    const raw = await rawCase();
    const served = await serveCase(false);
    const withStalled = await serveCase(true);
    const baseline = { name: "raw sockets, same bytes", sample: raw };
    return [
      { name: "serve → 100 subscribers", sample: served, baseline, goal: "p50 <= 10 ms", met: served.medianMs <= 10 },
      { name: "serve → 100 subscribers + 1 stalled", sample: withStalled, baseline, goal: "p50 <= 10 ms", met: withStalled.medianMs <= 10 },
    ];
  },
};

export default suite;
