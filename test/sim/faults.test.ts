import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SimServer } from "../../src/sim/server.js";
import { sendTurn, startTestSim, waitForIdle } from "./support/sim-harness.js";
import { openStream, unary, type StreamReader } from "./support/wire-client.js";

let server: SimServer;
let cascadeId: string;
const open: StreamReader[] = [];

beforeEach(async () => {
  server = await startTestSim();
  cascadeId = server.engine.activeConversationId;
});
afterEach(async () => {
  for (const stream of open.splice(0)) stream.cancel();
  await server.close();
});

async function stream(http2 = false): Promise<StreamReader> {
  const reader = await openStream(server.tlsUrl, { conversationId: cascadeId }, { http2 });
  open.push(reader);
  return reader;
}

describe("fault knobs", () => {
  it("drops the stream without an end-stream frame after N frames", async () => {
    server.setFaults({ dropStreamAfterFrames: 2 });
    const reader = await stream();
    await sendTurn(server, cascadeId, "Say hello in one short sentence.");
    const end = await reader.ended;
    expect(end.kind).toBe("aborted");
    expect(end.trailer).toBeUndefined();
    expect(reader.frames).toHaveLength(2);
  });

  it("drops an HTTP/2 stream the same way", async () => {
    server.setFaults({ dropStreamAfterFrames: 1 });
    const reader = await stream(true);
    const end = await reader.ended;
    expect(end.kind).toBe("aborted");
    expect(reader.frames).toHaveLength(1);
  });

  it("stalls the stream after N frames while the connection stays open", async () => {
    server.setFaults({ stallStreamAfterFrames: 1 });
    const reader = await stream();
    server.setFaults({});
    const live = await stream();
    // A second stream opened after the knob was lifted keeps flowing, proving frames were produced.
    await sendTurn(server, cascadeId, "Say hello in one short sentence.");
    await live.waitForFrame((f) => f.update.fullyIdle === true, 1);
    expect(live.frames.length).toBeGreaterThan(3);
    // The stalled one saw only its first frame, and is still open.
    expect(reader.frames).toHaveLength(1);
    const state = await Promise.race([reader.ended.then(() => "ended"), Promise.resolve("open")]);
    expect(state).toBe("open");
  });

  it("closes the connection in the middle of a frame", async () => {
    server.setFaults({ closeMidFrameAfterFrames: 1 });
    const reader = await stream();
    await sendTurn(server, cascadeId, "Say hello in one short sentence.");
    const end = await reader.ended;
    expect(end.kind).toBe("aborted");
    expect(reader.frames).toHaveLength(1);
    expect(end.leftoverBytes).toBeGreaterThan(0);
  });

  it("applies fault knobs given at start", async () => {
    const faulty = await startTestSim({ faults: { dropStreamAfterFrames: 1 } });
    try {
      expect(faulty.faults).toEqual({ dropStreamAfterFrames: 1 });
      const reader = await openStream(faulty.tlsUrl, { conversationId: faulty.engine.activeConversationId });
      expect((await reader.ended).kind).toBe("aborted");
      expect(reader.frames).toHaveLength(1);
    } finally {
      await faulty.close();
    }
  });

  it("restarts on new ports, closing streams and keeping conversations", async () => {
    await sendTurn(server, cascadeId, "Say hello in one short sentence.");
    await waitForIdle(server, cascadeId);
    const oldTls = server.tlsPort;
    const oldPlain = server.plainPort;
    const reader = await stream();
    await reader.waitForFrame();
    await server.restart();
    expect((await reader.ended).kind).toBe("aborted");
    expect(server.tlsPort).not.toBe(0);
    expect([server.tlsPort, server.plainPort]).not.toEqual([oldTls, oldPlain]);
    await expect(unary(`https://127.0.0.1:${oldTls}`, "Heartbeat", {})).rejects.toThrow();
    const steps = await unary(server.tlsUrl, "GetCascadeTrajectorySteps", { cascadeId });
    expect(steps.json.steps).toHaveLength(4);
    expect((await unary(server.plainUrl, "Heartbeat", {})).status).toBe(200);
  });

  it("delays unary answers: a slow call started first finishes after a fast one", async () => {
    server.setFaults({ unaryDelayMs: 400 });
    const order: string[] = [];
    const slow = unary(server.tlsUrl, "Heartbeat", {}).then(() => order.push("slow"));
    await new Promise((resolve) => setTimeout(resolve, 20));
    server.setFaults({});
    await unary(server.tlsUrl, "Heartbeat", {}).then(() => order.push("fast"));
    await slow;
    expect(order).toEqual(["fast", "slow"]);
    expect(server.faults).toEqual({});
  });
});
