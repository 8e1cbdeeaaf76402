/**
 * The trajectory tracker's public surface (implemented in
 * `trajectory-tracker.ts` and the parts it delegates to).
 */
import type { Step, StreamUpdate } from "../protocol/wire-schemas.js";
import type { InteractionRequest, MapperEvent } from "./events.js";

/** A WAITING step and what it asks (see `interactionAnswer` for the payload that answers it). */
export interface PendingInteraction {
  interactionId: string;
  trajectoryId: string;
  stepIndex: number;
  /** Step type suffix, e.g. `RUN_COMMAND`. */
  stepType: string;
  callId: string;
  request: InteractionRequest;
  /** The latest version of the raw step. */
  step: Step;
}

/** A step whose request waits for its full version (see `holdIncompleteRequests`). */
export interface StepToRead {
  trajectoryId: string;
  stepIndex: number;
}

export interface SnapshotInput {
  /** `GetCascadeTrajectorySteps` `steps[]`: item i is step `stepOffset + i`. */
  steps: readonly unknown[];
  stepOffset?: number;
}

export interface RunStatusInput {
  /** `CASCADE_RUN_STATUS_*`. */
  status?: string;
  /** agy's `fullyIdle`; when absent only `status` is judged. */
  fullyIdle?: boolean;
}

export interface TrajectoryTracker {
  readonly conversationId: string;
  /**
   * Apply a `GetCascadeTrajectorySteps` page (positional indices). Bad steps
   * become diagnostics; throws `AgyBridgeError` `invalid_argument` only when
   * `input` is not an object.
   */
  applySnapshot(input: SnapshotInput): MapperEvent[];
  /**
   * Apply steps whose position is unknown (hand-picked steps); indices come
   * from their metadata. Throws `invalid_argument` when `steps` is not an array.
   */
  applySteps(steps: readonly unknown[]): MapperEvent[];
  /** Apply the inner `update` of one `StreamAgentStateUpdates` frame. */
  applyStreamUpdate(update: StreamUpdate): MapperEvent[];
  /**
   * A run-status reading (e.g. from `GetAllCascadeTrajectories`): the idle
   * backstop. Throws `invalid_argument` when `input` is not an object.
   */
  applyRunStatus(input: RunStatusInput): MapperEvent[];
  /** The stream was lost and reopened; the next snapshot reconciles and re-emits nothing. */
  markReconnected(): MapperEvent[];
  /** The latest raw version of a step, by trajectory and index. */
  step(trajectoryId: string, stepIndex: number): Step | undefined;
  /** WAITING steps, in the order they were requested (kind `other` included: a person answers those in the TUI). */
  pendingInteractions(): PendingInteraction[];
  /**
   * With `holdIncompleteRequests`: WAITING steps read from a stream frame whose
   * request needs a field that projection lacks (a question's multi-select
   * flags). Their `interaction_requested` follows when a snapshot page
   * (`GetCascadeTrajectorySteps` with `stepOffset`) brings the full step, or
   * when the step settles. Empty without the option.
   */
  stepsToRead(): StepToRead[];
  /** True between a turn's first USER_INPUT and its close. */
  readonly turnActive: boolean;
  /** The last `totalLength` a stream frame reported. */
  readonly totalLength: number | undefined;
}

export interface TrajectoryTrackerOptions {
  conversationId: string;
  /**
   * Hold a request read from a stream frame when the frame lacks a field the
   * request needs, until a snapshot brings the full step (`stepsToRead()`
   * lists them). For a reader that can read the step; without it the request
   * is emitted at once from what the frame has (a stream question then says
   * `multiSelect: false`). Default false.
   */
  holdIncompleteRequests?: boolean;
}
