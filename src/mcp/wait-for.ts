/**
 * `wait_for`: until the turn is idle, an interaction is pending, or an event
 * of a type arrives — at once when the condition already holds — bounded by
 * `timeoutMs`, with a progress notification every `progressIntervalMs` for a
 * client that asked for progress, and ended early by the client's cancel.
 */
import type { MapperEventType } from "../mapper/index.js";
import type { ConversationLog, InteractionRequested, LoggedEvent, LogStatus } from "./conversation-log.js";

export interface WaitRequest {
  until: "idle" | "pending_interaction" | "event";
  eventType?: MapperEventType | undefined;
  timeoutMs: number;
  /** Only what comes after this event id counts. */
  since?: number | undefined;
}

export interface WaitOutcome {
  outcome: "idle" | "pending_interaction" | "event" | "failed" | "timed_out";
  status: LogStatus;
  pending: InteractionRequested[];
  event?: LoggedEvent["event"];
  /** The log position the outcome was read at: `since` for what comes next. */
  cursor: number;
  waitedMs: number;
}

export interface WaitEffects {
  /** Milliseconds, monotonic enough for a bound. */
  now(): number;
  setTimer(ms: number, fn: () => void): () => void;
  /** A progress notification (only when the client asked for progress). */
  progress?: (elapsedMs: number, totalMs: number, message: string) => void;
  progressIntervalMs: number;
  signal: AbortSignal;
}

/** What the condition says about the log now: an outcome, or undefined to keep waiting. */
function check(log: ConversationLog, request: WaitRequest, from: number): Pick<WaitOutcome, "outcome" | "event"> | undefined {
  const fresh = () => log.after(from, Number.MAX_SAFE_INTEGER);
  switch (request.until) {
    case "pending_interaction":
      if (log.pending().length > 0) return { outcome: "pending_interaction" };
      return log.status() === "failed" ? { outcome: "failed" } : undefined;
    case "idle": {
      if (request.since === undefined) {
        const status = log.status();
        if (status === "idle") return { outcome: "idle" };
        if (status === "failed") return { outcome: "failed" };
        return undefined;
      }
      // After a cursor, only an edge after it counts: the turn it marks may not have started yet.
      for (const { event } of fresh()) {
        if (event.type === "status" && event.status === "idle") return { outcome: "idle", event };
        if (event.type === "status" && event.status === "failed") return { outcome: "failed", event };
      }
      return undefined;
    }
    case "event":
      for (const { event } of fresh()) if (event.type === request.eventType) return { outcome: "event", event };
      return undefined;
  }
}

export function waitFor(log: ConversationLog, request: WaitRequest, effects: WaitEffects): Promise<WaitOutcome> {
  const started = effects.now();
  // Without a cursor an event wait starts now; idle and pending read the present state.
  const from = request.since ?? log.lastId;
  const finish = (found: Pick<WaitOutcome, "outcome" | "event">): WaitOutcome => ({
    ...found,
    status: log.status(),
    pending: log.pending(),
    cursor: log.lastId,
    waitedMs: Math.max(0, effects.now() - started),
  });
  const at = check(log, request, from);
  if (at !== undefined || request.timeoutMs === 0) return Promise.resolve(finish(at ?? { outcome: "timed_out" }));

  return new Promise<WaitOutcome>((resolve) => {
    const cleanups: Array<() => void> = [];
    const done = (found: Pick<WaitOutcome, "outcome" | "event">) => {
      for (const cleanup of cleanups.splice(0)) cleanup();
      resolve(finish(found));
    };
    cleanups.push(
      log.subscribe(() => {
        const now = check(log, request, from);
        if (now !== undefined) done(now);
      }),
    );
    cleanups.push(effects.setTimer(request.timeoutMs, () => done({ outcome: "timed_out" })));
    const progress = effects.progress;
    if (progress !== undefined) {
      const what = request.until === "event" ? `an event ${request.eventType ?? ""}` : request.until === "idle" ? "the turn to end" : "a pending interaction";
      const tick = () => {
        const elapsed = effects.now() - started;
        progress(Math.min(elapsed, request.timeoutMs), request.timeoutMs, `waiting for ${what}; status ${log.status()}`);
        stopTick = effects.setTimer(effects.progressIntervalMs, tick);
      };
      let stopTick = effects.setTimer(effects.progressIntervalMs, tick);
      cleanups.push(() => stopTick());
    }
    const onAbort = () => done({ outcome: "timed_out" });
    if (effects.signal.aborted) onAbort();
    else {
      effects.signal.addEventListener("abort", onAbort, { once: true });
      cleanups.push(() => effects.signal.removeEventListener("abort", onAbort));
    }
  });
}
