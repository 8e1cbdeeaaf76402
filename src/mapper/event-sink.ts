/**
 * The tracker's output buffer: every part of the tracker appends here, and
 * each `apply…` call hands the buffer over in one piece, so events keep the
 * order in which their causes were read.
 */
import type { DiagnosticCode, MapperEvent, Status, StatusReason, WaitingFor } from "./events.js";

/** Where a diagnostic points: the step, when known. */
export type Where = { trajectoryId?: string; stepIndex?: number };

/** The step that caused an edge; a USER_INPUT of unknown position has no index. */
export type StepWhere = { trajectoryId: string; stepIndex?: number };

/** Collects one call's events in order. */
export class EventSink {
  #out: MapperEvent[] = [];

  constructor(readonly conversationId: string) {}

  push(event: MapperEvent): void {
    this.#out.push(event);
  }

  diagnostic(code: DiagnosticCode, message: string, where: Where = {}): void {
    this.#out.push({ type: "diagnostic", conversationId: this.conversationId, ...where, code, message });
  }

  status(status: Status, reason: StatusReason, where: StepWhere): void {
    // Literals, not spreads: this runs per step of a snapshot, and V8 copies spreads generically.
    this.#out.push(
      where.stepIndex === undefined
        ? { type: "status", conversationId: this.conversationId, trajectoryId: where.trajectoryId, status, reason }
        : { type: "status", conversationId: this.conversationId, trajectoryId: where.trajectoryId, stepIndex: where.stepIndex, status, reason },
    );
  }

  /** The `waiting` edge, with what the session waits for. */
  waiting(waitingFor: WaitingFor, where: StepWhere): void {
    const { trajectoryId, stepIndex } = where;
    this.#out.push(
      stepIndex === undefined
        ? { type: "status", conversationId: this.conversationId, trajectoryId, status: "waiting", reason: "interaction_pending", waitingFor }
        : { type: "status", conversationId: this.conversationId, trajectoryId, stepIndex, status: "waiting", reason: "interaction_pending", waitingFor },
    );
  }

  /** The events since the last flush; the sink starts empty again. */
  flush(): MapperEvent[] {
    const out = this.#out;
    this.#out = [];
    return out;
  }
}
