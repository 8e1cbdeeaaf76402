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
 */
import { TmuxError } from "../errors.js";
import type { PaneRef } from "../discovery/types.js";
import type { EventOf, MapperEvent, Status, WaitingFor } from "../mapper/index.js";

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
  /** How often the status row is read while the wire is idle (ms). */
  intervalMs: number;
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

  constructor(options: BackgroundTaskWatchOptions) {
    this.#o = options;
  }

  /** The reading loop runs (reading, or pausing between readings). */
  get reading(): boolean {
    return this.#running;
  }

  /** Wire events on their way to consumers (see {@link BackgroundTaskFold.pass}); starts reading when the wire went idle. */
  pass(events: MapperEvent[]): MapperEvent[] {
    const out = this.fold.pass(events);
    if (this.fold.wireIdle) this.kick();
    return out;
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
    while (!signal.aborted && !this.#done && this.fold.wireIdle) {
      await this.#readOnce(pane);
      if (signal.aborted || this.#done || !this.fold.wireIdle) return;
      await (this.#o.sleep ?? sleep)(this.#o.intervalMs, signal);
    }
  }

  async #readOnce(pane: PaneRef): Promise<void> {
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
      return;
    }
    if (this.#o.signal.aborted) return;
    const edge = this.fold.read(tasks, this.#o.conversationId());
    if (edge !== undefined) this.#o.publish([edge]);
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

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
