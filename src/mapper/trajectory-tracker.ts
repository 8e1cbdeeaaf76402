/**
 * The trajectory tracker: folds snapshots and stream frames of one agy
 * conversation into events, emitting every step transition exactly once.
 * Pure: no clock, no I/O; bad input becomes `diagnostic` events, never a throw.
 *
 * This file reads the entry points' input and keeps one slot per step index;
 * the events of each kind of step come from the parts it delegates to.
 */
import { AgyBridgeError } from "../errors.js";
import type { StreamUpdate } from "../protocol/wire-schemas.js";
import type { MapperEvent } from "./events.js";
import { EventSink } from "./event-sink.js";
import { fullStepWanted } from "./full-step.js";
import { InteractionBook } from "./interaction-book.js";
import { LiveStep, SettledStep, settledStep, type Slot } from "./live-step.js";
import { PlannerEvents } from "./planner-events.js";
import { settledStepEvents } from "./settled-step-events.js";
import { asIndex, asObject, asString, isObject, type JsonObject } from "./step-access.js";
import { checkStep, describeValue, newStepFields, type StepFields } from "./step-check.js";
import type { PendingInteraction, RunStatusInput, SnapshotInput, StepState, TrajectoryTracker, TrajectoryTrackerOptions } from "./tracker-api.js";
import { TurnState } from "./turn-state.js";
import { UserInputs } from "./user-inputs.js";

const TERMINAL = new Set(["DONE", "ERROR", "CANCELED", "INTERRUPTED", "CLEARED"]);

/** " at index N" for a diagnostic, when the index is known. */
function at(position: number | undefined): string {
  return position === undefined ? "" : ` at index ${position}`;
}

function invalidArgument(message: string): AgyBridgeError {
  return new AgyBridgeError("invalid_argument", message);
}

class Tracker implements TrajectoryTracker {
  readonly conversationId: string;
  /** Steps per trajectory, in an array indexed by step index (no key strings to build or hash). */
  #states = new Map<string, Slot[]>();
  #lastTrajectoryId: string | undefined;
  #lastStates: Slot[] = [];
  #mismatches = new Set<string>();
  #totalLength: number | undefined;
  readonly #sink: EventSink;
  readonly #turn: TurnState;
  readonly #interactions: InteractionBook;
  readonly #users: UserInputs;
  readonly #planners: PlannerEvents;
  /** What {@link checkStep} read of the step being applied. */
  readonly #fields: StepFields = newStepFields();

  constructor(options: TrajectoryTrackerOptions) {
    this.conversationId = options.conversationId;
    this.#sink = new EventSink(options.conversationId);
    this.#turn = new TurnState(this.#sink);
    this.#interactions = new InteractionBook(this.#sink, this.#turn);
    this.#users = new UserInputs(this.#sink, this.#turn);
    this.#planners = new PlannerEvents(this.#sink, this.#turn);
  }

  get turnActive(): boolean {
    return this.#turn.active;
  }

  get totalLength(): number | undefined {
    return this.#totalLength;
  }

  applySnapshot(input: SnapshotInput): MapperEvent[] {
    if (!isObject(input)) {
      throw invalidArgument("applySnapshot needs an object { steps, stepOffset? } (a GetCascadeTrajectorySteps page); pass one.");
    }
    const rawOffset: unknown = input.stepOffset;
    const offset = rawOffset === undefined || rawOffset === null ? 0 : asIndex(rawOffset);
    const rawSteps: unknown = input.steps;
    const steps = rawSteps === undefined || rawSteps === null ? [] : rawSteps;
    if (!Array.isArray(steps)) {
      this.#sink.diagnostic("invalid_step", `A snapshot page whose steps are ${describeValue(steps)}, not a list, was skipped.`);
    } else if (offset === undefined || offset > Number.MAX_SAFE_INTEGER - steps.length) {
      this.#sink.diagnostic(
        "invalid_index",
        `A snapshot page at stepOffset ${describeValue(rawOffset)} was skipped: its steps would not have whole-number indices below 2^53.`,
      );
    } else {
      for (let i = 0; i < steps.length; i++) this.#apply(steps[i], offset + i, undefined);
    }
    return this.#sink.flush();
  }

  applySteps(steps: readonly unknown[]): MapperEvent[] {
    if (!Array.isArray(steps)) throw invalidArgument("applySteps needs a list of steps; pass an array.");
    for (const step of steps) this.#apply(step, undefined, undefined);
    return this.#sink.flush();
  }

  applyStreamUpdate(update: StreamUpdate): MapperEvent[] {
    const sink = this.#sink;
    if (!isObject(update)) {
      sink.diagnostic("invalid_step", "The stream update is not a JSON object; it was ignored.");
      return sink.flush();
    }
    const foreign: unknown = update.conversationId;
    if (foreign !== undefined && foreign !== null && typeof foreign !== "string") {
      sink.diagnostic("invalid_step", `A stream update whose conversationId is ${describeValue(foreign)} was ignored.`);
      return sink.flush();
    }
    if (typeof foreign === "string" && foreign !== "" && foreign !== this.conversationId) {
      sink.diagnostic("foreign_conversation", `A stream update for conversation ${foreign} reached the tracker of ${this.conversationId}; it was ignored.`);
      return sink.flush();
    }
    const main = asObject(update.mainTrajectoryUpdate);
    const stepsUpdate = asObject(main?.["stepsUpdate"]);
    const indices = stepsUpdate?.["indices"];
    const steps = stepsUpdate?.["steps"];
    const hasIndices = indices !== undefined && indices !== null;
    if ((steps !== undefined && steps !== null && !Array.isArray(steps)) || (hasIndices && !Array.isArray(indices))) {
      sink.diagnostic("invalid_step", "A stream update whose steps or indices are not lists was ignored.");
      return sink.flush();
    }
    const stepList: unknown[] = Array.isArray(steps) ? steps : [];
    if (Array.isArray(indices) && indices.length !== stepList.length) {
      sink.diagnostic("frame_length_mismatch", `A stream update listed ${indices.length} indices for ${stepList.length} steps; the frame was ignored.`);
      return sink.flush();
    }
    const frameTrajectoryId = asString(update.trajectoryId) || undefined;
    for (let i = 0; i < stepList.length; i++) {
      const step = stepList[i];
      if (!Array.isArray(indices)) {
        this.#apply(step, undefined, frameTrajectoryId);
        continue;
      }
      const position = asIndex(indices[i]);
      if (position === undefined) {
        sink.diagnostic(
          "invalid_index",
          `Step ${i + 1} of a stream update was skipped: its index ${describeValue(indices[i])} is not a whole number from 0 to 2^53-1.`,
        );
        continue;
      }
      this.#apply(step, position, frameTrajectoryId);
    }
    // A replayed or reopened stream may report an older, smaller length: record, do not judge.
    const total = asIndex(stepsUpdate?.["totalLength"]);
    if (total !== undefined) this.#totalLength = total;
    const status = asString(update.status) ?? asString(main?.["status"]);
    const fullyIdle = typeof update.fullyIdle === "boolean" ? update.fullyIdle : main?.["fullyIdle"];
    if (status !== undefined) {
      this.#turn.runIdle({ status, ...(typeof fullyIdle === "boolean" ? { fullyIdle } : {}) }, this.#interactions.size > 0);
    }
    return sink.flush();
  }

  applyRunStatus(input: RunStatusInput): MapperEvent[] {
    if (!isObject(input)) throw invalidArgument("applyRunStatus needs an object { status, fullyIdle? }; pass one.");
    this.#turn.runIdle(input, this.#interactions.size > 0);
    return this.#sink.flush();
  }

  markReconnected(): MapperEvent[] {
    // A reopened stream restarts its own length accounting; the dedup state is
    // what makes the reconcile snapshot safe, so it is kept as is.
    this.#totalLength = undefined;
    return this.#sink.flush();
  }

  stepState(trajectoryId: string, stepIndex: number): StepState | undefined {
    const slot = this.#states.get(trajectoryId)?.[stepIndex];
    if (slot === undefined) return undefined;
    return { stepType: slot.stepType, status: slot.status, settled: slot instanceof SettledStep };
  }

  pendingInteractions(): PendingInteraction[] {
    return this.#interactions.list();
  }

  needsFullStep(step: unknown, stepIndex: number, frameTrajectoryId?: string): boolean {
    if (!isObject(step)) return false;
    // Its own fields: the tracker's are those of the step being applied.
    const fields = newStepFields();
    if (checkStep(step, fields) !== undefined) return false;
    const slot = this.#states.get(fields.trajectoryId ?? frameTrajectoryId ?? this.conversationId)?.[stepIndex];
    // A settled slot emits nothing more, whatever version comes.
    if (slot !== undefined && !(slot instanceof LiveStep)) return false;
    return fullStepWanted(step, fields, slot?.requested === true);
  }

  /**
   * One step version. `position` is its index when the caller knows it (a
   * page's or frame's), `frameTrajectoryId` the frame's trajectory. Plain
   * parameters, not an options object: this runs per step of a snapshot.
   */
  #apply(raw: unknown, position: number | undefined, frameTrajectoryId: string | undefined): void {
    if (!isObject(raw)) {
      this.#sink.diagnostic("invalid_step", `A step that is not a JSON object was skipped${at(position)}.`);
      return;
    }
    const fields = this.#fields;
    const problem = checkStep(raw, fields);
    if (problem !== undefined) {
      this.#sink.diagnostic(problem.code, `A step${at(position)} was skipped: ${problem.problem}.`, position === undefined ? {} : { stepIndex: position });
      return;
    }
    const { suffix, status } = fields;
    const realTrajectoryId = fields.trajectoryId ?? frameTrajectoryId;
    const trajectoryId = realTrajectoryId ?? this.conversationId;
    const metaIndex = fields.stepIndex;
    // The position is the step's index (a frame's indices[i], a page's stepOffset + i, spike-notes §10.5, §10.4);
    // agy's own stepIndex only cross-checks it, and names the step when no position is known.
    if (metaIndex !== undefined && position !== undefined && metaIndex !== position) {
      this.#indexMismatch(trajectoryId, position, metaIndex);
    }
    const isUser = suffix === "USER_INPUT";
    const stepIndex = position ?? metaIndex ?? (isUser ? undefined : 0);
    if (isUser) {
      this.#user(raw, fields, trajectoryId, stepIndex);
      return;
    }
    const index = stepIndex ?? 0;
    const states = this.#statesOf(trajectoryId);
    const slot = states[index];
    let state: LiveStep | undefined;
    if (slot instanceof LiveStep) {
      state = slot;
      state.stepType = suffix;
      state.status = status;
    } else if (slot !== undefined) {
      // Settled: emits nothing more; only what stepState() says follows the new version.
      if (slot.stepType !== suffix || slot.status !== status) states[index] = settledStep(suffix, status);
      return;
    }
    // Status and interaction bookkeeping run whatever the type: a gate re-sent without one must still close.
    const settles = TERMINAL.has(status);
    if (state === undefined && !settles) {
      state = new LiveStep(suffix, status);
      states[index] = state;
    }
    if (state !== undefined && (state.requested || status === "WAITING")) {
      this.#interactions.observe(raw, state, status, suffix, realTrajectoryId, { trajectoryId, stepIndex: index });
    }
    if (suffix === "PLANNER_RESPONSE" && status === "GENERATING") {
      // Deltas need a real index (agy's or the position): a guessed 0 could merge two steps' text.
      if (state !== undefined && (metaIndex !== undefined || position !== undefined)) {
        this.#planners.generating(fields.body, state, trajectoryId, index);
      }
      return;
    }
    if (!settles) return;
    // First sighting of the settled version: its events, once. A step first seen settled needs no live state.
    states[index] = settledStep(suffix, status);
    // A gate never requested here (first seen settled, or its WAITING version was missed): requested and resolved now.
    if ((state === undefined || !state.requested) && isObject(raw["requestedInteraction"])) {
      this.#interactions.replay(raw, status, suffix, realTrajectoryId, { trajectoryId, stepIndex: index });
    }
    if (suffix === "PLANNER_RESPONSE") this.#planners.settled(raw, fields, state, trajectoryId, index);
    else settledStepEvents(this.#sink, raw, fields, trajectoryId, index);
  }

  /** A USER_INPUT settles its slot at once (when its index is known), then maps once per discriminator. */
  #user(raw: JsonObject, fields: StepFields, trajectoryId: string, stepIndex: number | undefined): void {
    if (stepIndex === undefined) {
      this.#users.settle(raw, fields, { trajectoryId });
      return;
    }
    const where = { trajectoryId, stepIndex };
    const states = this.#statesOf(trajectoryId);
    const slot = states[stepIndex];
    // Nothing later could close a gate recorded for this slot: close it here. Another step
    // took the gate's index, which shows no answer, so the gate counts as cancelled.
    if (slot instanceof LiveStep) this.#interactions.resolve(slot, raw, fields.status, where, "cancelled");
    states[stepIndex] = settledStep(fields.suffix, fields.status);
    this.#users.settle(raw, fields, where);
  }

  #statesOf(trajectoryId: string): Slot[] {
    if (trajectoryId === this.#lastTrajectoryId) return this.#lastStates;
    let states = this.#states.get(trajectoryId);
    if (states === undefined) {
      states = [];
      this.#states.set(trajectoryId, states);
    }
    this.#lastTrajectoryId = trajectoryId;
    this.#lastStates = states;
    return states;
  }

  #indexMismatch(trajectoryId: string, position: number, metaIndex: number): void {
    const key = `${trajectoryId}\u0000${position}`;
    if (this.#mismatches.has(key)) return;
    this.#mismatches.add(key);
    this.#sink.diagnostic("index_mismatch", `The step at position ${position} says it is step ${metaIndex}; its position was used.`, {
      trajectoryId,
      stepIndex: position,
    });
  }
}

/** Creates the tracker of one conversation. */
export function createTrajectoryTracker(options: TrajectoryTrackerOptions): TrajectoryTracker {
  return new Tracker(options);
}
