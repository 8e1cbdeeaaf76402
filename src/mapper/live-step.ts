/**
 * A tracker slot: what the tracker keeps for one step index of a trajectory.
 * Never the raw step (issue 23): a step still moving keeps its type, status,
 * request flag and what was sent of its text; a settled step only a shared
 * (type, status) record, so a long history costs a pointer per step, not the
 * steps agy already holds. Whoever needs a step's content re-reads it from
 * agy (`GetCascadeTrajectorySteps` at its index), as an answer does.
 */
import type { LiveText } from "./live-text.js";

/** A step seen but not settled yet. */
export class LiveStep {
  /** An interaction was requested (or found unusable) for this step. */
  requested = false;
  text: LiveText | undefined = undefined;
  reasoning: LiveText | undefined = undefined;
  constructor(
    /** Its type suffix (`RUN_COMMAND`) and status suffix (`WAITING`), as last seen. */
    public stepType: string,
    public status: string,
  ) {}
}

/** What is kept of a settled step: shared by every step of the same type and status. */
export class SettledStep {
  constructor(
    readonly stepType: string,
    readonly status: string,
  ) {
    Object.freeze(this);
  }
}

/** Distinct (type, status) pairs are few; past this many an odd one gets its own record. */
const INTERN_LIMIT = 1024;
const interned = new Map<string, SettledStep>();

/** The shared record of a settled step of this type and status. */
export function settledStep(stepType: string, status: string): SettledStep {
  const key = `${stepType}\u0000${status}`;
  let record = interned.get(key);
  if (record === undefined) {
    // Flattened copies: a suffix sliced off a step's type string would keep the whole step text alive.
    record = new SettledStep(flat(stepType), flat(status));
    if (interned.size < INTERN_LIMIT) interned.set(flat(key), record);
  }
  return record;
}

/** A copy of `text` that shares no memory with the string it was sliced from. */
function flat(text: string): string {
  return text.length > 256 ? text : (` ${text}`).slice(1);
}

/** One trajectory's steps by index: live state, or what is kept once settled. */
export type Slot = LiveStep | SettledStep | undefined;
