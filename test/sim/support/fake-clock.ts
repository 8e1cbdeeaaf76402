/**
 * A manual SimClock: time moves only when the test says so, so prompt
 * timeouts and scenario delays are deterministic.
 */
import type { SimClock, SimTimer } from "../../../src/sim/engine/sim-clock.js";

interface Pending {
  id: number;
  at: number;
  fn: () => void;
}

export class FakeClock implements SimClock {
  #now: number;
  #nextId = 1;
  #timers: Pending[] = [];

  constructor(startMs = Date.UTC(2026, 7, 2, 4, 49, 8, 449)) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): SimTimer {
    const id = this.#nextId++;
    this.#timers.push({ id, at: this.#now + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(timer: SimTimer): void {
    this.#timers = this.#timers.filter((t) => t.id !== timer);
  }

  /** Number of timers not yet fired. */
  get pendingTimers(): number {
    return this.#timers.length;
  }

  /** Moves time forward by `ms`, firing due timers in order and letting promise chains run between them. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    // Timers that keep re-arming at no delay would spin forever; a test fails instead.
    for (let fired = 0; ; fired += 1) {
      if (fired > 100_000) throw new Error(`advance(${ms}) fired ${fired} timers without reaching its target; a timer keeps re-arming`);
      await flush();
      const due = this.#timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (due === undefined) break;
      this.#timers = this.#timers.filter((t) => t !== due);
      this.#now = Math.max(this.#now, due.at);
      due.fn();
    }
    this.#now = target;
    await flush();
  }
}

async function flush(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
}
