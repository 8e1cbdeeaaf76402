/**
 * The sessions a front door supervises, kept in step with where they come
 * from: a refresh lists them (this machine's discovery, the fleet's index),
 * attaches the new ones a few at a time, and drops the ones that went away.
 * Each door says what it keeps beside a session and how it reads it
 * ({@link SupervisorOptions.follow}): `serve` an event log for SSE, `mcp` a
 * numbered conversation log. Written once, so a session that vanishes, a
 * reading that ends, an attach that fails or a refresh that runs twice are
 * handled the same way behind every door (docs/architecture.md).
 */

/** What a source lists: one conversation, with whatever the door wants to know of it. */
export interface Described {
  readonly conversationId: string;
}

/** What the door keeps for a session it follows, and its reading of the session. */
export interface Following<F> {
  /** The door's own state for the session (an event log, a conversation log). */
  state: F;
  /** Resolves or rejects when the session's stream ends; the session is dropped then. */
  reading: Promise<void>;
}

/** Why a session stopped being followed. */
export type DropReason = "vanished" | "ended" | "closed";

export interface Supervised<D extends Described, S, F> {
  readonly conversationId: string;
  readonly descriptor: D;
  readonly session: S;
  readonly state: F;
}

export interface SupervisorOptions<D extends Described, S extends { close(): Promise<void> }, F> {
  /** The sessions on offer now. */
  list(signal: AbortSignal): Promise<D[]>;
  /**
   * Keeps a session a refresh did not list (its server was busy and a probe
   * timed out) while this says it is still there. Default: dropped.
   */
  retain?: (descriptor: D) => boolean;
  attach(descriptor: D, signal: AbortSignal): Promise<S>;
  /** Starts following a session just attached; `signal` aborts when it is dropped. */
  follow(descriptor: D, session: S, signal: AbortSignal): Following<F>;
  /** Told after a session is dropped (its session is being closed). */
  onDropped?: (supervised: Supervised<D, S, F>, why: DropReason) => void;
  /** Sessions attached at once by a refresh (each reads its history while attaching); default 8. */
  attachConcurrency?: number;
  /** Told about failures to list, attach or read, one sentence each (no secrets). */
  onProblem?: (message: string) => void;
}

export interface Supervisor<D extends Described, S, F> {
  /** Lists, attaches new sessions, drops vanished ones. Concurrent calls share one run. */
  refresh(): Promise<void>;
  /** Resolves once the first refresh has finished, or after `timeoutMs`, whichever is first (at once before any refresh). */
  firstRefresh(timeoutMs: number): Promise<void>;
  list(): Supervised<D, S, F>[];
  get(conversationId: string): Supervised<D, S, F> | undefined;
  /**
   * Follows a session attached by other means (the one a command line
   * named). When that conversation is followed already, `session` is closed
   * and the one followed is returned.
   */
  adopt(descriptor: D, session: S): Promise<Supervised<D, S, F>>;
  /** Called when a session is added or dropped (not by {@link close}). */
  onChange(listener: () => void): () => void;
  /** Aborted by {@link close}. */
  readonly signal: AbortSignal;
  /** Drops every session and closes it; later refreshes do nothing. */
  close(): Promise<void>;
}

const ATTACH_CONCURRENCY = 8;

interface Entry<D extends Described, S, F> extends Supervised<D, S, F> {
  readonly abort: AbortController;
}

export function createSupervisor<D extends Described, S extends { close(): Promise<void> }, F>(options: SupervisorOptions<D, S, F>): Supervisor<D, S, F> {
  const entries = new Map<string, Entry<D, S, F>>();
  const listeners = new Set<() => void>();
  const lifetime = new AbortController();
  let running: Promise<void> | undefined;
  let first: Promise<void> | undefined;
  const changed = () => {
    for (const listener of [...listeners]) listener();
  };

  /** Drops a session and closes it; the promise is its close, which never rejects. */
  function drop(entry: Entry<D, S, F>, why: DropReason): Promise<void> {
    if (entries.get(entry.conversationId) !== entry) return Promise.resolve();
    entries.delete(entry.conversationId);
    entry.abort.abort();
    const closed = entry.session.close().catch(() => undefined);
    options.onDropped?.(entry, why);
    // Closing says nothing to the listeners: the door is going away with them.
    if (why !== "closed") changed();
    return closed;
  }

  function add(descriptor: D, session: S): Entry<D, S, F> {
    const abort = new AbortController();
    const { state, reading } = options.follow(descriptor, session, abort.signal);
    const entry: Entry<D, S, F> = { conversationId: descriptor.conversationId, descriptor, session, state, abort };
    entries.set(entry.conversationId, entry);
    changed();
    void reading
      .catch((error: unknown) => options.onProblem?.(`conversation ${entry.conversationId}: ${(error as Error).message}`))
      .finally(() => void drop(entry, "ended"));
    return entry;
  }

  async function attachOne(descriptor: D, signal: AbortSignal): Promise<void> {
    try {
      const session = await options.attach(descriptor, signal);
      if (lifetime.signal.aborted || entries.has(descriptor.conversationId)) {
        await session.close();
        return;
      }
      add(descriptor, session);
    } catch (error) {
      options.onProblem?.(`attaching to conversation ${descriptor.conversationId} failed: ${(error as Error).message}`);
    }
  }

  async function round(signal: AbortSignal): Promise<void> {
    let found: D[];
    try {
      found = await options.list(signal);
    } catch (error) {
      options.onProblem?.(`listing sessions failed: ${(error as Error).message}`);
      return;
    }
    if (lifetime.signal.aborted) return;
    const seen = new Set(found.map((d) => d.conversationId));
    for (const entry of [...entries.values()]) {
      if (!seen.has(entry.conversationId) && options.retain?.(entry.descriptor) !== true) void drop(entry, "vanished");
    }
    // A few attaches at a time: each reads its conversation's history, and a hundred at once
    // would hold a hundred histories in memory together (docs/scale.md).
    const listed = new Set<string>();
    const fresh = found.filter((d) => !entries.has(d.conversationId) && !listed.has(d.conversationId) && listed.add(d.conversationId));
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let descriptor = fresh[next++]; descriptor !== undefined; descriptor = fresh[next++]) await attachOne(descriptor, signal);
    };
    await Promise.all(Array.from({ length: Math.min(options.attachConcurrency ?? ATTACH_CONCURRENCY, fresh.length) }, worker));
  }

  /**
   * One signal per refresh, tied to the lifetime by one listener removed when
   * the refresh ends: whatever `list` and `attach` hang on it goes with it,
   * instead of piling up on a signal that lives as long as the process.
   */
  async function run(): Promise<void> {
    if (lifetime.signal.aborted) return;
    const controller = new AbortController();
    const stop = () => controller.abort();
    lifetime.signal.addEventListener("abort", stop, { once: true });
    try {
      await round(controller.signal);
    } finally {
      lifetime.signal.removeEventListener("abort", stop);
    }
  }

  return {
    signal: lifetime.signal,
    refresh() {
      running ??= run().finally(() => {
        running = undefined;
      });
      first ??= running;
      return running;
    },
    async firstRefresh(timeoutMs) {
      if (first === undefined) return;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([first.catch(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(timer);
    },
    list: () => [...entries.values()],
    get: (conversationId) => entries.get(conversationId),
    async adopt(descriptor, session) {
      const known = entries.get(descriptor.conversationId);
      if (known !== undefined || lifetime.signal.aborted) {
        await session.close();
        if (known === undefined) throw new Error("the supervisor is closed");
        return known;
      }
      return add(descriptor, session);
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      lifetime.abort();
      await Promise.all([...entries.values()].map((entry) => drop(entry, "closed")));
    },
  };
}
