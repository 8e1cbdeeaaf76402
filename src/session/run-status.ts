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

