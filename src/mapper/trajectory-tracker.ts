/**
 * The trajectory tracker: folds snapshots and stream frames of one agy
 * conversation into events, emitting every step transition exactly once.
 * Pure: no clock, no I/O; bad input becomes `diagnostic` events, never a throw.
 */
import { AgyBridgeError } from "../errors.js";
import type { Step, StreamUpdate } from "../protocol/wire-schemas.js";
import { RUN_STATUS, STOP_REASON } from "../protocol/wire-names.js";
import type { DiagnosticCode, EventOf, MapperEvent, Status, StatusReason } from "./events.js";
import { callIdFor, interactionIdFor, messageIdFor } from "./ids.js";
import { clipText, errorMessageStep, failureDetail } from "./failure-detail.js";
import { echoedResponse, interactionOutcome, interactionRequest, isPendingInteraction } from "./interaction-spec.js";
import { advanceLiveText, finishLiveText, hasPrefix, newLiveText, type LiveText } from "./live-text.js";
import {
  asIndex,
  asObject,
  asString,
  discriminator,
  isObject,
  isToolStep,
  metadata,
  plannerText,
  statusSuffix,
  stepInfo,
  infoStepIndex,
  infoTrajectoryId,
  typedBody,
  typeSuffix,
  userPlanModel,
  userText,
  type JsonObject,
} from "./step-access.js";
import type {
  PendingInteraction,
  RunStatusInput,
  SnapshotInput,
  TrajectoryTracker,
  TrajectoryTrackerOptions,
} from "./tracker-api.js";
import { describeValue, stepProblem } from "./step-check.js";
import { toolEvents } from "./tool-projection.js";
import { addUsage, newUsageTotals } from "./usage-totals.js";

/** A step seen but not settled yet. A settled step's slot holds its latest raw version instead. */
class LiveStep {
  /** An interaction was requested (or found unusable) for this step. */
  requested = false;
  text: LiveText | undefined = undefined;
  reasoning: LiveText | undefined = undefined;
  constructor(
    /** The latest version agy sent. */
    public raw: JsonObject,
  ) {}
}

/** One trajectory's steps by index: live state, or the raw step once settled. */
type Slot = LiveStep | JsonObject | undefined;

interface StepContext {
  position?: number;
  frameTrajectoryId?: string;
}

/** System steps that carry nothing for a reader (documented in docs/events.md). */
const SILENT_TYPES = new Set(["CONVERSATION_HISTORY", "CHECKPOINT", "SYSTEM_MESSAGE"]);
/** Types that are tools even in a projection that lost the tool markers. */
const TOOL_TYPES = new Set([
  "RUN_COMMAND", "LIST_DIRECTORY", "ASK_QUESTION", "VIEW_FILE", "CODE_ACTION", "GENERIC",
  "INVOKE_SUBAGENT", "MCP_TOOL", "COMMAND_STATUS",
]);
const TERMINAL = new Set(["DONE", "ERROR", "CANCELED", "INTERRUPTED", "CLEARED"]);
/** Stop reasons of a complete answer; any other is carried on the `message`. */
const NORMAL_STOPS = new Set<string>([STOP_REASON.UNSPECIFIED, STOP_REASON.STOP_PATTERN]);

type Where = { trajectoryId?: string; stepIndex?: number };

function invalidArgument(message: string): AgyBridgeError {
  return new AgyBridgeError("invalid_argument", message);
}

class Tracker implements TrajectoryTracker {
  readonly conversationId: string;
  /** Steps per trajectory, in an array indexed by step index (no key strings to build or hash). */
  #states = new Map<string, Slot[]>();
  #lastTrajectoryId: string | undefined;
  #lastStates: Slot[] = [];
  /** Settled USER_INPUT keys (`trajectoryId \0 discriminator`). */
  #users = new Set<string>();
  /** Open interactions by the state of their step, in request order. */
  #pending = new Map<LiveStep, PendingInteraction>();
  #mismatches = new Set<string>();
  #turnActive = false;
  #lastModel: string | undefined;
  #usage = newUsageTotals();
  #totalLength: number | undefined;
  #out: MapperEvent[] = [];

  constructor(options: TrajectoryTrackerOptions) {
    this.conversationId = options.conversationId;
  }

  get turnActive(): boolean {
    return this.#turnActive;
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
      this.#diagnostic("invalid_step", `A snapshot page whose steps are ${describeValue(steps)}, not a list, was skipped.`);
    } else if (offset === undefined || offset > Number.MAX_SAFE_INTEGER - steps.length) {
      this.#diagnostic("invalid_index", `A snapshot page at stepOffset ${describeValue(rawOffset)} was skipped: its steps would not have whole-number indices below 2^53.`);
    } else {
      for (let i = 0; i < steps.length; i++) this.#apply(steps[i], { position: offset + i });
    }
    return this.#flush();
  }

  applySteps(steps: readonly unknown[]): MapperEvent[] {
    if (!Array.isArray(steps)) throw invalidArgument("applySteps needs a list of steps; pass an array.");
    for (const step of steps) this.#apply(step, {});
    return this.#flush();
  }

  applyStreamUpdate(update: StreamUpdate): MapperEvent[] {
    if (!isObject(update)) {
      this.#diagnostic("invalid_step", "The stream update is not a JSON object; it was ignored.");
      return this.#flush();
    }
    const foreign: unknown = update.conversationId;
    if (foreign !== undefined && foreign !== null && typeof foreign !== "string") {
      this.#diagnostic("invalid_step", `A stream update whose conversationId is ${describeValue(foreign)} was ignored.`);
      return this.#flush();
    }
    if (typeof foreign === "string" && foreign !== "" && foreign !== this.conversationId) {
      this.#diagnostic(
        "foreign_conversation",
        `A stream update for conversation ${foreign} reached the tracker of ${this.conversationId}; it was ignored.`,
      );
      return this.#flush();
    }
    const main = asObject(update.mainTrajectoryUpdate);
    const stepsUpdate = asObject(main?.["stepsUpdate"]);
    const indices = stepsUpdate?.["indices"];
    const steps = stepsUpdate?.["steps"];
    const hasIndices = indices !== undefined && indices !== null;
    if ((steps !== undefined && steps !== null && !Array.isArray(steps)) || (hasIndices && !Array.isArray(indices))) {
      this.#diagnostic("invalid_step", "A stream update whose steps or indices are not lists was ignored.");
      return this.#flush();
    }
    const stepList: unknown[] = Array.isArray(steps) ? steps : [];
    if (Array.isArray(indices) && indices.length !== stepList.length) {
      this.#diagnostic(
        "frame_length_mismatch",
        `A stream update listed ${indices.length} indices for ${stepList.length} steps; the frame was ignored.`,
      );
      return this.#flush();
    }
    const frameTrajectoryId = asString(update.trajectoryId) || undefined;
    for (let i = 0; i < stepList.length; i++) {
      const step = stepList[i];
      if (!Array.isArray(indices)) {
        this.#apply(step, frameTrajectoryId ? { frameTrajectoryId } : {});
        continue;
      }
      const position = asIndex(indices[i]);
      if (position === undefined) {
        this.#diagnostic("invalid_index", `Step ${i + 1} of a stream update was skipped: its index ${describeValue(indices[i])} is not a whole number from 0 to 2^53-1.`);
        continue;
      }
      this.#apply(step, frameTrajectoryId ? { position, frameTrajectoryId } : { position });
    }
    // A replayed or reopened stream may report an older, smaller length: record, do not judge.
    const total = asIndex(stepsUpdate?.["totalLength"]);
    if (total !== undefined) this.#totalLength = total;
    const status = asString(update.status) ?? asString(main?.["status"]);
    const fullyIdle = typeof update.fullyIdle === "boolean" ? update.fullyIdle : main?.["fullyIdle"];
    if (status !== undefined) {
      this.#checkIdle({ status, ...(typeof fullyIdle === "boolean" ? { fullyIdle } : {}) });
    }
    return this.#flush();
  }

  applyRunStatus(input: RunStatusInput): MapperEvent[] {
    if (!isObject(input)) throw invalidArgument("applyRunStatus needs an object { status, fullyIdle? }; pass one.");
    this.#checkIdle(input);
    return this.#flush();
  }

  markReconnected(): MapperEvent[] {
    // A reopened stream restarts its own length accounting; the dedup state is
    // what makes the reconcile snapshot safe, so it is kept as is.
    this.#totalLength = undefined;
    return this.#flush();
  }

  step(trajectoryId: string, stepIndex: number): Step | undefined {
    const slot = this.#states.get(trajectoryId)?.[stepIndex];
    return (slot instanceof LiveStep ? slot.raw : slot) as Step | undefined;
  }

  pendingInteractions(): PendingInteraction[] {
    return [...this.#pending.values()];
  }

  #flush(): MapperEvent[] {
    const out = this.#out;
    this.#out = [];
    return out;
  }

  #diagnostic(code: DiagnosticCode, message: string, where: Where = {}): void {
    this.#out.push({ type: "diagnostic", conversationId: this.conversationId, ...where, code, message });
  }

  #status(status: Status, reason: StatusReason, where: { trajectoryId: string; stepIndex?: number }): void {
    // Literals, not spreads: this runs per step of a snapshot, and V8 copies spreads generically.
    this.#out.push(
      where.stepIndex === undefined
        ? { type: "status", conversationId: this.conversationId, trajectoryId: where.trajectoryId, status, reason }
        : { type: "status", conversationId: this.conversationId, trajectoryId: where.trajectoryId, stepIndex: where.stepIndex, status, reason },
    );
  }

  #checkIdle(input: RunStatusInput): void {
    if (input.status !== RUN_STATUS.IDLE || input.fullyIdle === false) return;
    if (!this.#turnActive || this.#pending.size > 0) return;
    this.#turnActive = false;
    this.#out.push({ type: "status", conversationId: this.conversationId, status: "idle", reason: "run_idle" });
  }

  #apply(raw: unknown, ctx: StepContext): void {
    const at = ctx.position === undefined ? "" : ` at index ${ctx.position}`;
    if (!isObject(raw)) {
      this.#diagnostic("invalid_step", `A step that is not a JSON object was skipped${at}.`);
      return;
    }
    const problem = stepProblem(raw);
    if (problem !== undefined) {
      this.#diagnostic(problem.code, `A step${at} was skipped: ${problem.problem}.`, ctx.position === undefined ? {} : { stepIndex: ctx.position });
      return;
    }
    const suffix = typeSuffix(raw);
    const info = stepInfo(raw);
    const realTrajectoryId = infoTrajectoryId(info) ?? ctx.frameTrajectoryId;
    const trajectoryId = realTrajectoryId ?? this.conversationId;
    const metaIndex = infoStepIndex(info);
    if (metaIndex !== undefined && ctx.position !== undefined && metaIndex !== ctx.position) {
      this.#indexMismatch(trajectoryId, ctx.position, metaIndex);
    }
    const isUser = suffix === "USER_INPUT";
    const stepIndex = metaIndex ?? ctx.position ?? (isUser ? undefined : 0);
    if (isUser) {
      this.#user(raw, stepIndex === undefined ? { trajectoryId } : { trajectoryId, stepIndex });
      return;
    }
    const index = stepIndex ?? 0;
    const states = this.#statesOf(trajectoryId);
    const slot = states[index];
    let state: LiveStep | undefined;
    if (slot instanceof LiveStep) {
      state = slot;
      state.raw = raw;
    } else if (slot !== undefined) {
      states[index] = raw; // settled: only refresh what step() returns
      return;
    }
    // Status and interaction bookkeeping run whatever the type: a gate re-sent without one must still close.
    const status = statusSuffix(raw);
    const settles = TERMINAL.has(status);
    if (state === undefined && !settles) {
      state = new LiveStep(raw);
      states[index] = state;
    }
    if (state !== undefined && (state.requested || status === "WAITING")) {
      this.#interaction(raw, state, status, suffix, realTrajectoryId, { trajectoryId, stepIndex: index });
    }
    if (suffix === "PLANNER_RESPONSE" && status === "GENERATING") {
      // Deltas need a real index (agy's or the position): a guessed 0 could merge two steps' text.
      if (state !== undefined && (metaIndex !== undefined || ctx.position !== undefined)) {
        this.#generating(raw, state, trajectoryId, index);
      }
      return;
    }
    if (!settles) return;
    // First sighting of the settled version: its events, once. A step first seen settled needs no live state.
    states[index] = raw;
    if (suffix === "PLANNER_RESPONSE") this.#planner(raw, state, status, trajectoryId, index);
    else if (suffix === "ERROR_MESSAGE") this.#errorMessage(raw, trajectoryId, index);
    else if (!SILENT_TYPES.has(suffix)) this.#settledOther(raw, suffix, status, trajectoryId, index);
  }

  /**
   * Any other settled step becomes a tool call and its output when it has
   * something to show (tool markers, a known tool type, `metadata.toolCall`, or
   * a typed body); otherwise one diagnostic, so no step vanishes unnoticed.
   */
  #settledOther(raw: JsonObject, suffix: string, status: string, trajectoryId: string, stepIndex: number): void {
    if (TOOL_TYPES.has(suffix) || isToolStep(raw) || isObject(metadata(raw)?.["toolCall"]) || typedBody(raw) !== undefined) {
      this.#tool(raw, status, trajectoryId, stepIndex);
      return;
    }
    const name = suffix === "" ? "(missing)" : clipText(suffix, 80);
    this.#diagnostic(
      "unknown_step_type",
      `Step ${stepIndex} of type ${name} carries no tool call and no body; it maps to no event.`,
      { trajectoryId, stepIndex },
    );
  }

  /** ERROR_MESSAGE: a failure message when agy shows it to the user, else a diagnostic. */
  #errorMessage(raw: JsonObject, trajectoryId: string, stepIndex: number): void {
    const { detail, showUser } = errorMessageStep(raw, typedBody(raw));
    if (!showUser) {
      this.#diagnostic("agy_error", `agy recorded an error not meant for the user: ${clipText(detail ?? "no detail given")}`, { trajectoryId, stepIndex });
      return;
    }
    this.#out.push({
      type: "message", conversationId: this.conversationId, trajectoryId, stepIndex, messageId: messageIdFor(trajectoryId, stepIndex),
      role: "assistant", text: `[agy-bridge: agy reported an error${detail === undefined ? "" : `: ${detail}`}]`, failed: true,
    });
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

  /**
   * USER_INPUT settles at once. agy 1.0.10 gives it no `stepIndex` and the same
   * trajectory id in every turn, so it is deduplicated by its discriminator.
   */
  #user(raw: JsonObject, where: { trajectoryId: string; stepIndex?: number }): void {
    if (where.stepIndex !== undefined) this.#statesOf(where.trajectoryId)[where.stepIndex] = raw;
    const disc = discriminator(raw) ?? `i:${where.stepIndex ?? "?"}`;
    const key = `${where.trajectoryId}\u0000${disc}`;
    if (this.#users.has(key)) return;
    this.#users.add(key);
    this.#userInput(raw, where);
  }

  #indexMismatch(trajectoryId: string, position: number, metaIndex: number): void {
    const key = `${trajectoryId}\u0000${position}`;
    if (this.#mismatches.has(key)) return;
    this.#mismatches.add(key);
    this.#diagnostic(
      "index_mismatch",
      `The step at position ${position} says it is step ${metaIndex}; its own index was used.`,
      { trajectoryId, stepIndex: metaIndex },
    );
  }

  #interaction(
    raw: JsonObject,
    state: LiveStep,
    status: string,
    suffix: string,
    realTrajectoryId: string | undefined,
    where: { trajectoryId: string; stepIndex?: number },
  ): void {
    const pendingNow = isPendingInteraction(raw, status);
    const open = this.#pending.get(state);
    if (open !== undefined) {
      if (pendingNow) {
        open.step = raw as Step;
        return;
      }
      this.#pending.delete(state);
      const response = echoedResponse(raw, (problem) => this.#diagnostic("unserializable_value", `The resolution of step ${open.stepIndex} was reported without a response: ${problem}.`, where));
      this.#out.push({
        type: "interaction_resolved",
        conversationId: this.conversationId,
        trajectoryId: open.trajectoryId,
        stepIndex: open.stepIndex,
        interactionId: open.interactionId,
        kind: open.request.kind,
        outcome: interactionOutcome(status),
        stepStatus: status,
        ...(response === undefined ? {} : { response }),
      });
      if (this.#pending.size === 0 && this.#turnActive) this.#status("running", "interaction_resolved", where);
      return;
    }
    if (!pendingNow || state.requested) return;
    state.requested = true;
    if (realTrajectoryId === undefined || where.stepIndex === undefined) {
      this.#diagnostic("interaction_unusable", "A WAITING step was not surfaced because it carries no trajectory id, which agy needs to accept an answer.", where);
      return;
    }
    const request = interactionRequest(raw, (problem) => this.#diagnostic("unserializable_value", `The interaction of step ${where.stepIndex} was surfaced without its spec: ${problem}.`, where));
    const pending: PendingInteraction = {
      interactionId: interactionIdFor(this.conversationId, realTrajectoryId, where.stepIndex),
      trajectoryId: realTrajectoryId,
      stepIndex: where.stepIndex,
      stepType: suffix,
      callId: callIdFor(realTrajectoryId, where.stepIndex),
      request,
      step: raw as Step,
    };
    this.#pending.set(state, pending);
    this.#out.push({
      type: "interaction_requested",
      conversationId: this.conversationId,
      trajectoryId: pending.trajectoryId,
      stepIndex: pending.stepIndex,
      interactionId: pending.interactionId,
      stepType: suffix,
      callId: pending.callId,
      request,
    });
    // A step waiting on the user means agy is mid-turn, even if this tracker never saw the turn start.
    this.#turnActive = true;
    if (this.#pending.size === 1) this.#status("waiting", "interaction_pending", where);
  }

  #generating(raw: JsonObject, state: LiveStep, trajectoryId: string, stepIndex: number): void {
    const body = typedBody(raw);
    const messageId = messageIdFor(trajectoryId, stepIndex);
    const conversationId = this.conversationId;
    const thinking = asString(body?.["thinking"]);
    if (thinking !== undefined && thinking !== "") {
      const started = state.reasoning === undefined;
      state.reasoning ??= newLiveText();
      const change = advanceLiveText(state.reasoning, thinking);
      if (change !== undefined) {
        if (change.replace) this.#rewriteDiagnostic("reasoning", trajectoryId, stepIndex);
        const { text, replace, index } = change;
        this.#out.push({ type: "reasoning_delta", conversationId, trajectoryId, stepIndex, messageId, index, text, replace, started });
      }
    }
    state.text ??= newLiveText();
    const change = advanceLiveText(state.text, plannerText(body));
    if (change !== undefined) {
      if (change.replace) this.#rewriteDiagnostic("text", trajectoryId, stepIndex);
      const { text, replace, index } = change;
      this.#out.push({ type: "message_delta", conversationId, trajectoryId, stepIndex, messageId, index, text, replace, final: false });
    }
  }

  #rewriteDiagnostic(what: string, trajectoryId: string, stepIndex: number): void {
    this.#diagnostic(
      "non_prefix_rewrite",
      `agy rewrote the ${what} of step ${stepIndex} instead of extending it; the whole text was sent again with replace.`,
      { trajectoryId, stepIndex },
    );
  }

  #userInput(raw: JsonObject, where: { trajectoryId: string; stepIndex?: number }): void {
    if (!this.#turnActive) {
      this.#turnActive = true;
      this.#status("running", "turn_started", where);
    }
    const body = typedBody(raw);
    const model = userPlanModel(body);
    if (model !== undefined && model !== this.#lastModel) {
      const previous = this.#lastModel;
      this.#lastModel = model;
      this.#out.push({
        type: "model_changed",
        conversationId: this.conversationId,
        ...where,
        model,
        ...(previous === undefined ? {} : { previousModel: previous }),
      });
    }
    const text = userText(body);
    if (text === "") return;
    const { trajectoryId, stepIndex } = where;
    this.#out.push(
      stepIndex === undefined
        ? { type: "user_message", conversationId: this.conversationId, trajectoryId, text }
        : { type: "user_message", conversationId: this.conversationId, trajectoryId, stepIndex, text },
    );
  }

  #planner(raw: JsonObject, state: LiveStep | undefined, status: string, trajectoryId: string, stepIndex: number): void {
    const body = typedBody(raw);
    const text = plannerText(body);
    const messageId = messageIdFor(trajectoryId, stepIndex);
    const conversationId = this.conversationId;
    const thinking = asString(body?.["thinking"]);
    if (state?.reasoning !== undefined && thinking !== undefined && hasPrefix(thinking, state.reasoning.sent)) {
      const change = advanceLiveText(state.reasoning, thinking);
      if (change !== undefined) {
        const { text: rest, replace, index } = change;
        this.#out.push({ type: "reasoning_delta", conversationId, trajectoryId, stepIndex, messageId, index, text: rest, replace, started: false });
      }
    }
    // A final delta only closes a live block the consumer has, or brings committed text: never an empty one from nothing.
    if (state?.text !== undefined && (state.text.next > 0 || (status === "DONE" && text !== ""))) {
      const change = finishLiveText(state.text, text);
      if (change.replace && status === "DONE") this.#rewriteDiagnostic("text", trajectoryId, stepIndex);
      const { text: rest, replace, index } = change;
      this.#out.push({ type: "message_delta", conversationId, trajectoryId, stepIndex, messageId, index, text: rest, replace, final: true });
    }
    const where = { trajectoryId, stepIndex };
    const stop = asString(body?.["stopReason"]);
    const stopReason = stop !== undefined && stop !== "" && !NORMAL_STOPS.has(stop) ? stop : undefined;
    if (status === "ERROR") {
      const detail = failureDetail(raw, body);
      const marker = `[agy-bridge: the model did not complete this turn (status ERROR)${detail === undefined ? "" : `: ${detail}`}]`;
      const failed: EventOf<"message"> = { type: "message", conversationId, trajectoryId, stepIndex, messageId, role: "assistant", text: marker, failed: true };
      if (stopReason !== undefined) failed.stopReason = stopReason;
      this.#out.push(failed);
      if (this.#turnActive) {
        this.#turnActive = false;
        this.#status("failed", "turn_failed", where);
      }
      return;
    }
    if (status !== "DONE") return;
    if (text.trim() !== "") {
      const message: EventOf<"message"> = { type: "message", conversationId, trajectoryId, stepIndex, messageId, role: "assistant", text, failed: false };
      if (stopReason !== undefined) message.stopReason = stopReason;
      this.#out.push(message);
    }
    this.#usageFrom(raw, where);
    const toolCalls = body?.["toolCalls"];
    const dispatches = Array.isArray(toolCalls) && toolCalls.length > 0;
    if (text.trim() !== "" && !dispatches && this.#turnActive) {
      this.#turnActive = false;
      this.#status("idle", "turn_completed", where);
    }
  }

  #usageFrom(raw: JsonObject, where: { trajectoryId: string; stepIndex: number }): void {
    const usage = asObject(metadata(raw)?.["modelUsage"]);
    if (usage === undefined) return;
    const totals = this.#usage;
    addUsage(totals, usage, (message) => this.#diagnostic("invalid_number", `Step ${where.stepIndex}: ${message}`, where));
    const model = asString(usage["model"]);
    const event: EventOf<"usage"> = {
      type: "usage",
      conversationId: this.conversationId,
      trajectoryId: where.trajectoryId,
      stepIndex: where.stepIndex,
      inputTokens: totals.inputTokens,
      outputTokens: totals.outputTokens,
      thinkingOutputTokens: totals.thinkingOutputTokens,
      cacheReadTokens: totals.cacheReadTokens,
    };
    if (model !== undefined && model !== "") event.model = model;
    this.#out.push(event);
  }

  #tool(raw: JsonObject, status: string, trajectoryId: string, stepIndex: number): void {
    const where = { trajectoryId, stepIndex };
    const [call, output] = toolEvents(raw, status, { conversationId: this.conversationId, trajectoryId, stepIndex }, (code, message) =>
      this.#diagnostic(code, `Step ${stepIndex}: ${message}`, where),
    );
    this.#out.push(call, output);
  }
}

/** Creates the tracker of one conversation. */
export function createTrajectoryTracker(options: TrajectoryTrackerOptions): TrajectoryTracker {
  return new Tracker(options);
}
