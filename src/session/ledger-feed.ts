/**
 * A session's interaction ledger and those who listen to it: every event the
 * session publishes is folded once, and each change is told to the
 * `interactions` subscribers. A subscriber that throws costs nobody else
 * anything.
 */
import type { EventOf, MapperEvent } from "../mapper/index.js";
import { createInteractionLedger, type LedgerChange } from "./interaction-ledger.js";
import type { SessionInteractions } from "./types.js";

/** How many resolved interactions a session's ledger keeps. */
const RETAIN = 100;

export class LedgerFeed {
  readonly #ledger = createInteractionLedger({ retain: RETAIN });
  readonly #listeners = new Set<(change: LedgerChange) => void>();

  /** Folds a published event in and tells subscribers what changed. */
  fold(event: MapperEvent): void {
    const change = this.#ledger.apply(event);
    if (change === undefined) return;
    for (const listener of [...this.#listeners]) {
      try {
        listener(change);
      } catch {
        // A subscriber that throws loses nothing of the session's own state.
      }
    }
  }

  /** The request of an interaction the ledger still holds. */
  request(interactionId: string): EventOf<"interaction_requested"> | undefined {
    return this.#ledger.get(interactionId)?.request;
  }

  /** What `AgySession.interactions` is. */
  readonly view: SessionInteractions = {
    snapshot: () => this.#ledger.snapshot(),
    subscribe: (listener) => {
      this.#listeners.add(listener);
      return () => this.#listeners.delete(listener);
    },
  };
}
