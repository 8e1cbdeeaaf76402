/**
 * `StreamAgentStateUpdates` as agy serves it (connect server-stream,
 * spike-notes §1.5, §3.4, §10.5): the request must be one envelope; the first
 * data frame replays the existing steps, later frames carry only the changed
 * steps with their `indices`. A gate's move to WAITING is one frame; nothing
 * follows while it is parked, and a gate parked silently (spike-notes §5.2)
 * gets no frame at all. What a frame carries depends on the persona
 * (`persona.ts`): only agy 1.2.x adds the `fullyIdle` and
 * `mainTrajectoryUpdate.status` fields.
 */
import { FLAG_COMPRESSED, FLAG_END_STREAM, encodeJsonEnvelope } from "../../protocol/envelope.js";
import type { SimConversation } from "../engine/conversation.js";
import type { SimEngine } from "../engine/engine.js";
import type { AgyPersona } from "../engine/persona.js";
import type { SimFaults } from "./faults.js";
import { abortResponse, writeChunk, type SimResponse } from "./http-edge.js";
import { streamProjection } from "../engine/projection.js";
import type { WireStep } from "../engine/step-factory.js";
import { asIndex, asObject, asString, isObject, type JsonObject } from "../../protocol/json.js";

export interface StreamContext {
  engine: SimEngine;
  persona: AgyPersona;
  faults: () => SimFaults;
  /** Live subscriptions by `subscriberId`; the value closes that subscription. */
  subscribers: Map<string, () => void>;
  /** Streams following a conversation right now, by conversation id. */
  open: Map<string, number>;
}

interface ConnectErrorBody {
  code: string;
  message: string;
}

/** Answers one stream call whose request `body` was already read (and bounded) by the server. */
export function handleStream(body: Buffer, res: SimResponse, ctx: StreamContext): void {
  res.writeHead(200, { "content-type": "application/connect+json" });
  const endStream = (error?: ConnectErrorBody): void => {
    res.end(encodeJsonEnvelope(FLAG_END_STREAM, error === undefined ? {} : { error }));
  };

  const request = parseEnvelope(body);
  if ("error" in request) {
    endStream(request.error);
    return;
  }
  const conversationId = asString(request.value.conversationId);
  const conv = conversationId === undefined ? undefined : ctx.engine.conversation(conversationId);
  if (conv === undefined) {
    endStream({ code: "unknown", message: "trajectory not found" });
    return;
  }

  // Knobs are fixed per stream when it opens, so a stalled stream stays stalled.
  const faults = { ...ctx.faults() };
  let frames = 0;
  let finished = false;
  const cleanup = (): void => {
    if (finished) return;
    finished = true;
    unsubscribe();
    ctx.open.set(conv.id, (ctx.open.get(conv.id) ?? 1) - 1);
    if (subscriberId !== undefined && ctx.subscribers.get(subscriberId) === closeByRepeat) ctx.subscribers.delete(subscriberId);
  };
  const closeByRepeat = (): void => {
    if (finished) return;
    cleanup();
    endStream({ code: "canceled", message: "subscription closed by repeat id" });
  };

  const send = (indices: number[]): void => {
    if (finished) return;
    if (faults.stallStreamAfterFrames !== undefined && frames >= faults.stallStreamAfterFrames) return;
    const bytes = encodeJsonEnvelope(0, frameOf(conv, indices, ctx.persona));
    if (faults.closeMidFrameAfterFrames !== undefined && frames >= faults.closeMidFrameAfterFrames) {
      cleanup();
      writeChunk(res, bytes.subarray(0, Math.max(1, Math.floor(bytes.byteLength / 2))), () => abortResponse(res));
      return;
    }
    frames += 1;
    if (faults.dropStreamAfterFrames !== undefined && frames >= faults.dropStreamAfterFrames) {
      cleanup();
      writeChunk(res, bytes, () => abortResponse(res));
      return;
    }
    writeChunk(res, bytes);
  };

  // Every change is one frame, the WAITING move of a gate included; a quiet change (a gate
  // parked silently, spike-notes §5.2) is none. A stream opened later still replays it.
  const onChange = (indices: number[], quiet: boolean): void => {
    if (quiet) return;
    send(indices);
  };

  const subscriberId = asString(request.value.subscriberId) || undefined;
  if (subscriberId !== undefined) {
    ctx.subscribers.get(subscriberId)?.();
    ctx.subscribers.set(subscriberId, closeByRepeat);
  }
  const unsubscribe = conv.subscribe(onChange);
  ctx.open.set(conv.id, (ctx.open.get(conv.id) ?? 0) + 1);
  res.on("close", cleanup);

  // A persona without page bounds drops the field as unknown (spike-notes §1.2, §11.6) and replays everything.
  const bounds = (ctx.persona.initialPageBounds ? asObject(request.value.initialStepsPageBounds) : undefined) ?? {};
  const start = asIndex(bounds.startIndex) ?? 0;
  const end = Math.min(conv.steps.length, asIndex(bounds.endIndexExclusive) ?? conv.steps.length);
  const initial: number[] = [];
  for (let i = start; i < end; i += 1) initial.push(i);
  send(initial);
}

function parseEnvelope(body: Buffer): { value: JsonObject } | { error: ConnectErrorBody } {
  // A bare-JSON body is read as a frame header: bytes 1..4 become the promised length (agy 1.0.10, live).
  const promised = body.byteLength >= 5 ? body.readUInt32BE(1) : 0;
  const got = Math.max(0, body.byteLength - 5);
  if (body.byteLength < 5 || promised !== got) {
    return { error: { code: "invalid_argument", message: `protocol error: promised ${promised} bytes in enveloped message, got ${got} bytes` } };
  }
  if (((body[0] ?? 0) & FLAG_COMPRESSED) !== 0) {
    return { error: { code: "internal", message: "protocol error: received compressed message without compression support" } };
  }
  try {
    const value: unknown = JSON.parse(body.subarray(5).toString("utf8"));
    if (!isObject(value)) throw new Error("not an object");
    return { value };
  } catch (error) {
    return { error: { code: "invalid_argument", message: `unmarshal message: ${String(error)}` } };
  }
}

/**
 * One data frame; zero values are omitted as proto-JSON does (`fullyIdle`
 * only when true). The 1.0.10 and 1.1 personas send no `fullyIdle` and no
 * `mainTrajectoryUpdate.status`: only a 1.2.x client reports them.
 */
function frameOf(conv: SimConversation, indices: number[], persona: AgyPersona): JsonObject {
  const stepsUpdate: JsonObject = {};
  if (indices.length > 0) {
    stepsUpdate.indices = indices;
    stepsUpdate.steps = indices.map((i) => streamProjection(conv.steps[i] as WireStep));
  }
  if (conv.steps.length > 0) stepsUpdate.totalLength = conv.steps.length;
  if (!persona.streamIdleFields) {
    return { update: { conversationId: conv.id, trajectoryId: conv.trajectoryId, status: conv.runStatus, mainTrajectoryUpdate: { stepsUpdate } } };
  }
  const idle = conv.fullyIdle ? { fullyIdle: true } : {};
  return {
    update: {
      conversationId: conv.id,
      trajectoryId: conv.trajectoryId,
      status: conv.runStatus,
      ...idle,
      mainTrajectoryUpdate: { stepsUpdate, status: conv.runStatus, ...idle },
    },
  };
}

/** The retired reactive stream: agy answers it with an error, never with data (spike-notes §1.6). */
export const REACTIVE_METHOD = "StreamCascadeReactiveUpdates";

/**
 * `StreamCascadeReactiveUpdates` as live agy 1.0.10 answers it: "reactive
 * state is deprecated" (spike-notes §1.6; newer builds alike, §10.4). The
 * `{"error":{…}}` wrapper is a Connect end-stream message, so it comes as
 * HTTP 200 with that one trailer frame; the code, which the facts do not
 * record, is `unknown`, connect-go's code for an uncoded error (inferred).
 */
export function sendReactiveDeprecated(res: SimResponse): void {
  res.writeHead(200, { "content-type": "application/connect+json" });
  res.end(encodeJsonEnvelope(FLAG_END_STREAM, { error: { code: "unknown", message: "reactive state is deprecated" } }));
}
