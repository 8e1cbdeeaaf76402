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
/**
 * By type, then status: two lookups of strings the tracker already holds
 * (the memoised suffixes, whose hashes V8 keeps), where one joined key would
 * be a new string to hash for every step of a snapshot.
 */
const interned = new Map<string, Map<string, SettledStep>>();
let internedCount = 0;

/** The shared record of a settled step of this type and status. */
export function settledStep(stepType: string, status: string): SettledStep {
  let byStatus = interned.get(stepType);
  const found = byStatus?.get(status);
  if (found !== undefined) return found;
  // Flattened copies: a suffix sliced off a step's type string would keep the whole step text alive.
  const record = new SettledStep(flat(stepType), flat(status));
  if (internedCount < INTERN_LIMIT) {
    if (byStatus === undefined) {
      byStatus = new Map();
      interned.set(record.stepType, byStatus);
    }
    byStatus.set(record.status, record);
    internedCount++;
  }
  return record;
}

/** A copy of `text` that shares no memory with the string it was sliced from. */
function flat(text: string): string {
  return text.length > 256 ? text : ` ${text}`.slice(1);
}

/** One trajectory's steps by index: live state, or what is kept once settled. */
export type Slot = LiveStep | SettledStep | undefined;
