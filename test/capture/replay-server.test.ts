/**
 * The replay server on a capture built by hand, through the real client over
 * loopback: snapshots and summaries follow the recorded timeline from the
 * first read, the stream sends what was recorded up to now at once and the
 * rest at its time, the screen changes with the frame that prompted it,
 * answers are refused as agy refuses a settled step, and a token is required
 * when one is given.
 */
import { describe, expect, it, onTestFinished } from "vitest";
import { createAgyRpcClient } from "../../src/rpc/client.js";
import type { ReplayCapture } from "../../src/sim/replay/capture-loader.js";
import { startReplayServer } from "../../src/sim/replay/replay-server.js";

const ID = "00000000-0000-4000-8000-000000000001";

function step(index: number, status: string): Record<string, unknown> {
  return { type: "CORTEX_STEP_TYPE_PLANNER_RESPONSE", status, metadata: { sourceTrajectoryStepInfo: { trajectoryId: "t", stepIndex: index, cascadeId: ID } } };
}

function capture(): ReplayCapture {
  return {
    conversationId: ID,
    agyVersion: null,
    snapshots: [
      { t: 0, body: { steps: [] } },
      { t: 300, body: { steps: [step(0, "CORTEX_STEP_STATUS_DONE")] } },
    ],
    frames: [
      { t: 5, frame: { update: { conversationId: ID, status: "CASCADE_RUN_STATUS_IDLE" } } },
      {
        t: 250,
        frame: {
          update: {
            conversationId: ID,
            status: "CASCADE_RUN_STATUS_RUNNING",
            mainTrajectoryUpdate: { stepsUpdate: { indices: [0], steps: [step(0, "CORTEX_STEP_STATUS_GENERATING")], totalLength: 1 } },
          },
        },
      },
    ],
    summaries: [{ t: 0, body: { trajectorySummaries: { [ID]: { status: "CASCADE_RUN_STATUS_IDLE" } } } }],
    screens: [
      { t: 1, state: "ready", text: "first screen\n" },
      { t: 260, state: "busy", text: "second screen\n" },
    ],
  };
}

describe("the replay server", () => {
  it("plays snapshots, frames and screens on the recorded timeline from the first read", async () => {
    let clock = 1_000_000;
    const server = await startReplayServer({ capture: capture(), now: () => clock });
    onTestFinished(() => server.close());
    const client = createAgyRpcClient({ baseUrl: server.tlsUrl });
    onTestFinished(() => client.close());
    const screens: string[] = [];
    server.onScreen((s) => screens.push(s));
    expect(server.screenAt()).toBe("first screen\n");
    expect((await client.getCascadeTrajectorySteps({ conversationId: ID })).steps).toEqual([]);
    clock += 100;
    const frames: unknown[] = [];
    const controller = new AbortController();
    onTestFinished(() => controller.abort());
    const reading = (async () => {
      for await (const update of client.streamAgentStateUpdates({ conversationId: ID }, { signal: controller.signal, timeoutMs: 0 })) frames.push(update);
    })().catch(() => undefined);
    await expect.poll(() => frames.length, { timeout: 5_000 }).toBe(1);
    expect(frames[0]).toEqual({ conversationId: ID, status: "CASCADE_RUN_STATUS_IDLE" });
    clock += 200; // t = 300: the running frame's time has come; its timer fires within 150 ms of real time.
    await expect.poll(() => frames.length, { timeout: 5_000 }).toBe(2);
    expect(screens).toEqual(["second screen\n"]);
    expect((await client.getCascadeTrajectorySteps({ conversationId: ID })).steps).toHaveLength(1);
    controller.abort();
    await reading;
  });

  it("refuses answers as agy refuses a settled step, and wants the token when one is given", async () => {
    const server = await startReplayServer({ capture: capture(), csrfToken: "tok-replay-123456" });
    onTestFinished(() => server.close());
    const bare = createAgyRpcClient({ baseUrl: server.plainUrl });
    onTestFinished(() => bare.close());
    await expect(bare.heartbeat({})).rejects.toMatchObject({ httpStatus: 401 });
    const client = createAgyRpcClient({ baseUrl: server.plainUrl, csrfToken: "tok-replay-123456" });
    onTestFinished(() => client.close());
    await client.heartbeat({});
    const answer = client.handleCascadeUserInteraction({ conversationId: ID, trajectoryId: "t", stepIndex: 0, permission: { allow: true } });
    await expect(answer).rejects.toMatchObject({ httpStatus: 500, isInputNotRegistered: true });
    await expect(client.getConversationMetadata({ conversationId: "other" })).rejects.toMatchObject({ isTrajectoryNotFound: true });
  });
});
