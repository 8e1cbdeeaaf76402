/**
 * Completing a stream frame with the full versions of its steps, read with
 * `GetCascadeTrajectorySteps` (`stepOffset`) from a raw loopback server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTrajectoryTracker, type EventOf } from "../../src/mapper/index.js";
import type { Step, StreamUpdate } from "../../src/protocol/wire-schemas.js";
import { createAgyRpcClient, type AgyRpcClient } from "../../src/rpc/index.js";
import { completeFrame } from "../../src/session/request-completion.js";
import { replyJson } from "../support/connect-replies.js";
import { startLoopbackServer, type Handler, type LoopbackServer } from "../support/loopback-server.js";
import { CID, TID, fixture } from "../mapper/load.js";

const poll = fixture("ask_question_multi_select_waiting.json") as unknown as Step;
const INDEX = (poll.metadata as { sourceTrajectoryStepInfo: { stepIndex: number } }).sourceTrajectoryStepInfo.stepIndex;
const streamed = structuredClone(poll) as Step & { metadata: Record<string, unknown> };
delete streamed.metadata["toolCall"];
const frameOf = (steps: unknown[], indices: number[]): StreamUpdate =>
  ({ conversationId: CID, trajectoryId: TID, mainTrajectoryUpdate: { stepsUpdate: { indices, steps } } }) as StreamUpdate;

let server: LoopbackServer;
let client: AgyRpcClient;
let respond: Handler = () => undefined;
const asked: unknown[] = [];

beforeAll(async () => {
  server = await startLoopbackServer({ kind: "http1", handler: (context) => respond(context) });
  client = createAgyRpcClient({ baseUrl: server.url });
});
afterAll(async () => {
  await client.close();
  await server.close();
});

const read = async (stepOffset: number) => (await client.getCascadeTrajectorySteps({ conversationId: CID, stepOffset })).steps;

describe("completing a stream frame", () => {
  it("replaces a question without its multi-select flags by the step read at its index, keeping the frame's other steps", async () => {
    asked.length = 0;
    respond = ({ request, res }) => {
      asked.push(JSON.parse(request.body.toString("utf8")));
      replyJson(res, { steps: [poll] });
    };
    const other = fixture("stream_run_command_done.json");
    const tracker = createTrajectoryTracker({ conversationId: CID });
    const { update, diagnostics } = await completeFrame(frameOf([other, streamed], [6, INDEX]), tracker, read);
    expect(diagnostics).toEqual([]);
    expect(asked).toEqual([{ cascadeId: CID, stepOffset: INDEX }]);
    expect(update.mainTrajectoryUpdate?.stepsUpdate?.steps).toEqual([other, poll]);
    const requested = tracker.applyStreamUpdate(update).find((e): e is EventOf<"interaction_requested"> => e.type === "interaction_requested");
    expect(requested?.request).toMatchObject({ questions: [{ multiSelect: true }, { multiSelect: false }] });
  });

  it("reads nothing for a frame whose steps are complete", async () => {
    asked.length = 0;
    respond = ({ request, res }) => {
      asked.push(request.rpc);
      replyJson(res, { steps: [] });
    };
    const frame = frameOf([poll], [INDEX]);
    const out = await completeFrame(frame, createTrajectoryTracker({ conversationId: CID }), read);
    expect(out).toEqual({ update: frame, diagnostics: [] });
    expect(asked).toEqual([]);
  });

  it("passes the frame on as it came, with an incomplete_step diagnostic naming the failure, when the read fails", async () => {
    respond = ({ res }) => replyJson(res, { code: "unknown", message: "trajectory not found" }, 500);
    const frame = frameOf([streamed], [INDEX]);
    const { update, diagnostics } = await completeFrame(frame, createTrajectoryTracker({ conversationId: CID }), read);
    expect(update).toBe(frame);
    expect(diagnostics).toEqual([
      expect.objectContaining({ type: "diagnostic", code: "incomplete_step", stepIndex: INDEX, message: expect.stringContaining("trajectory not found") }),
    ]);
  });

  it("keeps the frame's version, with a diagnostic, when the page does not hold the step at that index", async () => {
    respond = ({ res }) => replyJson(res, { steps: [] });
    const frame = frameOf([streamed], [INDEX]);
    const { update, diagnostics } = await completeFrame(frame, createTrajectoryTracker({ conversationId: CID }), read);
    expect(update.mainTrajectoryUpdate?.stepsUpdate?.steps).toEqual([streamed]);
    expect(diagnostics).toEqual([expect.objectContaining({ code: "incomplete_step", message: expect.stringContaining("the snapshot did not have it") })]);
  });
});
