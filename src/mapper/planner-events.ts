/**
 * A PLANNER_RESPONSE step: its deltas while GENERATING, and when it settles
 * the committed `message` (or failure marker), the running `usage` totals and
 * the turn's closing edge (docs/events.md, `message`, `usage`, `status`).
 */
import { STOP_REASON } from "../protocol/wire-names.js";
import type { EventOf } from "./events.js";
import type { EventSink } from "./event-sink.js";
import { failureDetail } from "./failure-detail.js";
import { messageIdFor } from "./ids.js";
import type { LiveStep } from "./live-step.js";
import { commitDeltas, generatingDeltas } from "./planner-deltas.js";
import { asString, plannerText, type JsonObject } from "./step-access.js";
import type { StepFields } from "./step-check.js";
import type { TurnState } from "./turn-state.js";
import { addUsage, newUsageTotals } from "./usage-totals.js";

/** Statuses of a planner stopped before it finished (a cancel, an interrupt, a `/clear`). */
const STOPPED = new Set(["CANCELED", "INTERRUPTED", "CLEARED"]);

/** Stop reasons of a complete answer; any other is carried on the `message`. */
const NORMAL_STOPS = new Set<string>([STOP_REASON.UNSPECIFIED, STOP_REASON.STOP_PATTERN]);

/** The planner steps of one tracker, with its usage totals. */
export class PlannerEvents {
  #usage = newUsageTotals();

  constructor(
    readonly sink: EventSink,
    readonly turn: TurnState,
  ) {}

  /** A GENERATING version of a planner with a known index; `body` is its `plannerResponse`. */
  generating(body: JsonObject | undefined, state: LiveStep, trajectoryId: string, stepIndex: number): void {
    generatingDeltas(this.sink, body, state, trajectoryId, stepIndex);
  }

  /** The first settled version of a planner; `state` is its live state when it was seen before. */
  settled(raw: JsonObject, fields: StepFields, state: LiveStep | undefined, trajectoryId: string, stepIndex: number): void {
    const sink = this.sink;
    const { body, status } = fields;
    const text = plannerText(body);
    const messageId = messageIdFor(trajectoryId, stepIndex);
    commitDeltas(sink, body, text, state, status, trajectoryId, stepIndex, messageId);
    const conversationId = sink.conversationId;
    const where = { trajectoryId, stepIndex };
    const stop = asString(body?.["stopReason"]);
    const stopReason = stop !== undefined && stop !== "" && !NORMAL_STOPS.has(stop) ? stop : undefined;
    if (status === "ERROR") {
      const detail = failureDetail(raw, body);
      const marker = `[agy-bridge: the model did not complete this turn (status ERROR)${detail === undefined ? "" : `: ${detail}`}]`;
      const failed: EventOf<"message"> = { type: "message", conversationId, trajectoryId, stepIndex, messageId, role: "assistant", text: marker, failed: true };
      if (stopReason !== undefined) failed.stopReason = stopReason;
      sink.push(failed);
      this.turn.end("failed", "turn_failed", where);
      return;
    }
    const hasText = text.trim() !== "";
    if (status !== "DONE") {
      // Stopped mid-answer: what agy committed of it, marked (a live reader saw it as deltas; a replay sees only this).
      if (hasText && STOPPED.has(status)) {
        const partial: EventOf<"message"> = { type: "message", conversationId, trajectoryId, stepIndex, messageId, role: "assistant", text, failed: false };
        if (stopReason !== undefined) partial.stopReason = stopReason;
        partial.interrupted = true;
        sink.push(partial);
      }
      return;
    }
    if (hasText) {
      const message: EventOf<"message"> = { type: "message", conversationId, trajectoryId, stepIndex, messageId, role: "assistant", text, failed: false };
      if (stopReason !== undefined) message.stopReason = stopReason;
      sink.push(message);
    }
    if (fields.modelUsage !== undefined) this.#usageFrom(fields.modelUsage, where);
    const toolCalls = body?.["toolCalls"];
    const dispatches = Array.isArray(toolCalls) && toolCalls.length > 0;
    if (hasText && !dispatches) this.turn.end("idle", "turn_completed", where);
  }

  #usageFrom(usage: JsonObject, where: { trajectoryId: string; stepIndex: number }): void {
    const sink = this.sink;
    const totals = this.#usage;
    const problems = addUsage(totals, usage);
    if (problems !== undefined) {
      for (const message of problems) sink.diagnostic("invalid_number", `Step ${where.stepIndex}: ${message}`, where);
    }
    const model = asString(usage["model"]);
    const event: EventOf<"usage"> = {
      type: "usage",
      conversationId: sink.conversationId,
      trajectoryId: where.trajectoryId,
      stepIndex: where.stepIndex,
      inputTokens: totals.inputTokens,
      outputTokens: totals.outputTokens,
      thinkingOutputTokens: totals.thinkingOutputTokens,
      cacheReadTokens: totals.cacheReadTokens,
    };
    if (model !== undefined && model !== "") event.model = model;
    sink.push(event);
  }
}
