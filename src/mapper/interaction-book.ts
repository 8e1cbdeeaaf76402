/**
 * Open interactions: a WAITING step with a `requestedInteraction` is
 * requested once, and resolved exactly once when its step leaves WAITING or
 * its slot settles otherwise. Keyed by the step's live state, which lives in
 * the same slot as the step, so whatever settles a slot can close the
 * interaction recorded for it.
 *
 * A step first seen settled that still carries its `requestedInteraction`
 * (agy keeps the block after the wait) waited on the user at some point: it
 * is requested and resolved at once, so a replay of the history shows every
 * gate and how it ended, as a live reading did.
 */
import type { InteractionOutcome, InteractionRequest } from "./events.js";
import type { EventSink, StepWhere } from "./event-sink.js";
import { callIdFor, interactionIdFor } from "./ids.js";
import { echoedResponse, interactionRequest, isPendingInteraction } from "./interaction-spec.js";
import { interactionOutcome } from "./interaction-verdict.js";
import type { LiveStep } from "./live-step.js";
import type { JsonObject } from "./step-access.js";
import type { PendingInteraction } from "./tracker-api.js";
import type { TurnState } from "./turn-state.js";
import { waitingForRequest } from "./waiting-for.js";

type At = { trajectoryId: string; stepIndex: number };

/** The open interactions of one tracker, in request order. */
export class InteractionBook {
  #pending = new Map<LiveStep, PendingInteraction>();

  constructor(
    readonly sink: EventSink,
    readonly turn: TurnState,
  ) {}

  /** The number of open interactions. */
  get size(): number {
    return this.#pending.size;
  }

  list(): PendingInteraction[] {
    return [...this.#pending.values()];
  }

  /**
   * A new version of a step that is WAITING or was requested before: requests
   * its interaction once, refreshes an open one, or resolves it when the step
   * left WAITING. Runs whatever the step's type.
   */
  observe(raw: JsonObject, state: LiveStep, status: string, suffix: string, realTrajectoryId: string | undefined, where: At): void {
    const pendingNow = isPendingInteraction(raw, status);
    const open = this.#pending.get(state);
    if (open !== undefined) {
      if (pendingNow) return;
      this.resolve(state, raw, status, where);
      return;
    }
    if (!pendingNow || state.requested) return;
    state.requested = true;
    const pending = this.#request(raw, suffix, realTrajectoryId, where);
    if (pending !== undefined) this.#pending.set(state, pending);
  }

  /**
   * The first sighting of a settled step that carries a `requestedInteraction`
   * whose request was never emitted: its request and resolution together.
   */
  replay(raw: JsonObject, status: string, suffix: string, realTrajectoryId: string | undefined, where: At): void {
    const pending = this.#request(raw, suffix, realTrajectoryId, where);
    if (pending !== undefined) this.#resolved(pending, raw, status, where, interactionOutcome(status, pending.request.kind, raw));
  }

  /**
   * Closes the open interaction of a step's state, if any, with the status
   * that ended the wait; `outcome` overrides what the step says.
   */
  resolve(state: LiveStep, raw: JsonObject, status: string, where: StepWhere, outcome?: InteractionOutcome): void {
    const open = this.#pending.get(state);
    if (open === undefined) return;
    this.#pending.delete(state);
    this.#resolved(open, raw, status, where, outcome ?? interactionOutcome(status, open.request.kind, raw));
  }

  /** Emits `interaction_requested` (and the `waiting` edge when it is the first open one). */
  #request(raw: JsonObject, suffix: string, realTrajectoryId: string | undefined, where: At): PendingInteraction | undefined {
    const sink = this.sink;
    if (realTrajectoryId === undefined) {
      sink.diagnostic(
        "interaction_unusable",
        "A WAITING step was not surfaced because it carries no trajectory id, which agy needs to accept an answer.",
        where,
      );
      return undefined;
    }
    const request: InteractionRequest = interactionRequest(raw, (problem) =>
      sink.diagnostic("unserializable_value", `The interaction of step ${where.stepIndex} was surfaced without its spec: ${problem}.`, where),
    );
    const pending: PendingInteraction = {
      interactionId: interactionIdFor(sink.conversationId, realTrajectoryId, where.stepIndex),
      trajectoryId: realTrajectoryId,
      stepIndex: where.stepIndex,
      stepType: suffix,
      callId: callIdFor(realTrajectoryId, where.stepIndex),
      request,
    };
    sink.push({
      type: "interaction_requested",
      conversationId: sink.conversationId,
      trajectoryId: pending.trajectoryId,
      stepIndex: pending.stepIndex,
      interactionId: pending.interactionId,
      stepType: suffix,
      callId: pending.callId,
      request,
    });
    // A step waiting on the user means agy is mid-turn, even if this tracker never saw the turn start.
    this.turn.active = true;
    if (this.#pending.size === 0) sink.waiting(waitingForRequest(request), where);
    return pending;
  }

  /** Emits `interaction_resolved` (and the `running` edge when no other stays open). */
  #resolved(open: PendingInteraction, raw: JsonObject, status: string, where: StepWhere, outcome: InteractionOutcome): void {
    const sink = this.sink;
    const response = echoedResponse(raw, (problem) =>
      sink.diagnostic("unserializable_value", `The resolution of step ${open.stepIndex} was reported without a response: ${problem}.`, where),
    );
    sink.push({
      type: "interaction_resolved",
      conversationId: sink.conversationId,
      trajectoryId: open.trajectoryId,
      stepIndex: open.stepIndex,
      interactionId: open.interactionId,
      kind: open.request.kind,
      outcome,
      stepStatus: status,
      ...(response === undefined ? {} : { response }),
    });
    if (this.#pending.size === 0 && this.turn.active) sink.status("running", "interaction_resolved", where);
  }
}
