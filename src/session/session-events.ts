/**
 * The session's side of `events()`: who gets which events when. The first
 * consumer starts with the conversation as read at attach (or the
 * interactions open then) plus everything published before it subscribed;
 * later consumers start at the present with the open interactions. Each
 * consumer then gets one `history_end`: everything after it is live. The
 * fanout keeps each consumer's queue bounded.
 */
import type { MapperEvent, PendingInteraction } from "../mapper/index.js";
import { createInteractionLedger } from "./interaction-ledger.js";
import { createEventFanout, type EventFanout } from "./event-fanout.js";
import type { EventsOptions } from "./types.js";

export interface SessionEventsOptions {
  capacity: number;
  /** The conversation followed now. */
  conversationId(): string;
  /** The interactions open now (the tracker's). */
  pending(): PendingInteraction[];
  /** agy's version now, carried on each consumer's `history_end` when known. */
  agyVersion?(): string | null;
}

export class SessionEvents {
  readonly #o: SessionEventsOptions;
  readonly #fanout: EventFanout;
  #first = true;
  /** Events published while nobody listened yet: the first consumer gets them. */
  #early: MapperEvent[] = [];
  #earlyLost = 0;

  constructor(options: SessionEventsOptions) {
    this.#o = options;
    this.#fanout = createEventFanout({
      capacity: options.capacity,
      resync: () => this.#open(),
      lost: (count) =>
        this.#lost(`This consumer fell ${count} events behind and they were dropped; the open interactions follow, re-read the conversation for the rest.`),
    });
  }

  publish(events: MapperEvent[]): void {
    if (this.#first) {
      // Kept for the first consumer; background consumers (below) get them live as well.
      const room = Math.max(0, this.#o.capacity - this.#early.length);
      for (const event of events.slice(0, room)) this.#early.push(event);
      this.#earlyLost += Math.max(0, events.length - room);
      if (this.#fanout.consumers === 0) return;
    }
    this.#fanout.publish(events);
  }

  /**
   * A consumer. `started` settles once the read at attach is done; `takeHistory`
   * hands over its events, once (only the first consumer asks), so the
   * session need not keep a long history after it was delivered.
   */
  subscribe(options: EventsOptions, signal: AbortSignal, started: Promise<unknown>, takeHistory: () => MapperEvent[]): AsyncIterable<MapperEvent> {
    // A background consumer (the policy runner) never takes the first consumer's place.
    const first = this.#first && options.background !== true;
    if (options.background !== true) this.#first = false;
    // Subscribed now, not at the first next(): events from here on are kept for this consumer.
    const live = this.#fanout.subscribe(signal, first ? [] : [...this.#open(), this.#historyEnd()])[Symbol.asyncIterator]();
    const takeEarly = () => {
      const early = this.#early;
      const lost = this.#earlyLost;
      this.#early = [];
      this.#earlyLost = 0;
      return { early, lost };
    };
    const lostEarly = (count: number) => this.#lost(`${count} events arrived before anyone listened and were dropped; re-read the conversation for them.`);
    const historyEnd = () => this.#historyEnd();
    return {
      async *[Symbol.asyncIterator]() {
        try {
          await started;
          // In a generator of its own: its frame, and the history it holds, ends with it (this one lives as long as the consumer).
          if (first) yield* opening(takeHistory, options.history !== false, takeEarly, historyEnd, lostEarly);
          for (;;) {
            const next = await live.next();
            if (next.done === true) return;
            yield next.value;
          }
        } finally {
          await live.return?.();
        }
      },
    };
  }

  close(): void {
    this.#fanout.close();
  }

  #open(): MapperEvent[] {
    const conversationId = this.#o.conversationId();
    return this.#o.pending().map((p) => ({
      type: "interaction_requested",
      conversationId,
      trajectoryId: p.trajectoryId,
      stepIndex: p.stepIndex,
      interactionId: p.interactionId,
      stepType: p.stepType,
      callId: p.callId,
      request: p.request,
    }));
  }

  #historyEnd(): MapperEvent {
    // Only when known: a history_end without it reads as before (unknown).
    const agyVersion = this.#o.agyVersion?.() ?? null;
    return { type: "history_end", conversationId: this.#o.conversationId(), ...(agyVersion === null ? {} : { agyVersion }) };
  }

  #lost(message: string): MapperEvent {
    return { type: "diagnostic", conversationId: this.#o.conversationId(), code: "events_dropped", message };
  }
}

/** The first consumer's opening: the history (or what it left open), `history_end`, then what arrived before it listened. */
function* opening(
  takeHistory: () => MapperEvent[],
  whole: boolean,
  takeEarly: () => { early: MapperEvent[]; lost: number },
  historyEnd: () => MapperEvent,
  lostEarly: (count: number) => MapperEvent,
): Generator<MapperEvent> {
  const read = takeHistory();
  if (whole) yield* read;
  else yield* openAt(read);
  const { early, lost } = takeEarly();
  yield historyEnd();
  if (lost > 0) yield lostEarly(lost);
  yield* early;
}

/** The interactions still open at the end of `history` (the ledger's fold, each once). */
function openAt(history: MapperEvent[]): MapperEvent[] {
  const ledger = createInteractionLedger();
  for (const event of history) ledger.apply(event);
  return ledger.openAll();
}
