/**
 * Who decided an interaction: the `decidedBy` a caller gave rides on the
 * `interaction_resolved` its answer caused, and on no other. The stream can
 * show a step leave WAITING before the answer's call returns, and a person
 * may answer the same step in the TUI meanwhile (agy then refuses our answer
 * with "input not registered"), so a resolution of a step whose answer is on
 * the wire waits — with everything published after it, to keep the order —
 * until that call settles. A call that failed without agy saying no (the
 * connection broke after the request left) most likely got through, and
 * keeps its attribution. Only a verdict (`approved`, `denied`, `answered`)
 * is attributed: a timeout or a stop was nobody's answer.
 */
import type { MapperEvent } from "../mapper/index.js";

const VERDICTS = new Set(["approved", "denied", "answered"]);

export class ResolutionAttribution {
  readonly #publish: (events: MapperEvent[]) => void;
  /** decidedBy by interaction id. */
  readonly #who = new Map<string, string>();
  /** Answers on the wire, by interaction id (a count: a retry may overlap a late settle). */
  readonly #sending = new Map<string, number>();
  /** Interactions one of our answers reached: a later refused duplicate (a retarget that came second) does not undo it. */
  readonly #took = new Set<string>();
  readonly #held: MapperEvent[][] = [];

  constructor(publish: (events: MapperEvent[]) => void) {
    this.#publish = publish;
  }

  /** An answer to `interactionId` decided by `decidedBy` is about to be sent. */
  sending(interactionId: string, decidedBy: string): void {
    this.#who.set(interactionId, decidedBy);
    this.#sending.set(interactionId, (this.#sending.get(interactionId) ?? 0) + 1);
  }

  /** The answer's call settled: `took` unless agy refused it (or it never left). */
  sent(interactionId: string, took: boolean): void {
    const left = (this.#sending.get(interactionId) ?? 1) - 1;
    if (left > 0) this.#sending.set(interactionId, left);
    else this.#sending.delete(interactionId);
    if (took) this.#took.add(interactionId);
    else if (!this.#took.has(interactionId)) this.#who.delete(interactionId);
    this.#flush(false);
  }

  /** Publishes `events`, or holds them behind a resolution whose answer is on the wire. */
  offer(events: MapperEvent[]): void {
    if (this.#held.length > 0 || this.#waitsOnAnswer(events)) {
      this.#held.push(events);
      return;
    }
    this.#publish(this.#tag(events));
  }

  /** Publishes whatever is held (the session is closing). */
  release(): void {
    this.#flush(true);
  }

  #waitsOnAnswer(events: MapperEvent[]): boolean {
    return events.some((e) => e.type === "interaction_resolved" && this.#sending.has(e.interactionId));
  }

  #flush(all: boolean): void {
    while (this.#held.length > 0) {
      const batch = this.#held[0]!;
      if (!all && this.#waitsOnAnswer(batch)) return;
      this.#held.shift();
      this.#publish(this.#tag(batch));
    }
  }

  #tag(events: MapperEvent[]): MapperEvent[] {
    if (this.#who.size === 0) return events;
    return events.map((event) => {
      if (event.type !== "interaction_resolved") return event;
      const decidedBy = this.#who.get(event.interactionId);
      // A resolution comes once per interaction: the record is done with.
      this.#who.delete(event.interactionId);
      this.#took.delete(event.interactionId);
      return decidedBy === undefined || !VERDICTS.has(event.outcome) ? event : { ...event, decidedBy };
    });
  }
}
