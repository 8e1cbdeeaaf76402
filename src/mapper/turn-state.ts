/**
 * Whether agy is mid-turn, and the `status` edges that open and close a turn
 * (see docs/events.md, `status`). The other parts of the tracker decide when
 * an edge happens; this keeps each edge from firing twice.
 */
import { RUN_STATUS } from "../protocol/wire-names.js";
import type { Status, StatusReason } from "./events.js";
import type { EventSink, StepWhere } from "./event-sink.js";
import type { RunStatusInput } from "./tracker-api.js";

/** The turn flag of one tracker and its edges. */
export class TurnState {
  /** True between a turn's first USER_INPUT and its close. */
  active = false;

  constructor(readonly sink: EventSink) {}

  /** A USER_INPUT opens a turn, unless one is open already. */
  start(where: StepWhere): void {
    if (this.active) return;
    this.active = true;
    this.sink.status("running", "turn_started", where);
  }

  /** Closes an open turn with its edge; nothing when no turn is open. */
  end(status: Status, reason: StatusReason, where: StepWhere): void {
    if (!this.active) return;
    this.active = false;
    this.sink.status(status, reason, where);
  }

  /** The idle backstop: agy says the run is fully idle, and nothing waits on the user. */
  runIdle(input: RunStatusInput, waiting: boolean): void {
    if (input.status !== RUN_STATUS.IDLE || input.fullyIdle === false) return;
    if (!this.active || waiting) return;
    this.active = false;
    this.sink.push({ type: "status", conversationId: this.sink.conversationId, status: "idle", reason: "run_idle" });
  }
}
