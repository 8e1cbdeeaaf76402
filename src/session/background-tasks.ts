/**
 * `waitingFor: "background_task"` (docs/events.md): agy's wire has no word
 * for a background task. The turn ends on the wire (the conversation reads
 * idle) while agy 1.2.x keeps a task running and says so only on its TUI's
 * status row, `· N task(s) · /tasks` (spike-notes §13 #26, #27; not busy,
 * and it may hold agy's answer for a long time, §14 #11). So while the
 * wire-derived status is `idle` and the session knows agy's pane, the
 * session reads the screen on a bounded cadence and folds the row into the
 * status stream: `waiting` (`background_task`) while the row shows N > 0,
 * `idle` again when it goes. Any other wire status stops the reading until
 * the wire is idle again; a pane that vanished stops it for good, with a
 * `pane_gone` diagnostic.
 *
 * The cadence backs off: a task is started by a turn, so its row shows soon
 * after the wire goes idle; while the row keeps showing no task, each pause
 * doubles, up to `maxIntervalMs` (a hundred idle sessions on a host would
 * otherwise run fifty `tmux capture-pane` a second). A row with tasks, or a
 * changed row, goes back to `intervalMs`, and so does every wire status
 * edge, which also ends a pause at once.
 */
import { AgyBridgeError, TmuxError } from "../errors.js";
import type { PaneRef } from "../discovery/types.js";
import type { EventOf, MapperEvent, Status, WaitingFor } from "../mapper/index.js";
import type { TurnDriver } from "./types.js";
import { sleep } from "../util/sleep.js";

type StatusEvent = EventOf<"status">;

/** A status as consumers last saw it: the status and what it waits for. */
interface Shown {
  status: Status;
  waitingFor: WaitingFor | undefined;
  /** Made by this fold (from the screen), not by the wire. */
  ours: boolean;
}

/**
 * The pure part: the wire's status events on their way to consumers, and
 * the status row's task count, folded into one status stream with no
 * status given twice in a row.
 */
export class BackgroundTaskFold {
  #wireIdle = false;
  /** A wire status went by: the tracker's seed is no longer needed. */
  #wireSeen = false;
  #last: Shown | undefined;
  /** The last status consumers saw is this fold's `waiting` (`background_task`). */
  #waiting = false;

  /** The wire's status is `idle`: the only state in which the status row is read. */
  get wireIdle(): boolean {
    return this.#wireIdle;
  }

  /** The wire's state before any status went by (the tracker's, at attach): idle when no turn runs and nothing waits. */
  seed(idle: boolean): void {
    if (!this.#wireSeen) this.#wireIdle = idle;
  }

  /**
   * Events from the wire: every one passes, except a status the same as the
   * one this fold last gave (same status, same `waitingFor`). A wire status
   * ends this fold's `waiting`.
   */
  pass(events: MapperEvent[]): MapperEvent[] {
    let out: MapperEvent[] | undefined;
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!;
      const drop = event.type === "status" && this.#wire(event);
      // Copied only once something is dropped: a batch without a status costs one pass.
      if (drop) out ??= events.slice(0, i);
      else out?.push(event);
    }
    return out ?? events;
  }

  /** Takes a wire status; true when it repeats the status this fold gave last. */
  #wire(event: StatusEvent): boolean {
    this.#wireSeen = true;
    this.#wireIdle = event.status === "idle";
    this.#waiting = false;
    const duplicate = this.#last?.ours === true && same(this.#last, event);
    this.#last = { status: event.status, waitingFor: event.waitingFor, ours: false };
    return duplicate;
  }

  /**
   * A reading of the status row (`tasks`: its N, 0 without the strip): the
   * status edge it makes, if any. Ignored unless the wire is idle.
   */
  read(tasks: number, conversationId: string): StatusEvent | undefined {
    if (!this.#wireIdle) return undefined;
    if (tasks > 0 && !this.#waiting) {
      this.#waiting = true;
      return this.#give({ type: "status", conversationId, status: "waiting", reason: "background_task_running", waitingFor: "background_task" });
    }
    if (tasks === 0 && this.#waiting) {
      this.#waiting = false;
      return this.#give({ type: "status", conversationId, status: "idle", reason: "background_task_ended" });
    }
    return undefined;
  }

  #give(event: StatusEvent): StatusEvent | undefined {
    if (this.#last !== undefined && same(this.#last, event)) return undefined;
    this.#last = { status: event.status, waitingFor: event.waitingFor, ours: true };
    return event;
  }
}

function same(shown: Shown, event: StatusEvent): boolean {
  return shown.status === event.status && shown.waitingFor === event.waitingFor;
}

export interface BackgroundTaskWatchOptions {
  /** How often the status row is read while the wire is idle (ms): the first pause, and the pause while tasks show. */
  intervalMs: number;
  /** The longest pause while the row keeps showing no task (ms); default 15 × `intervalMs`. */
  maxIntervalMs?: number;
  /** agy's pane, or undefined when none is known (then nothing is ever read). */
  pane(): Promise<PaneRef | undefined>;
  /** The N of the status row's `N task(s)` (0 without it); throws a `TmuxError` when the pane cannot be read. */
  readTasks(pane: PaneRef, signal: AbortSignal): Promise<number>;
  conversationId(): string;
  publish(events: MapperEvent[]): void;
  /** The session's lifetime: aborting it ends the reading. */
  signal: AbortSignal;
  /** Pauses `ms`; settles early when `signal` aborts. Default a timer. */
  sleep?(ms: number, signal: AbortSignal): Promise<void>;
}

/** Read failures in a row (other than a vanished pane) after which the reading stops. */
const FAILURES_BEFORE_GIVING_UP = 5;

/** Reads the status row while the wire is idle (see the file's comment). */
export class BackgroundTaskWatch {
  readonly fold = new BackgroundTaskFold();
  readonly #o: BackgroundTaskWatchOptions;
  #running = false;
  /** No pane, or the pane is gone: nothing is read any more. */
  #done = false;
  #failures = 0;
  /** The pause before the next reading. */
  #pauseMs: number;
  /** Ends the pause in progress (a wire status edge went by). */
  #wake = new AbortController();

  constructor(options: BackgroundTaskWatchOptions) {
    this.#o = options;
    this.#pauseMs = options.intervalMs;
  }

  /** The reading loop runs (reading, or pausing between readings). */
  get reading(): boolean {
    return this.#running;
  }

  /** Wire events on their way to consumers (see {@link BackgroundTaskFold.pass}); starts reading when the wire went idle. */
  pass(events: MapperEvent[]): MapperEvent[] {
    const out = this.fold.pass(events);
    if (events.some((e) => e.type === "status")) this.#restartCadence();
    if (this.fold.wireIdle) this.kick();
    return out;
  }

  /** A wire status edge: the next reading comes at once (or the loop ends, the wire not idle), then at the first cadence. */
  #restartCadence(): void {
    this.#pauseMs = this.#o.intervalMs;
    this.#wake.abort();
    this.#wake = new AbortController();
  }

  /** The tracker's state at attach (see {@link BackgroundTaskFold.seed}). */
  seed(idle: boolean): void {
    this.fold.seed(idle);
    if (this.fold.wireIdle) this.kick();
  }

  /** Starts the reading loop unless it runs, is done, or the wire is not idle. */
  kick(): void {
    if (this.#running || this.#done || this.#o.signal.aborted || !this.fold.wireIdle) return;
    this.#running = true;
    void this.#loop().finally(() => {
      this.#running = false;
    });
  }

  async #loop(): Promise<void> {
    const { signal } = this.#o;
    const pane = await this.#o.pane().catch(() => undefined);
    if (pane === undefined) {
      this.#done = true;
      return;
    }
    const longest = this.#o.maxIntervalMs ?? this.#o.intervalMs * 15;
    let last: number | undefined;
    let wake = this.#wake.signal;
    while (!signal.aborted && !this.#done && this.fold.wireIdle) {
      const tasks = await this.#readOnce(pane);
      if (signal.aborted || this.#done || !this.fold.wireIdle) return;
      if (wake.aborted) {
        // A wire status edge during the reading: read again at once, at the first cadence.
        wake = this.#wake.signal;
        last = undefined;
        continue;
      }
      // The same empty row again: wait longer; tasks, a change or a failed read: the first cadence.
      this.#pauseMs = tasks === 0 && last === 0 ? Math.min(this.#pauseMs * 2, longest) : this.#o.intervalMs;
      last = tasks;
      await (this.#o.sleep ?? sleep)(this.#pauseMs, AbortSignal.any([signal, wake]));
      if (wake.aborted) {
        // An edge ended the pause: the cadence starts over from the next reading.
        wake = this.#wake.signal;
        last = undefined;
      }
    }
  }

  /** One reading: the task count, or undefined when the row could not be read. */
  async #readOnce(pane: PaneRef): Promise<number | undefined> {
    let tasks: number;
    try {
      tasks = await this.#o.readTasks(pane, this.#o.signal);
      this.#failures = 0;
    } catch (error) {
      // A failure once the wire left idle is not counted: the next idle spell reads again, and says so then.
      if (this.#o.signal.aborted || !this.fold.wireIdle) return;
      this.#failures += 1;
      const gone = error instanceof TmuxError && (error.failure === "no_target" || error.failure === "no_server" || error.failure === "pane_dead");
      if (gone || this.#failures >= FAILURES_BEFORE_GIVING_UP) this.#giveUp(error, gone);
      return undefined;
    }
    if (this.#o.signal.aborted) return undefined;
    const edge = this.fold.read(tasks, this.#o.conversationId());
    if (edge !== undefined) this.#o.publish([edge]);
    return tasks;
  }

  #giveUp(error: unknown, gone: boolean): void {
    this.#done = true;
    const said = error instanceof Error ? error.message : String(error);
    const what = gone ? "agy's tmux pane is gone" : `agy's tmux pane could not be read ${this.#failures} times in a row`;
    this.#o.publish([
      {
        type: "diagnostic",
        conversationId: this.#o.conversationId(),
        code: "pane_gone",
        message: `${what} (${said}); background tasks on its status row are no longer watched for this session, attach again to watch them.`,
      },
    ]);
  }
}

/**
 * Status-row readings shared by the sessions on one pane (one agy process
 * can host several conversations, and the simulator hosts a hundred): a
 * reading taken, or in flight, less than `freshMs` ago is everyone's, so a
 * pane is captured at most about once per `freshMs` however many sessions
 * watch it. A failed reading is not kept.
 */
export class SharedRowReadings {
  readonly #recent = new Map<string, { at: number; value: Promise<number> }>();

  read(key: string, freshMs: number, read: () => Promise<number>, now = Date.now()): Promise<number> {
    const hit = this.#recent.get(key);
    if (hit !== undefined && now - hit.at < freshMs) return hit.value;
    for (const [k, v] of this.#recent) if (now - v.at >= freshMs) this.#recent.delete(k);
    const entry = { at: now, value: read() };
    this.#recent.set(key, entry);
    entry.value.catch(() => {
      if (this.#recent.get(key) === entry) this.#recent.delete(key);
    });
    return entry.value;
  }
}

/** The key of a pane across tmux servers. */
export function paneKey(pane: PaneRef): string {
  return `${pane.socketPath ?? ""}\u0000${pane.socketName ?? ""}\u0000${pane.target}`;
}

/** Status-row readings shared by every session of this process on the same pane. */
const ROW_READINGS = new SharedRowReadings();

/** What a session lends its background-task watch. */
export interface SessionTaskDeps {
  /** True when the caller gave the session its own turn driver: its readings are its own, never shared. */
  ownDriver: boolean;
  pane(): Promise<PaneRef | undefined>;
  driver(): Promise<TurnDriver>;
  conversationId(): string;
  publish(events: MapperEvent[]): void;
  signal: AbortSignal;
}

/**
 * A session's watch over agy's status row, from `backgroundTasks` of its
 * attach options (`true`, or `{ intervalMs }`, at least 10 ms). Only a pane
 * the driver can read is read: a fake driver without `readScreen` reads nothing.
 */
export function createBackgroundTaskWatch(option: true | { intervalMs?: number } | undefined, defaultMs: number, deps: SessionTaskDeps): BackgroundTaskWatch {
  const intervalMs = (typeof option === "object" ? option.intervalMs : undefined) ?? defaultMs;
  if (typeof intervalMs !== "number" || !Number.isFinite(intervalMs) || intervalMs < 10) {
    throw new AgyBridgeError("invalid_argument", `backgroundTasks.intervalMs must be a number of milliseconds, at least 10; got ${String(intervalMs)}.`);
  }
  return new BackgroundTaskWatch({
    intervalMs,
    pane: async () => {
      const pane = await deps.pane();
      return pane !== undefined && (await deps.driver()).readScreen !== undefined ? pane : undefined;
    },
    readTasks: async (pane, signal) => {
      const read = async (options: { signal?: AbortSignal }) => (await (await deps.driver()).readScreen!(pane, options)).backgroundTasks ?? 0;
      // On real tmux, one capture per pane about every half cadence, whichever of its sessions asks (no one session's signal ends it);
      // a driver of the caller's own is its own.
      return deps.ownDriver ? read({ signal }) : ROW_READINGS.read(paneKey(pane), intervalMs / 2, () => read({}));
    },
    conversationId: deps.conversationId,
    publish: deps.publish,
    signal: deps.signal,
  });
}
