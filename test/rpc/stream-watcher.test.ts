import { afterEach, describe, expect, it } from "vitest";
import { RpcError } from "../../src/errors.js";
import { createAgyRpcClient, type AgyRpcClient } from "../../src/rpc/client.js";
import { watchAgentStateUpdates, type WatchEvent, type WatchOptions } from "../../src/rpc/stream-watcher.js";
import { dataFrame, endFrame } from "../support/connect-replies.js";
import { startLoopbackServer, type HandlerContext, type LoopbackServer } from "../support/loopback-server.js";
import { until } from "../support/until.js";

type Script = (context: HandlerContext, connection: number) => Promise<void> | void;

const started: Array<{ server: LoopbackServer; client: AgyRpcClient }> = [];
afterEach(async () => {
  for (const { server, client } of started.splice(0)) {
    await client.close();
    await server.close();
  }
});

async function setup(script: Script, csrfToken?: string) {
  let connections = 0;
  let closed = 0;
  const server = await startLoopbackServer({
    kind: "http1",
    ...(csrfToken ? { csrfToken } : {}),
    handler: async (context) => {
      connections++;
      context.closed.then(
        () => closed++,
        () => undefined,
      );
      await script(context, connections);
    },
  });
  const client = createAgyRpcClient({ baseUrl: server.url });
  started.push({ server, client });
  const subscriberIds = () => server.requests.map((r) => (JSON.parse(r.body.subarray(5).toString("utf8")) as { subscriberId: string }).subscriberId);
  return { server, client, subscriberIds, closedCount: () => closed };
}

function write(context: HandlerContext, bytes: Uint8Array): void {
  if (!context.res.headersSent) context.res.writeHead(200, { "content-type": "application/connect+json" });
  (context.res as { write(b: Uint8Array): boolean }).write(bytes);
}

const update = (status: string) => dataFrame({ update: { conversationId: "c-1", status } });

/** Collects events until `stop` says so, then aborts the watch and checks it ends. */
async function watch(client: AgyRpcClient, stop: (events: WatchEvent[]) => boolean, options: Partial<WatchOptions> = {}): Promise<WatchEvent[]> {
  const controller = new AbortController();
  const events: WatchEvent[] = [];
  for await (const event of watchAgentStateUpdates(client, {
    conversationId: "c-1",
    signal: controller.signal,
    backoff: { initialMs: 1, maxMs: 4, factor: 2 },
    ...options,
  })) {
    events.push(event);
    if (stop(events)) controller.abort();
  }
  return events;
}

const untilUpdates = (n: number) => (events: WatchEvent[]) => events.filter((e) => e.type === "update").length >= n;

describe("watchAgentStateUpdates", () => {
  it("reconnects with a new subscriberId after a clean end and announces each connection", async () => {
    const { client, subscriberIds } = await setup(async (context, n) => {
      write(context, update(n === 1 ? "CASCADE_RUN_STATUS_RUNNING" : "CASCADE_RUN_STATUS_IDLE"));
      if (n === 1) (context.res as { end(b: Uint8Array): void }).end(endFrame({}));
      else await context.closed;
    });
    const events = await watch(client, untilUpdates(2));
    const ids = subscriberIds();
    expect(events).toEqual([
      { type: "connected", subscriberId: ids[0], attempt: 1 },
      { type: "update", update: { conversationId: "c-1", status: "CASCADE_RUN_STATUS_RUNNING" } },
      { type: "disconnected", reason: undefined, retryInMs: 1 },
      { type: "connected", subscriberId: ids[1], attempt: 2 },
      { type: "update", update: { conversationId: "c-1", status: "CASCADE_RUN_STATUS_IDLE" } },
    ]);
    expect(ids[0]).not.toBe(ids[1]);
  });

  it("reconnects after the server drops the connection mid-stream, reporting why", async () => {
    const { client } = await setup(async (context, n) => {
      write(context, update("CASCADE_RUN_STATUS_RUNNING"));
      if (n === 1) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        context.destroy();
      } else await context.closed;
    });
    const events = await watch(client, untilUpdates(2));
    const dropped = events.find((e) => e.type === "disconnected");
    expect(dropped?.type === "disconnected" && dropped.reason).toBeInstanceOf(RpcError);
    expect(events.filter((e) => e.type === "connected").map((e) => e.type === "connected" && e.attempt)).toEqual([1, 2]);
  });

  it("backs off exponentially up to the cap while the server keeps failing", async () => {
    const { client } = await setup(({ res }) => {
      res.writeHead(503);
      res.end("busy");
    });
    const slept: number[] = [];
    const events = await watch(client, (es) => es.filter((e) => e.type === "disconnected").length >= 5, {
      backoff: { initialMs: 10, maxMs: 40, factor: 2 },
      sleep: async (ms) => {
        slept.push(ms);
      },
    });
    const retries = events.map((e) => (e.type === "disconnected" ? e.retryInMs : undefined)).filter((ms) => ms !== undefined);
    expect(retries).toEqual([10, 20, 40, 40, 40]);
    expect(slept).toEqual([10, 20, 40, 40]);
    expect(events.some((e) => e.type === "connected")).toBe(false);
    const first = events[0];
    expect(first?.type === "disconnected" && first.reason?.code).toBe("http_status");
  });

  it("resets the backoff after a frame arrives", async () => {
    const { client } = await setup((context, n) => {
      if (n === 3) {
        write(context, update("CASCADE_RUN_STATUS_RUNNING"));
        (context.res as { end(b: Uint8Array): void }).end(endFrame({}));
        return;
      }
      context.res.writeHead(503);
      context.res.end();
    });
    const events = await watch(client, (es) => es.filter((e) => e.type === "disconnected").length >= 4, {
      backoff: { initialMs: 10, maxMs: 1000, factor: 3 },
      sleep: async () => undefined,
    });
    const retries = events.map((e) => (e.type === "disconnected" ? e.retryInMs : undefined)).filter((ms) => ms !== undefined);
    expect(retries).toEqual([10, 30, 10, 30]);
  });

  it("reconnects when no frame arrives within the read-idle timeout", async () => {
    const { client, closedCount } = await setup(async (context) => {
      write(context, update("CASCADE_RUN_STATUS_RUNNING"));
      await context.closed;
    });
    const events = await watch(client, untilUpdates(2), { readIdleTimeoutMs: 30 });
    const dropped = events.find((e) => e.type === "disconnected");
    expect(dropped?.type === "disconnected" && dropped.reason?.code).toBe("timeout");
    expect(events.filter((e) => e.type === "connected")).toHaveLength(2);
    await until(() => closedCount() >= 2, "the server to see both streams close", { ms: 5_000, everyMs: 5, seen: () => `${closedCount()} closed` });
  });

  it("ends promptly on abort and closes the held stream", async () => {
    const { client, closedCount } = await setup(async (context) => {
      write(context, update("CASCADE_RUN_STATUS_RUNNING"));
      await context.closed;
    });
    const events = await watch(client, untilUpdates(1));
    expect(events.map((e) => e.type)).toEqual(["connected", "update"]);
    await until(() => closedCount() >= 1, "the server to see the held stream close", { ms: 5_000, everyMs: 5, seen: () => `${closedCount()} closed` });
  });

  it("stops after a 401 instead of retrying, so the caller can re-discover the token", async () => {
    const { client, server } = await setup(() => undefined, "required-token");
    const events = await watch(client, () => false);
    expect(events).toHaveLength(1);
    const only = events[0];
    expect(only?.type).toBe("disconnected");
    if (only?.type !== "disconnected") return;
    expect(only.retryInMs).toBeUndefined();
    expect(only.reason instanceof RpcError && only.reason.isUnauthenticated).toBe(true);
    expect(server.requests).toHaveLength(1);
  });
});
