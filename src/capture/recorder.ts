/**
 * Records one conversation of a live agy into a capture directory: the
 * `StreamAgentStateUpdates` frames with their timing (stream projection),
 * `GetCascadeTrajectorySteps` snapshots (poll projection: polled, and read
 * at every state change, since a gate can park without a frame, spike-notes
 * §5.2), `GetAllCascadeTrajectories` summaries, the TUI's screen at every
 * state change seen on RPC (a gate raised or answered, a turn started, idle)
 * and every interaction resolved, by anyone. Only reads: nothing is sent to
 * agy that could change it. Everything goes through the redactor before the
 * sink, so nothing raw reaches disk.
 */
import { watchAgentStateUpdates } from "../rpc/stream-watcher.js";
import type { AgyRpcClient } from "../rpc/client.js";
import { createTrajectoryTracker } from "../mapper/trajectory-tracker.js";
import type { MapperEvent } from "../mapper/events.js";
import { readScreen } from "../tmux/screen-model.js";
import { AgyBridgeError } from "../errors.js";
import { RUN_STATUS, STEP_STATUS } from "../protocol/wire-names.js";
import { ANSWERS_FILE, META_FILE, SCREENS_DIR, seqLabel, STEPS_DIR, STREAM_DIR, SUMMARIES_DIR, timeLabel, type CaptureMeta } from "./capture-format.js";
import type { CaptureSink } from "./capture-sink.js";
import type { Redactor } from "./redaction/redactor.js";

export type CaptureClient = Pick<AgyRpcClient, "getCascadeTrajectorySteps" | "getAllCascadeTrajectories" | "streamAgentStateUpdates">;

export interface CaptureClock {
  now(): number;
  /** Resolves after `ms`, or early when `signal` fires. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export interface RecordOptions {
  client: CaptureClient;
  conversationId: string;
  /** The pane's screen as `capture-pane` text; absent when the pane is not known. */
  capturePane?: (() => Promise<string>) | undefined;
  sink: CaptureSink;
  redactor: Redactor;
  clock: CaptureClock;
  /** Stop after this long (ms). */
  durationMs?: number | undefined;
  /**
   * Stop once a turn that ran during the capture has ended and agy confirms
   * the conversation is idle: its run status IDLE, no step waiting.
   */
  untilIdle?: boolean | undefined;
  /** Snapshot poll interval; default 250 ms. A snapshot is written only when it changed. */
  pollMs?: number | undefined;
  /** Ends the capture early (Ctrl-C): what was recorded is kept and `meta.json` written. */
  signal: AbortSignal;
  /** `meta.json` without the conversation id (the recorder adds its placeholder) and the date. */
  meta: Omit<CaptureMeta, "conversationId" | "capturedAt">;
  /** Told of each state change, for progress lines; never given secrets (ids are redacted). */
  onProgress?: ((line: string) => void) | undefined;
}

export interface CaptureResult {
  snapshots: number;
  frames: number;
  summaries: number;
  screens: number;
  answers: number;
  /** Why the capture ended. */
  ended: "duration" | "idle" | "aborted";
}

/** How long a screen may lag behind RPC before it is recorded as it is. */
const SCREEN_SETTLE_MS = 1_000;
const SCREEN_POLL_MS = 20;
/** How long `untilIdle` keeps recording after the turn ended, for frames still on their way. */
const IDLE_DRAIN_MS = 500;

function isStateChange(event: MapperEvent): boolean {
  return event.type === "interaction_requested" || event.type === "interaction_resolved" || event.type === "status";
}

/** The screen state that shows the last state change among `events`, as a test of a screen state. */
function expectedScreen(events: readonly MapperEvent[]): ((state: string) => boolean) | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i] as MapperEvent;
    if (event.type === "interaction_requested") return (state) => state === "prompt";
    if (event.type === "interaction_resolved") return (state) => state !== "prompt";
    if (event.type === "status") {
      if (event.status === "running") return (state) => state === "busy";
      if (event.status === "idle") return (state) => state === "ready";
      if (event.status === "waiting") return (state) => state === "prompt";
      return undefined;
    }
  }
  return undefined;
}

/** Runs one capture; resolves when it ends (duration, idle, or `signal`). */
export async function recordCapture(options: RecordOptions): Promise<CaptureResult> {
  return new Recording(options).run();
}

class Recording {
  readonly #o: RecordOptions;
  readonly #start: number;
  readonly #stop = new AbortController();
  readonly #tracker;
  readonly #counts = { snapshots: 0, frames: 0, summaries: 0, screens: 0, answers: 0 };
  #ended: CaptureResult["ended"] = "aborted";
  #lastSnapshot = "";
  #lastSummary = "";
  #lastScreen = "";
  readonly #screenNames = new Set<string>();
  #streams = 0;
  #turnSeen = false;
  #draining = false;
  /** State changes applied so far (frames are applied as they arrive, ahead of their screens). */
  #changes = 0;
  #idle = true;
  /** The last snapshot read had a step WAITING. */
  #waiting = false;
  #failure: unknown;
  #queue: Promise<void> = Promise.resolve();

  constructor(options: RecordOptions) {
    this.#o = options;
    this.#start = options.clock.now();
    this.#tracker = createTrajectoryTracker({ conversationId: options.conversationId });
  }

  #t(): number {
    return this.#o.clock.now() - this.#start;
  }

  async run(): Promise<CaptureResult> {
    const o = this.#o;
    const signal = AbortSignal.any([o.signal, this.#stop.signal]);
    const capturedAt = new Date(o.clock.now()).toISOString();
    await this.#serial(async () => {
      await this.#summary(signal);
      await this.#snapshot(signal);
      await this.#screen("start", signal);
    });
    const timers: Promise<void>[] = [this.#poll(signal), this.#watch(signal)];
    if (o.durationMs !== undefined) {
      timers.push(
        o.clock.sleep(o.durationMs, signal).then(() => {
          if (!signal.aborted) this.#end("duration");
        }),
      );
    }
    await Promise.all(timers);
    if (this.#failure !== undefined) throw AgyBridgeError.from(this.#failure);
    // The last word: what agy and the screen show as the capture ends.
    const final = AbortSignal.timeout(10_000);
    await this.#serial(async () => {
      await this.#snapshot(final);
      await this.#summary(final);
      await this.#screen("end", final);
    });
    o.sink.writeJson(META_FILE, { ...o.meta, capturedAt, conversationId: o.redactor.id(o.conversationId) } satisfies CaptureMeta);
    return { ...this.#counts, ended: this.#ended };
  }

  #end(why: CaptureResult["ended"]): void {
    if (this.#stop.signal.aborted) return;
    this.#ended = why;
    this.#stop.abort();
  }

  /** One thing at a time: frames, polls and screens never interleave their reads and writes. */
  #serial(work: () => Promise<void>): Promise<void> {
    const next = this.#queue.then(work, work);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #watch(signal: AbortSignal): Promise<void> {
    try {
      for await (const event of watchAgentStateUpdates(this.#o.client, { conversationId: this.#o.conversationId, signal })) {
        if (event.type === "connected") {
          this.#streams += 1;
          this.#tracker.markReconnected();
          continue;
        }
        if (event.type === "disconnected") {
          if (event.retryInMs === undefined && event.reason !== undefined) throw event.reason;
          continue;
        }
        const t = this.#t();
        const frame = { update: event.update };
        this.#o.sink.appendLine(`${STREAM_DIR}/${seqLabel(this.#streams)}.ndjson`, { t, frame: this.#o.redactor.json(frame) });
        this.#counts.frames += 1;
        const events = this.#tracker.applyStreamUpdate(event.update);
        if (events.some(isStateChange)) this.#changes += 1;
        // Frames are written as they come; screens and snapshots follow in turn, never holding a frame back.
        this.#serial(() => this.#onEvents(events, t, signal)).catch((error: unknown) => this.#fail(error, signal));
      }
    } catch (error) {
      this.#fail(error, signal);
    }
  }

  /** A read that failed while the capture ran ends it with that error; one cut short by the end is no failure. */
  #fail(error: unknown, signal: AbortSignal): void {
    if (signal.aborted) return;
    this.#failure ??= error;
    this.#end("aborted");
  }

  async #poll(signal: AbortSignal): Promise<void> {
    const every = this.#o.pollMs ?? 250;
    while (!signal.aborted) {
      await this.#o.clock.sleep(every, signal);
      if (signal.aborted) return;
      try {
        await this.#serial(async () => {
          const events = await this.#snapshot(signal);
          await this.#onEvents(events, this.#t(), signal);
        });
      } catch (error) {
        this.#fail(error, signal);
        return;
      }
    }
  }

  /** Screens, snapshots and summaries at every state change seen on RPC; answers as they resolve. */
  async #onEvents(events: readonly MapperEvent[], t: number, signal: AbortSignal): Promise<void> {
    const changed = events.some(isStateChange);
    for (const event of events) {
      if (event.type === "interaction_requested") {
        this.#o.onProgress?.(`gate raised at step ${event.stepIndex}`);
      } else if (event.type === "interaction_resolved") {
        const answer = {
          t,
          interactionId: event.interactionId,
          stepIndex: event.stepIndex,
          kind: event.kind,
          outcome: event.outcome,
          stepStatus: event.stepStatus,
          ...(event.decidedBy === undefined ? {} : { decidedBy: event.decidedBy }),
        };
        this.#o.sink.appendLine(ANSWERS_FILE, this.#o.redactor.json(answer));
        this.#counts.answers += 1;
        this.#o.onProgress?.(`gate at step ${event.stepIndex} resolved: ${event.outcome}`);
      } else if (event.type === "status") {
        if (event.status === "running" || event.status === "waiting") {
          this.#turnSeen = true;
          this.#idle = false;
        } else this.#idle = true;
        this.#o.onProgress?.(`status ${event.status}`);
      }
    }
    if (!changed || signal.aborted) return;
    await this.#screen("change", signal, expectedScreen(events));
    const more = await this.#snapshot(signal);
    await this.#summary(signal);
    if (more.length > 0) await this.#onEvents(more, this.#t(), signal);
    if (this.#o.untilIdle === true && this.#turnSeen && this.#idle && !this.#draining) {
      this.#draining = true;
      void this.#settle(signal);
    }
  }

  /**
   * The turn looks over from the events: let frames still on their way in,
   * for a bounded moment, then end only once agy's own run status confirms
   * it — a planner's text can close a turn in the events while agy goes on
   * to a gate that parks without a frame (spike-notes §5.2). Until then it
   * asks again at each poll; a new turn meanwhile starts it over.
   */
  async #settle(signal: AbortSignal): Promise<void> {
    await this.#o.clock.sleep(IDLE_DRAIN_MS, signal);
    while (!signal.aborted) {
      let confirmed = false;
      try {
        await this.#serial(async () => {
          if (!this.#idle || signal.aborted) return;
          confirmed = await this.#agyIdle(signal);
        });
      } catch (error) {
        this.#fail(error, signal);
        return;
      }
      if (!this.#idle) {
        this.#draining = false;
        return;
      }
      if (confirmed) {
        this.#end("idle");
        return;
      }
      await this.#o.clock.sleep(this.#o.pollMs ?? 250, signal);
    }
  }

  /** agy's word on the conversation: run status IDLE, and no step WAITING in the summary or in a fresh snapshot. */
  async #agyIdle(signal: AbortSignal): Promise<boolean> {
    const answer = await this.#o.client.getAllCascadeTrajectories({}, { signal });
    this.#recordSummary(answer);
    const summary = answer.trajectorySummaries?.[this.#o.conversationId];
    const events = await this.#snapshot(signal);
    await this.#onEvents(events, this.#t(), signal);
    // A conversation agy's summaries do not list has only its snapshot's word.
    if (summary !== undefined && (summary.status !== RUN_STATUS.IDLE || (summary.waitingSteps?.length ?? 0) > 0)) return false;
    return this.#idle && !this.#waiting;
  }

  /** Reads a snapshot, maps it, and writes it when it differs from the last one written. */
  async #snapshot(signal: AbortSignal): Promise<MapperEvent[]> {
    const answer = await this.#o.client.getCascadeTrajectorySteps({ conversationId: this.#o.conversationId }, { signal });
    const t = this.#t();
    const events = this.#tracker.applySnapshot({ steps: answer.steps, stepOffset: 0 });
    this.#waiting = answer.steps.some((step) => (step as { status?: unknown }).status === STEP_STATUS.WAITING);
    if (events.some(isStateChange)) this.#changes += 1;
    const text = JSON.stringify(answer.steps);
    if (text !== this.#lastSnapshot) {
      this.#lastSnapshot = text;
      this.#counts.snapshots += 1;
      this.#o.sink.writeJson(`${STEPS_DIR}/${seqLabel(this.#counts.snapshots)}-${timeLabel(t)}.json`, this.#o.redactor.json({ steps: answer.steps }));
    }
    return events;
  }

  async #summary(signal: AbortSignal): Promise<void> {
    this.#recordSummary(await this.#o.client.getAllCascadeTrajectories({}, { signal }));
  }

  #recordSummary(answer: unknown): void {
    const text = JSON.stringify(answer);
    if (text === this.#lastSummary) return;
    this.#lastSummary = text;
    this.#counts.summaries += 1;
    this.#o.sink.writeJson(`${SUMMARIES_DIR}/${seqLabel(this.#counts.summaries)}-${timeLabel(this.#t())}.json`, this.#o.redactor.json(answer));
  }

  /**
   * The pane's screen, when it changed. agy's TUI draws a change a moment
   * after RPC shows it, so the pane is read until it shows what RPC says
   * (`expect`), for at most {@link SCREEN_SETTLE_MS}; then as it is (a
   * dialog agy keeps open after an RPC answer never goes, spike-notes §5.4).
   * A pane that cannot be read costs the screen, not the capture.
   */
  async #screen(why: string, signal: AbortSignal, expect?: (state: string) => boolean): Promise<void> {
    const capture = this.#o.capturePane;
    if (capture === undefined || signal.aborted) return;
    let raw: string;
    try {
      raw = await capture();
      const deadline = this.#o.clock.now() + SCREEN_SETTLE_MS;
      const changes = this.#changes;
      // A newer change seen meanwhile takes its own screen: this one is recorded as it is now.
      while (expect !== undefined && !expect(readScreen(raw).state) && this.#o.clock.now() < deadline && !signal.aborted && this.#changes === changes) {
        await this.#o.clock.sleep(SCREEN_POLL_MS, signal);
        raw = await capture();
      }
    } catch (error) {
      this.#o.onProgress?.(`no screen at ${why}: ${AgyBridgeError.from(error).message}`);
      return;
    }
    if (raw === this.#lastScreen) return;
    this.#lastScreen = raw;
    const state = readScreen(raw).state;
    let t = this.#t();
    // Names sort in time order and never collide: a second screen in the same millisecond moves to the next.
    while (this.#screenNames.has(`${timeLabel(t)}-${state}`)) t += 1;
    this.#screenNames.add(`${timeLabel(t)}-${state}`);
    this.#counts.screens += 1;
    this.#o.sink.writeText(`${SCREENS_DIR}/${timeLabel(t)}-${state}.txt`, this.#o.redactor.screen(raw));
  }
}
