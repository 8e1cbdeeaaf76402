/**
 * Reading agy's run status (spike-notes §4.7, §10.5): a turn is over only
 * when a fresh reading says IDLE with nothing waiting on the user.
 */
import { RUN_STATUS } from "../protocol/wire-names.js";
import type { StreamUpdate } from "../protocol/wire-schemas.js";

/** A summary saying IDLE with nothing waiting (`fullyIdle`, else no `waitingSteps`). */
export function isIdle(summary: Record<string, unknown> | undefined): boolean {
  if (summary?.["status"] !== RUN_STATUS.IDLE) return false;
  const waiting = Array.isArray(summary["waitingSteps"]) && (summary["waitingSteps"] as unknown[]).length > 0;
  return typeof summary["fullyIdle"] === "boolean" ? summary["fullyIdle"] : !waiting;
}

/** The update without its run status, and whether that status said the run is idle. */
export function withoutRunStatus(update: StreamUpdate): { update: StreamUpdate; idle: boolean } {
  const main = update.mainTrajectoryUpdate;
  const status = update.status ?? main?.status;
  const fullyIdle = typeof update.fullyIdle === "boolean" ? update.fullyIdle : main?.fullyIdle;
  const idle = status === RUN_STATUS.IDLE && fullyIdle !== false;
  const { status: _s, fullyIdle: _f, ...rest } = update;
  if (main === undefined) return { update: rest, idle };
  const { status: _ms, fullyIdle: _mf, ...mainRest } = main;
  return { update: { ...rest, mainTrajectoryUpdate: mainRest }, idle };
}

/**
 * The summaries as a run-status reading keeps them (summaries-board.ts holds
 * the latest one per server): each `waitingSteps` entry cut to its
 * `stepIndex`. agy puts the whole waiting step in every entry, and a
 * conversation with many parked gates made the kept reading megabytes
 * (bench/scale.bench.ts, issue 23); the backstop and the `/clear` check need
 * only how many wait, and where.
 */
export function slimSummaries(summaries: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [id, summary] of Object.entries(summaries)) {
    const waiting = (summary as Record<string, unknown> | undefined)?.["waitingSteps"];
    out[id] = Array.isArray(waiting)
      ? { ...(summary as Record<string, unknown>), waitingSteps: waiting.map((entry) => (isStepIndexed(entry) ? { stepIndex: entry.stepIndex } : {})) }
      : summary;
  }
  return out;
}

function isStepIndexed(entry: unknown): entry is { stepIndex: unknown } {
  return typeof entry === "object" && entry !== null && "stepIndex" in entry;
}
