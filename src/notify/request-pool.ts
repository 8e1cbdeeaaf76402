/**
 * A bound on requests in flight: at most `size` run at once, the rest wait
 * their turn in order. Web Push sends through one pool for the whole process
 * ({@link PUSH_POOL}), so however many subscriptions and notices there are,
 * serve holds at most that many push connections (each with its own
 * deadline), and a push service that never answers cannot eat descriptors.
 */

export interface RequestPool {
  readonly size: number;
  /** In flight now. */
  readonly active: number;
  /** Waiting for a free place. */
  readonly waiting: number;
  /** Runs `work` once a place is free; the place is given back when it settles. */
  run<T>(work: () => Promise<T>): Promise<T>;
}

export function createRequestPool(size: number): RequestPool {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`a request pool needs at least one place, not ${size}`);
  let active = 0;
  const queue: Array<() => void> = [];
  // A place given back goes straight to the next in line (active stays), so nobody slips in between.
  const release = () => {
    const next = queue.shift();
    if (next !== undefined) next();
    else active -= 1;
  };
  return {
    size,
    get active() {
      return active;
    },
    get waiting() {
      return queue.length;
    },
    async run(work) {
      if (active >= size) await new Promise<void>((resolve) => queue.push(resolve));
      else active += 1;
      try {
        return await work();
      } finally {
        release();
      }
    },
  };
}

/** Push requests in flight at once, process-wide. */
export const PUSH_POOL_SIZE = 8;
export const PUSH_POOL: RequestPool = createRequestPool(PUSH_POOL_SIZE);
