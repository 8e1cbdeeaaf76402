/**
 * The trajectory tracker's public surface (implemented in
 * `trajectory-tracker.ts` and the parts it delegates to).
 */
import type { StreamUpdate } from "../protocol/wire-schemas.js";
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
}

/** What the tracker keeps of one step (issue 23: per-step state, never a settled step's content). */
export interface StepState {
  /** Type suffix, e.g. `RUN_COMMAND` (`""` when agy sent none). */
  stepType: string;
  /** Status suffix of the latest version seen, e.g. `WAITING`, `DONE`. */
  status: string;
  /** The step reached a terminal status here (or is a USER_INPUT): it emits nothing more. */
  settled: boolean;
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
  /**
   * What the tracker keeps of a step it has seen (type, status, settled), by
   * trajectory and index. It keeps no step's content (issue 23): whoever needs
   * a step re-reads it from agy (`GetCascadeTrajectorySteps` at its index).
   */
  stepState(trajectoryId: string, stepIndex: number): StepState | undefined;
  /** WAITING steps, in the order they were requested (kind `other` included: a person answers those in the TUI). */
  pendingInteractions(): PendingInteraction[];
  /**
   * Whether this version of a step, about to be applied from a stream frame
   * at `stepIndex`, lacks fields the events still to come from it need — a
   * question's multi-select flags, arguments only `toolCall.argumentsJson`
   * holds — which agy's stream projection drops. A reader that can should
   * read the step in full (`GetCascadeTrajectorySteps` with `stepOffset`) and
   * apply that version instead; without it the events say what the frame has
   * (`multiSelect: false`, `arguments: "{}"`). False for steps that already
   * settled here. Pure, like the rest of the tracker.
   */
  needsFullStep(step: unknown, stepIndex: number, frameTrajectoryId?: string): boolean;
  /** True between a turn's first USER_INPUT and its close. */
  readonly turnActive: boolean;
  /** The last `totalLength` a stream frame reported. */
  readonly totalLength: number | undefined;
}

export interface TrajectoryTrackerOptions {
  conversationId: string;
}
