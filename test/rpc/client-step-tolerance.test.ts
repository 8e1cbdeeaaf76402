/**
 * A snapshot or stream frame with one malformed step is still read: the
 * client checks only the envelope and hands every step through, so the
 * tracker can report the bad step and map the others.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createAgyRpcClient, type AgyRpcClient } from "../../src/rpc/client.js";
import { agyLikeHandler } from "../support/connect-replies.js";
import { startLoopbackServer, type LoopbackServer } from "../support/loopback-server.js";

const good = (stepIndex: number) => ({
  type: "CORTEX_STEP_TYPE_USER_INPUT",
  status: "CORTEX_STEP_STATUS_DONE",
  metadata: { sourceTrajectoryStepInfo: { trajectoryId: "t-1", stepIndex } },
});
const bad = { type: 42, status: { done: true }, metadata: { sourceTrajectoryStepInfo: { stepIndex: 1.5 } } };

const worlds: Array<{ server: LoopbackServer; client: AgyRpcClient }> = [];
afterEach(async () => {
  for (const { server, client } of worlds.splice(0)) {
    await client.close();
    await server.close();
  }
});

async function world(routes: Parameters<typeof agyLikeHandler>[0]): Promise<AgyRpcClient> {
  const server = await startLoopbackServer({ kind: "http1", handler: agyLikeHandler(routes) });
  const client = createAgyRpcClient({ baseUrl: server.url });
  worlds.push({ server, client });
  return client;
}

describe("one malformed step", () => {
  it("does not make a snapshot unreadable", async () => {
    const steps = [good(0), bad, good(2)];
    const client = await world({ unary: { GetCascadeTrajectorySteps: () => ({ steps }) } });
    expect((await client.getCascadeTrajectorySteps({ conversationId: "c-1" })).steps).toEqual(steps);
  });

  it("does not make a stream frame unreadable", async () => {
    const update = {
      conversationId: "c-1",
      mainTrajectoryUpdate: { stepsUpdate: { indices: [0, 1, "-5"], steps: [good(0), bad, good(2)], totalLength: 3 } },
    };
    const client = await world({ stream: () => [update] });
    const seen: unknown[] = [];
    for await (const u of client.streamAgentStateUpdates({ conversationId: "c-1" })) seen.push(u);
    expect(seen).toEqual([update]);
  });
});
