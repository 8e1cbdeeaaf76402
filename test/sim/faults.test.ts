import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SimServer } from "../../src/sim/server/server.js";
import { sendTurn, startTestSim, waitForIdle } from "./support/sim-harness.js";
import { ManualTimeouts } from "./support/manual-timeouts.js";
import { eventually, openStream, unary, type StreamReader } from "./support/wire-client.js";

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
    let closed = false;
    void reader.ended.then(() => (closed = true));
    server.setFaults({});
    const live = await stream();
    // A second stream opened after the knob was lifted keeps flowing, proving frames were produced.
    await sendTurn(server, cascadeId, "Say hello in one short sentence.");
    await live.waitForFrame((f) => f.update.status === "CASCADE_RUN_STATUS_IDLE", 1);
    expect(live.frames.length).toBeGreaterThan(3);
    // The stalled one saw only its first frame, and is still open.
    expect(reader.frames).toHaveLength(1);
    expect(closed).toBe(false);
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

  it("holds unary answers for unaryDelayMs, on the injected clock", async () => {
    const clock = new ManualTimeouts(1_000_000);
    const slowServer = await startTestSim({ clock, faults: { unaryDelayMs: 5_000_000 } });
    try {
      let answered = false;
      const slow = unary(slowServer.tlsUrl, "Heartbeat", {}).then((res) => {
        answered = true;
        return res;
      });
      await eventually(
        async () => clock.heldCount(),
        (held) => held === 1,
        { what: "the prompt timeout to be armed" },
      );
      slowServer.setFaults({});
      expect((await unary(slowServer.tlsUrl, "Heartbeat", {})).status).toBe(200);
      expect(answered).toBe(false);
      expect(clock.fireHeld()).toBe(1);
      expect((await slow).status).toBe(200);
      expect(slowServer.faults).toEqual({});
    } finally {
      await slowServer.close();
    }
  });
});
