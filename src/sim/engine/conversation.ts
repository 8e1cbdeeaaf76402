/**
 * One simulated conversation (cascade): its steps, run status, queued turns
 * and the prompts parked on WAITING steps. Scenario playing lives in
 * turn-player.ts; this file owns state and change notification.
 */
import { AgyBridgeError } from "../../errors.js";
import type { ScriptStep } from "./scenario-schema.js";
import type { JsonObject, WireStep } from "./step-factory.js";
import { RUN_STATUS, STEP_STATUS } from "../../protocol/wire-names.js";

/**
 * Listener for step changes: the indices that changed ([] = only the run
 * status changed). `quiet` changes are real but agy sends no stream frame for
 * them (a silently parked gate, spike-notes §5.2); the TUI still sees them.
 */
export type ConversationListener = (indices: number[], quiet: boolean) => void;

/** One user turn waiting to be played. */
export interface QueuedTurn {
  text: string;
  /** The model enum the turn's steps carry (the requested `planModel`). */
  model: string;
  /** Plays this script instead of the scenario the text matches (a sub-agent's turn). */
  script?: readonly ScriptStep[];
}

/** What a child conversation (sub-agent) reports in `trajectoryMetadata` (spike-notes §3.11). */
export interface SubagentLineage {
  parentConversationId: string;
  rootConversationId: string;
  nestingDepth: number;
  typeName: string;
  role: string;
}

/** The `interaction` object of a HandleCascadeUserInteraction call (or the TUI's equivalent). */
export type SimInteraction = JsonObject;

/** Why a turn stopped early. */
export type TurnStop = "interrupt" | "force";

/** Thrown inside a turn's script when the turn is stopped. */
export class TurnStopped extends Error {}

/** A running turn's stop switch. */
export class TurnToken {
  #stopped: TurnStop | undefined;
  readonly #handlers = new Set<(how: TurnStop) => void>();

  get stopped(): TurnStop | undefined {
    return this.#stopped;
  }

  stop(how: TurnStop): void {
    if (this.#stopped !== undefined) return;
    this.#stopped = how;
    for (const handler of [...this.#handlers]) handler(how);
  }

  onStop(handler: (how: TurnStop) => void): () => void {
    this.#handlers.add(handler);
    return () => this.#handlers.delete(handler);
  }
}

/**
 * Plays one turn; resolves when the turn is over (finished, errored or
 * stopped). It rejects only when the simulator itself failed, after marking
 * the turn's open steps ERROR.
 */
export type TurnPlayer = (conversation: SimConversation, turn: QueuedTurn, token: TurnToken) => Promise<void>;

export interface ConversationInit {
  id: string;
  trajectoryId: string;
  /** Created by StartCascade: never shown in the TUI. */
  headless: boolean;
  createdTime: string;
  play: TurnPlayer;
  stamp: () => string;
  /** The model a turn uses when its sender names none (the TUI's current model). */
  model: string;
  /** Set for a sub-agent's conversation. */
  lineage?: SubagentLineage;
  /** Told when a turn failed inside the simulator (its steps were marked ERROR). */
  onError: (error: AgyBridgeError) => void;
}

export class SimConversation {
  readonly id: string;
  readonly trajectoryId: string;
  readonly headless: boolean;
  readonly createdTime: string;
  readonly lineage: SubagentLineage | undefined;
  readonly steps: WireStep[] = [];
  /** The model of the latest turn; a turn sent without one keeps using it. */
  model: string;
  lastModifiedTime: string | undefined;
  lastUserInputTime: string | undefined;
  lastUserInputStepIndex: number | undefined;
  /** Planner invocations so far; tool steps share their planner's index. */
  metadataIndex = 0;
  turnsStarted = 0;
  readonly #play: TurnPlayer;
  readonly #stamp: () => string;
  readonly #listeners = new Set<ConversationListener>();
  readonly #gates = new Map<number, (interaction: SimInteraction) => void>();
  readonly #queue: QueuedTurn[] = [];
  readonly #onError: (error: AgyBridgeError) => void;
  #token: TurnToken | undefined;
  #closed = false;

  constructor(init: ConversationInit) {
    this.id = init.id;
    this.trajectoryId = init.trajectoryId;
    this.headless = init.headless;
    this.createdTime = init.createdTime;
    this.#play = init.play;
    this.#stamp = init.stamp;
    this.model = init.model;
    this.lineage = init.lineage;
    this.#onError = init.onError;
  }

  /** A turn is in progress (also while a gate is parked): `CASCADE_RUN_STATUS_RUNNING`. */
  get running(): boolean {
    return this.#token !== undefined;
  }

  get runStatus(): string {
    return this.running ? RUN_STATUS.RUNNING : RUN_STATUS.IDLE;
  }

  /** Nothing runs and nothing waits on the user. */
  get fullyIdle(): boolean {
    return !this.running && this.waitingIndices().length === 0;
  }

  subscribe(listener: ConversationListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  append(step: WireStep): number {
    this.steps.push(step);
    const index = this.steps.length - 1;
    this.touched(index);
    return index;
  }

  /** Call after mutating steps in place. */
  touched(...indices: number[]): void {
    this.#notify(indices, false);
  }

  /** Like {@link touched}, for a change agy does not stream (a gate parked silently, spike-notes §5.2). */
  touchedQuietly(...indices: number[]): void {
    this.#notify(indices, true);
  }

  #notify(indices: number[], quiet: boolean): void {
    if (this.turnsStarted > 0) this.lastModifiedTime = this.#stamp();
    for (const listener of [...this.#listeners]) listener(indices, quiet);
  }

  waitingIndices(): number[] {
    const out: number[] = [];
    this.steps.forEach((step, index) => {
      if (step.status === STEP_STATUS.WAITING) out.push(index);
    });
    return out;
  }

  /** Queues a turn, or starts it when nothing runs. `model` defaults to the conversation's current model. */
  submit(text: string, options: { model?: string; script?: readonly ScriptStep[] } = {}): void {
    if (this.#closed) return;
    const model = options.model ?? this.model;
    this.model = model;
    this.#queue.push({ text, model, ...(options.script !== undefined ? { script: options.script } : {}) });
    if (!this.running) this.#next();
  }

  /** Resolves once no turn runs and none is queued. */
  whenIdle(): Promise<void> {
    return new Promise((resolve) => {
      if (!this.running && this.#queue.length === 0) {
        resolve();
        return;
      }
      const off = this.subscribe(() => {
        if (this.running || this.#queue.length > 0) return;
        off();
        resolve();
      });
    });
  }

  #next(): void {
    const turn = this.#queue.shift();
    if (turn === undefined || this.#closed) return;
    const token = new TurnToken();
    this.#token = token;
    this.turnsStarted += 1;
    this.touched();
    this.#play(this, turn, token)
      .catch((error: unknown) => {
        const reason = error instanceof Error ? error.message : String(error);
        this.#onError(
          new AgyBridgeError(
            "internal",
            `The simulated turn in conversation ${this.id} failed (${reason}); its open steps were marked ERROR — fix the scenario or the injected clock and send the turn again.`,
            { cause: error },
          ),
        );
      })
      .finally(() => {
        if (this.#token !== token) return;
        this.#token = undefined;
        this.touched();
        this.#next();
      });
  }

  /** Parks a prompt on a WAITING step; {@link deliver} resolves it. */
  registerGate(index: number, resolve: (interaction: SimInteraction) => void): void {
    this.#gates.set(index, resolve);
  }

  releaseGate(index: number): void {
    this.#gates.delete(index);
  }

  /** Answers the prompt on step `index`; false when that step is not WAITING on a prompt. */
  deliver(index: number, interaction: SimInteraction): boolean {
    const step = this.steps[index];
    const resolve = this.#gates.get(index);
    if (step === undefined || step.status !== STEP_STATUS.WAITING || resolve === undefined) return false;
    this.#gates.delete(index);
    resolve(interaction);
    return true;
  }

  /**
   * CancelCascadeSteps / Esc: stops RUNNING and GENERATING work. A turn parked
   * on a WAITING step is left alone (agy 1.0.10, live: cancel is a no-op there).
   */
  interrupt(): void {
    if (this.#token === undefined || this.waitingIndices().length > 0) return;
    this.#token.stop("interrupt");
  }

  /** ForceStopCascadeTree / CancelCascadeInvocation: ends the turn even when parked. */
  forceStop(options: { dropQueued: boolean }): void {
    if (options.dropQueued) this.#queue.length = 0;
    this.#token?.stop("force");
  }

  close(): void {
    this.#closed = true;
    this.#queue.length = 0;
    this.#token?.stop("force");
  }
}
