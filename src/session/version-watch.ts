/**
 * Which agy a session talks to, kept current: read at attach and again after
 * every reconnect, because agy updates itself in place and a self-update
 * restarts it (new pid, maybe new ports; spike-notes §14 #1). A change is
 * published once as `agy_version_changed`. agy is never started to learn
 * its version (discovery's agy-version.ts says why).
 *
 * A read that finds nothing (the process vanished between two reads) does
 * not forget a known version of the same pid: only a read of another pid
 * may say "unknown now".
 */
import type { MapperEvent } from "../mapper/index.js";
import type { PaneRef } from "../discovery/types.js";
import type { AgyVersionState, LocateVersion } from "./types.js";

/** Discovery's `lookUpAgyVersion`, loaded on first use (its own file: not the barrel's 27 modules, on a command's path). */
export const defaultLocateVersion: LocateVersion = async (query, signal) => {
  const { lookUpAgyVersion } = await import("../discovery/version-lookup.js");
  const found = await lookUpAgyVersion(query, { signal });
  const state: AgyVersionState = { agyVersion: found.agyVersion, agyVersionSource: found.agyVersionSource, simulator: found.simulator };
  if (found.pid !== undefined) state.pid = found.pid;
  return state;
};

export interface VersionWatchOptions {
  /** Where to read: the bound pid and URL now, the pane when known. */
  where(): Promise<{ pid?: number; url: string; pane?: PaneRef }>;
  locate: LocateVersion | false;
  conversationId(): string;
  publish(events: MapperEvent[]): void;
  signal: AbortSignal;
}

export class VersionWatch {
  readonly #o: VersionWatchOptions;
  #state: AgyVersionState = { agyVersion: null, agyVersionSource: null, simulator: false };
  readonly #listeners = new Set<(state: AgyVersionState) => void>();
  /** Reads run one after another, so two reconnects never race to publish one change twice. */
  #queue: Promise<void> = Promise.resolve();

  constructor(options: VersionWatchOptions) {
    this.#o = options;
  }

  get state(): AgyVersionState {
    return this.#state;
  }

  onChange(listener: (state: AgyVersionState) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** What the caller already knows (discovery's binding, or a hint): taken as it is, without an event. */
  seed(state: AgyVersionState): void {
    this.#state = state;
  }

  /** Reads again; `initial` reads only fill in, never publish. Resolves when the read is applied. */
  refresh(initial = false): Promise<void> {
    const locate = this.#o.locate;
    if (locate === false) return this.#queue;
    this.#queue = this.#queue.then(async () => {
      if (this.#o.signal.aborted) return;
      let next: AgyVersionState;
      try {
        next = await locate(await this.#o.where(), this.#o.signal);
      } catch {
        return;
      }
      this.#apply(next, initial);
    });
    return this.#queue;
  }

  /** A state read from a new binding (a relocate found agy elsewhere). */
  offer(next: AgyVersionState): void {
    this.#queue = this.#queue.then(() => this.#apply(next, false));
  }

  #apply(next: AgyVersionState, initial: boolean): void {
    const previous = this.#state;
    const samePid = next.pid === undefined || previous.pid === undefined || next.pid === previous.pid;
    if (next.agyVersion === null && samePid && previous.agyVersion !== null) return;
    this.#state = next;
    if (initial || next.agyVersion === previous.agyVersion) return;
    const event: MapperEvent = {
      type: "agy_version_changed",
      conversationId: this.#o.conversationId(),
      from: previous.agyVersion,
      to: next.agyVersion,
      source: next.agyVersion === null ? null : next.agyVersionSource,
      ...(next.pid === undefined ? {} : { pid: next.pid }),
    };
    this.#o.publish([event]);
    for (const listener of this.#listeners) listener(next);
  }
}
