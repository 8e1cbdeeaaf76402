/**
 * A SimClock that runs short timers for real but holds long ones (prompt
 * timeouts) until the test fires them, so a timeout happens exactly when the
 * test says while scenario delays still play on their own.
 */
import { systemClock, type SimClock, type SimTimer } from "../../../src/sim/engine/sim-clock.js";

export class ManualTimeouts implements SimClock {
  readonly #thresholdMs: number;
  #held = new Map<number, () => void>();
  #nextId = 1;

  constructor(thresholdMs: number) {
    this.#thresholdMs = thresholdMs;
  }

  now(): number {
    return Date.now();
  }

  setTimeout(fn: () => void, ms: number): SimTimer {
    if (ms < this.#thresholdMs) return systemClock.setTimeout(fn, ms);
    const id = this.#nextId++;
    this.#held.set(id, fn);
    return { held: id };
  }

  clearTimeout(timer: SimTimer): void {
    if (typeof timer === "object" && timer !== null && "held" in timer) this.#held.delete((timer as { held: number }).held);
    else systemClock.clearTimeout(timer);
  }

  /** How many timers are held. */
  heldCount(): number {
    return this.#held.size;
  }

  /** Fires every held timer now; returns how many fired. */
  fireHeld(): number {
    const due = [...this.#held.values()];
    this.#held.clear();
    for (const fn of due) fn();
    return due.length;
  }
}
