/**
 * A tracker slot: what the tracker keeps for one step index of a trajectory.
 */
import type { LiveText } from "./live-text.js";
import type { JsonObject } from "./step-access.js";

/** A step seen but not settled yet. A settled step's slot holds its latest raw version instead. */
export class LiveStep {
  /** An interaction was requested (or found unusable) for this step. */
  requested = false;
  text: LiveText | undefined = undefined;
  reasoning: LiveText | undefined = undefined;
  constructor(
    /** The latest version agy sent. */
    public raw: JsonObject,
  ) {}
}

/** One trajectory's steps by index: live state, or the raw step once settled. */
export type Slot = LiveStep | JsonObject | undefined;
