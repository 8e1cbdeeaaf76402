/**
 * Follows one agy conversation and turns it into mapper events, each
 * transition once: the stream first, a reconcile from the frontier on every
 * (re)connect, polling while the stream is down, a cheap probe for gates that
 * park without a frame, and the run-status backstop. It also follows `/clear`
 * rotation and asks the session to re-locate a server that went away, and
 * tells it when the server is gone.
 *
 * Why the probe: agy streams a step's move to WAITING once, but sends nothing
 * while a gate is parked, and the second gate of a chained command has been
 * seen to park with no frame at all (spike-notes §5.2). So while a turn runs
 * and the stream is quiet, one `GetAllCascadeTrajectories` (its
 * `waitingSteps`) or one `stepOffset` page of the tail is read every probe
 * interval; either costs the same at 10 or 10,000 steps of history.
 *
 * Each failed reconnect or read counts toward the server's loss
 * (server-health.ts), which re-locates it and tells the session once per
 * outage that it is gone.
 */
import { asIndex, asObject, isObject } from "../protocol/json.js";
import { RUN_STATUS } from "../protocol/wire-names.js";
import type { ModelCatalog, StreamUpdate } from "../protocol/wire-schemas.js";
import type { AgyRpcClient } from "../rpc/client.js";
import { watchAgentStateUpdates } from "../rpc/stream-watcher.js";
// Their own files, not the mapper barrel, which builds every event schema with zod at import (docs/scale.md, "Start-up").
import type { MapperEvent } from "../mapper/events.js";
import type { TrajectoryTracker } from "../mapper/tracker-api.js";
import { createTrajectoryTracker } from "../mapper/trajectory-tracker.js";
import { withDisplayNames } from "./model-names.js";
import { completeFrame } from "./request-completion.js";
import { RotationWatch } from "./rotation.js";
import { isServerGone, ServerHealth, type RelocateOutcome } from "./server-health.js";
import { isIdle, slimSummaries, withoutRunStatus } from "./run-status.js";
import { pageStart, StepFrontier } from "./step-frontier.js";
import { nextTicket, processBoard, type SummariesBoard } from "./summaries-board.js";
import type { ProbeKind, ReadMode } from "./types.js";
import { sleep } from "../util/sleep.js";

/** Probe interval while a gate we already surfaced is parked. */
const PARKED_PROBE_MS = 250;
/** The longest tick while nothing runs: the run-status check's resolution then. */
const IDLE_TICK_MS = 1000;
/** Failed completion reads in a row after which a frame is applied as it came (request-completion.ts). */
const COMPLETION_RETRIES = 3;

export type { RelocateOutcome } from "./server-health.js";

export interface ReaderOptions {
  conversationId: string;
  /** The caller named the conversation: only a `/clear` from it leaves it (rotation.ts). */
  named?: boolean;
  client(): AgyRpcClient;
  /** Finds the server again (new ports, new token). */
  relocate(): Promise<RelocateOutcome>;
  publish(events: MapperEvent[]): void;
  /** The server is gone (server-health.ts); said once per outage. */
  serverGone?(): void;
  /** The stream connected again after it had been up (or the server moved): what agy is may have changed. */
  reconnected?(): void;
  /** Transport failures in a row after which the server counts as gone; default 10. */
  goneAfterFailures?: number;
  mode: ReadMode;
  probe: ProbeKind;
  probeIntervalMs: number;
  pollIntervalMs: number;
  idleCheckIntervalMs: number;
  pollAfterFailures: number;
  relocateAfterFailures: number;
  /** Where run-status readings are shared with other sessions on the same server; default one per process. */
  board?: SummariesBoard;
  now?: () => number;
}

export interface ConversationReader {
  readonly conversationId: string;
  readonly tracker: TrajectoryTracker;
  /** The whole conversation read afresh through a new tracker (see the implementation). */
  readWhole(signal: AbortSignal): Promise<MapperEvent[]>;
  /** The first step that may still change (every step below it has settled). */
  readonly frontier: number;
  /** Reads the conversation once (from the frontier) and starts following it. */
  start(): Promise<MapperEvent[]>;
  /** A turn is being typed: probe even before the stream shows it. */
  expectTurn(ms: number): void;
  /** Reads from the frontier now (coalesced with a read in flight). */
  reconcile(): Promise<void>;
  stop(): void;
}

export function createConversationReader(options: ReaderOptions): ConversationReader {
  return new Reader(options);
}

class Reader implements ConversationReader {
  readonly #o: ReaderOptions;
  readonly #now: () => number;
  readonly #stop = new AbortController();
  #conversationId: string;
  #tracker: TrajectoryTracker;
  #frontier = new StepFrontier();
  #connection = new AbortController();
  #streamUp = false;
  #streamFailures = 0;
  /** Completion reads that failed in a row (each dropped its frame and reopened the stream). */
  #completionFailures = 0;
  readonly #health: ServerHealth;
  #lastFrameAt = 0;
  #lastProbeAt = 0;
  #lastPollAt = 0;
  #lastIdleCheckAt = 0;
  #idleReadings = 0;
  /** The ticket of the run-status reading the backstop last counted (the same reading never counts twice). */
  #lastIdleTicket = 0;
  /**
   * The ticket (summaries-board.ts) of the latest batch of events the tracker
   * gave: a run-status reading requested before it may predate what the
   * stream has shown since (a turn that began), so it is not taken.
   */
  #eventTicket = 0;
  /** The tick interval now: fast while a turn runs or the stream is down, slow otherwise. */
  #cadence = 0;
  #expectTurnUntil = 0;
  #reading: Promise<void> | undefined;
  #readAgain = false;
  #ticking = false;
  #timer: ReturnType<typeof setInterval> | undefined;
  #catalog: ModelCatalog | undefined;
  readonly #rotation: RotationWatch;
  #confirming = false;
  /** The stream has connected once: every later `connected` is a reconnect. */
  #connectedBefore = false;

  constructor(options: ReaderOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.#conversationId = options.conversationId;
    this.#rotation = new RotationWatch(options.named === true);
    this.#tracker = createTrajectoryTracker({ conversationId: this.#conversationId });
    this.#health = new ServerHealth({
      relocate: options.relocate,
      // A new server: a new stream on it, and a reconcile (it may have moved on meanwhile).
      moved: () => {
        options.reconnected?.();
        this.#connection.abort();
        this.#tracker.markReconnected();
        void this.reconcile().catch(() => undefined);
      },
      ...(options.serverGone === undefined ? {} : { serverGone: options.serverGone }),
      relocateAfterFailures: options.relocateAfterFailures,
      ...(options.goneAfterFailures === undefined ? {} : { goneAfterFailures: options.goneAfterFailures }),
      signal: this.#stop.signal,
    });
  }

  get conversationId(): string {
    return this.#conversationId;
  }

  get tracker(): TrajectoryTracker {
    return this.#tracker;
  }

  get frontier(): number {
    return this.#frontier.frontier;
  }

  async start(): Promise<MapperEvent[]> {
    this.#catalog = await this.#o
      .client()
      .getAvailableModels({}, { signal: this.#stop.signal, timeoutMs: 2000 })
      .catch(() => undefined);
    const history = withDisplayNames(this.#catalog, await this.#readFrontier(this.#conversationId));
    // The first run-status and rotation check comes one interval from now, as the
    // reference's does (spike-notes §4.10), not at once.
    this.#lastIdleCheckAt = this.#now();
    if (this.#o.mode === "stream") void this.#streamLoop();
    this.#pace();
    return history;
  }

  expectTurn(ms: number): void {
    this.#expectTurnUntil = Math.max(this.#expectTurnUntil, this.#now() + ms);
    this.#pace();
  }

  /**
   * Ticks fast (the probe or poll interval) while a turn runs, one is
   * expected, or the stream is down; otherwise once a second at most, which
   * is all the run-status check needs. A hundred idle sessions then cost a
   * hundred timer callbacks a second, not thousands (issue 23).
   */
  #pace(): void {
    if (this.#stop.signal.aborted) return;
    const fast = Math.max(5, Math.min(this.#o.probeIntervalMs, this.#o.pollIntervalMs));
    const busy = this.#o.mode === "poll" || !this.#streamUp || this.#tracker.turnActive || this.#now() < this.#expectTurnUntil;
    const cadence = busy ? fast : Math.max(fast, Math.min(IDLE_TICK_MS, this.#o.idleCheckIntervalMs));
    if (cadence === this.#cadence) return;
    clearInterval(this.#timer);
    this.#cadence = cadence;
    this.#timer = setInterval(() => void this.#tick(), cadence);
  }

  stop(): void {
    this.#stop.abort();
    this.#connection.abort();
    clearInterval(this.#timer);
  }

  reconcile(): Promise<void> {
    if (this.#reading !== undefined) {
      this.#readAgain = true;
      return this.#reading;
    }
    this.#reading = (async () => {
      try {
        do {
          this.#readAgain = false;
          const id = this.#conversationId;
          const events = await this.#readFrontier(id);
          if (id === this.#conversationId) this.#emit(events);
        } while (this.#readAgain && !this.#stop.signal.aborted);
      } finally {
        this.#reading = undefined;
      }
    })();
    return this.#reading;
  }

  /**
   * The whole conversation read afresh through a new tracker, as a replay
   * gives it: for a consumer that lost its place and must rebuild its state
   * (serve's SSE resync). The live tracker is not touched.
   */
  async readWhole(signal: AbortSignal): Promise<MapperEvent[]> {
    const id = this.#conversationId;
    const { steps } = await this.#call((c) => c.getCascadeTrajectorySteps({ conversationId: id }, { signal: AbortSignal.any([signal, this.#stop.signal]) }));
    return withDisplayNames(this.#catalog, createTrajectoryTracker({ conversationId: id }).applySnapshot({ steps, stepOffset: 0 }));
  }

  /** One `stepOffset` page from the first step that may still change. */
  async #readFrontier(id: string): Promise<MapperEvent[]> {
    const frontier = this.#frontier;
    const tracker = this.#tracker;
    const from = frontier.frontier;
    const { steps } = await this.#call((c) => c.getCascadeTrajectorySteps({ conversationId: id, stepOffset: from }, { signal: this.#stop.signal }));
    if (id !== this.#conversationId) return [];
    const start = pageStart(steps, from);
    frontier.observePage(steps, start);
    return tracker.applySnapshot({ steps, stepOffset: start });
  }

  async #call<T>(fn: (client: AgyRpcClient) => Promise<T>): Promise<T> {
    try {
      const out = await fn(this.#o.client());
      this.#health.reached();
      return out;
    } catch (error) {
      if (isServerGone(error)) this.#health.failed();
      throw error;
    }
  }

  /** Said once per outage: the stream is down and polling covers it. */
  #connectionLost(why: string): void {
    this.#o.publish([
      {
        type: "diagnostic",
        conversationId: this.#conversationId,
        code: "connection_lost",
        message: `The stream from agy failed ${this.#streamFailures} times (${why.replace(/[.\s]+$/, "")}); polling every ${this.#o.pollIntervalMs} ms until it is back.`,
      },
    ]);
  }

  #emit(events: MapperEvent[]): void {
    if (events.length === 0) return;
    this.#eventTicket = nextTicket();
    this.#o.publish(withDisplayNames(this.#catalog, events));
    if (this.#cadence !== 0) this.#pace();
  }

  async #streamLoop(): Promise<void> {
    while (!this.#stop.signal.aborted) {
      const connection = new AbortController();
      this.#connection = connection;
      const id = this.#conversationId;
      const onStop = () => connection.abort();
      this.#stop.signal.addEventListener("abort", onStop, { once: true });
      try {
        for await (const event of watchAgentStateUpdates(this.#o.client(), {
          conversationId: id,
          signal: connection.signal,
          backoff: { initialMs: 100, maxMs: 2000 },
        })) {
          if (id !== this.#conversationId) break;
          if (event.type === "connected") {
            if (this.#connectedBefore) this.#o.reconnected?.();
            this.#connectedBefore = true;
            this.#streamUp = true;
            this.#pace();
            this.#health.reached();
            this.#emit(this.#tracker.markReconnected());
            await this.reconcile().catch(() => undefined);
          } else if (event.type === "update") {
            // Taken off the event, and handled in a method of its own: a frame can be a whole history
            // (a stream's first replays it), and this loop's `event` stays reachable while it waits.
            if (!(await this.#onFrameReleased(takeUpdate(event), id))) break;
          } else {
            this.#streamUp = false;
            this.#pace();
            if (event.reason === undefined) continue; // agy may end a stream cleanly after a turn
            this.#streamFailures++;
            if (this.#streamFailures === this.#o.pollAfterFailures) this.#connectionLost(event.reason.message);
            if (isServerGone(event.reason) || event.retryInMs === undefined) this.#health.failed();
            if (event.retryInMs === undefined) break;
          }
        }
      } catch {
        // The watcher ends only on abort; anything else is retried below.
      } finally {
        this.#stop.signal.removeEventListener("abort", onStop);
        this.#streamUp = false;
        this.#pace();
      }
      if (!this.#stop.signal.aborted && !connection.signal.aborted) await sleep(250, this.#stop.signal);
    }
  }

  /**
   * {@link #onFrame}, then the frame's steps are dropped from it: generator
   * frames on the way from the socket (the RPC client's, the watcher's) can
   * keep the last frame they passed on reachable while they wait, and a
   * stream's first frame replays the whole history (issue 23).
   */
  async #onFrameReleased(frame: StreamUpdate, id: string): Promise<boolean> {
    try {
      return await this.#onFrame(frame, id);
    } finally {
      delete (frame as { mainTrajectoryUpdate?: unknown }).mainTrajectoryUpdate;
    }
  }

  /** One stream frame; false when the reader moved on (another conversation, or stopped). */
  async #onFrame(frame: StreamUpdate, id: string): Promise<boolean> {
    this.#lastFrameAt = this.#now();
    this.#streamFailures = 0;
    this.#health.reached();
    // Steps the stream projection leaves without what their events need are read in full first (issue 18).
    // A read that fails is not taken as final: the frame is dropped and the stream reopened, whose
    // replay and reconcile bring the steps again, in order; only after repeated failures does the
    // frame go on as it came (an `incomplete_step` diagnostic says so).
    let full: Awaited<ReturnType<typeof completeFrame>>;
    try {
      full = await completeFrame(
        frame,
        this.#tracker,
        async (stepOffset) => (await this.#call((c) => c.getCascadeTrajectorySteps({ conversationId: id, stepOffset }, { signal: this.#stop.signal }))).steps,
        { rethrow: this.#completionFailures < COMPLETION_RETRIES },
      );
    } catch {
      this.#completionFailures++;
      return false;
    }
    this.#completionFailures = 0;
    if (id !== this.#conversationId || this.#stop.signal.aborted) return false;
    this.#emit(full.diagnostics);
    const update = this.#frontier.fresher(full.update);
    this.#frontier.observeUpdate(update);
    // A frame's run status may be older than a snapshot already applied (the
    // replay frame of a new stream says IDLE while a turn we saw has begun),
    // so an IDLE frame only triggers a fresh reading.
    const { update: steps, idle } = withoutRunStatus(update);
    this.#emit(this.#tracker.applyStreamUpdate(steps));
    if (idle && this.#tracker.turnActive) void this.#confirmIdle();
    return true;
  }

  async #tick(): Promise<void> {
    if (this.#ticking || this.#stop.signal.aborted) return;
    this.#ticking = true;
    try {
      const now = this.#now();
      const polling = this.#o.mode === "poll" || (!this.#streamUp && this.#streamFailures >= this.#o.pollAfterFailures);
      if (polling && now - this.#lastPollAt >= this.#o.pollIntervalMs) {
        this.#lastPollAt = now;
        await this.reconcile();
      }
      const busy = this.#tracker.turnActive || now < this.#expectTurnUntil;
      // A known parked gate keeps the stream quiet by design; its answer brings frames back.
      const interval = this.#tracker.pendingInteractions().length > 0 ? Math.max(this.#o.probeIntervalMs, PARKED_PROBE_MS) : this.#o.probeIntervalMs;
      const quiet = now - this.#lastFrameAt >= interval;
      if (busy && quiet && now - this.#lastProbeAt >= interval) {
        this.#lastProbeAt = now;
        await this.#probe();
      }
      if (now - this.#lastIdleCheckAt >= this.#o.idleCheckIntervalMs) {
        this.#lastIdleCheckAt = now;
        await this.#idleCheck();
      }
    } catch {
      // A failed read is retried on the next tick; server loss is counted in #call.
    } finally {
      this.#ticking = false;
      this.#pace();
    }
  }

  /** Finds a gate parked without a frame; on a hit, reads the changed steps. */
  async #probe(): Promise<void> {
    if (this.#o.probe === "tail") {
      await this.reconcile();
      return;
    }
    const id = this.#conversationId;
    const answer = await this.#call((c) => c.getAllCascadeTrajectories({}, { signal: this.#stop.signal }));
    const summary = asObject(answer.trajectorySummaries?.[id]);
    const waiting = Array.isArray(summary?.["waitingSteps"]) ? (summary["waitingSteps"] as unknown[]) : [];
    const known = new Set(this.#tracker.pendingInteractions().map((p) => p.stepIndex));
    const hit = waiting.some((entry) => isObject(entry) && !known.has(asIndex(entry["stepIndex"]) ?? 0));
    if (hit) await this.reconcile();
  }

  /** A second, fresh reading after a frame said IDLE: the turn closes only if agy agrees now. */
  async #confirmIdle(): Promise<void> {
    if (this.#confirming) return;
    this.#confirming = true;
    try {
      const id = this.#conversationId;
      await this.reconcile();
      if (!this.#tracker.turnActive) return;
      const seen = this.#eventTicket;
      const answer = await this.#call((c) => c.getAllCascadeTrajectories({}, { signal: this.#stop.signal }));
      if (id !== this.#conversationId || seen !== this.#eventTicket || !isIdle(asObject(answer.trajectorySummaries?.[id]))) return;
      // The run was idle by that reading, so the steps read now are its last ones: a turn that ended
      // with its own steps (read before the reading, they could still have been running) closes by them.
      await this.reconcile();
      if (id !== this.#conversationId || !this.#tracker.turnActive) return;
      this.#emit(this.#tracker.applyRunStatus({ status: RUN_STATUS.IDLE, fullyIdle: true }));
    } catch {
      // The backstop reads again on its own schedule.
    } finally {
      this.#confirming = false;
    }
  }

  /**
   * The run-status backstop (two IDLE + fully idle readings in a row, spike-notes
   * §4.7) and `/clear` rotation (§4.10), both from one `GetAllCascadeTrajectories`.
   */
  async #idleCheck(): Promise<void> {
    const id = this.#conversationId;
    const board = this.#o.board ?? processBoard;
    const reading = await this.#call((c) =>
      board.read(c.baseUrl, async () => slimSummaries((await c.getAllCascadeTrajectories({})).trajectorySummaries ?? {}), {
        after: this.#eventTicket,
        maxAgeMs: this.#o.idleCheckIntervalMs,
        signal: this.#stop.signal,
      }),
    );
    if (id !== this.#conversationId || reading.ticket === this.#lastIdleTicket) return;
    this.#lastIdleTicket = reading.ticket;
    const summaries = reading.summaries;
    // A reading requested before the latest events may be older than them: it does not count as idle.
    this.#idleReadings = isIdle(asObject(summaries[id])) && reading.ticket > this.#eventTicket ? this.#idleReadings + 1 : 0;
    if (this.#idleReadings >= 2 && this.#tracker.turnActive) {
      // A reconcile first, so a turn that closed on the wire closes by its own step.
      await this.reconcile();
      this.#emit(this.#tracker.applyRunStatus({ status: RUN_STATUS.IDLE, fullyIdle: true }));
    }
    const next = this.#rotation.next(id, summaries);
    if (next !== undefined) this.#rotate(next);
  }

  #rotate(next: string): void {
    const previous = this.#conversationId;
    this.#conversationId = next;
    this.#tracker = createTrajectoryTracker({ conversationId: next });
    this.#frontier = new StepFrontier();
    this.#idleReadings = 0;
    this.#o.publish([{ type: "conversation_rotated", conversationId: next, previousConversationId: previous }]);
    this.#connection.abort();
    void this.reconcile().catch(() => undefined);
  }
}

/** A watcher event's frame, taken off the event so the event no longer holds it. */
function takeUpdate(event: { update: StreamUpdate }): StreamUpdate {
  const update = event.update;
  (event as { update: StreamUpdate | undefined }).update = undefined;
  return update;
}
