/**
 * Hands one event sequence to several consumers. Each consumer has its own
 * bounded queue, so a slow one never holds up the others; when a queue
 * overflows, that consumer's backlog is replaced by a `diagnostic` saying how
 * many events it lost and a resync (the state it needs to act: open
 * interactions and the turn status) — never a silent loss.
 */
import type { MapperEvent } from "../mapper/index.js";

export interface EventFanout {
  /**
   * Registers a consumer when iteration starts; it begins with the resync
   * events (`resync` true, the default), nothing (false), or the events given.
   * The iterator ends when `signal` fires or the fanout closes.
   */
  subscribe(signal?: AbortSignal, resync?: boolean | readonly MapperEvent[]): AsyncIterable<MapperEvent>;
  publish(events: readonly MapperEvent[]): void;
  /** Ends every consumer after it drained what it has; `error` is thrown to them instead. */
  close(error?: Error): void;
  readonly consumers: number;
}

export interface EventFanoutOptions {
  /** Most events queued per consumer. */
  capacity: number;
  /** What a new or resynchronised consumer must know now. */
  resync(): MapperEvent[];
  /** The `diagnostic` that replaces a lost backlog. */
  lost(count: number): MapperEvent;
}

class Consumer {
  queue: MapperEvent[] = [];
  head = 0;
  wake: (() => void) | undefined;
  done = false;
}

export function createEventFanout(options: EventFanoutOptions): EventFanout {
  const consumers = new Set<Consumer>();
  let closed = false;
  let failure: Error | undefined;

  const notify = (consumer: Consumer) => {
    const wake = consumer.wake;
    consumer.wake = undefined;
    wake?.();
  };

  return {
    get consumers() {
      return consumers.size;
    },
    publish(events) {
      if (events.length === 0) return;
      for (const consumer of consumers) {
        const backlog = consumer.queue.length - consumer.head;
        // A consumer that has caught up takes any one batch (a snapshot's history is one batch).
        if (backlog > 0 && backlog + events.length > options.capacity) {
          const lost = backlog + events.length;
          consumer.queue = [options.lost(lost), ...options.resync()];
          consumer.head = 0;
        } else {
          for (const event of events) consumer.queue.push(event);
        }
        notify(consumer);
      }
    },
    close(error) {
      closed = true;
      failure = error;
      for (const consumer of consumers) notify(consumer);
    },
    subscribe(signal, resync = true) {
      return {
        [Symbol.asyncIterator]() {
          const consumer = new Consumer();
          consumer.queue = resync === true ? options.resync() : resync === false ? [] : [...resync];
          consumers.add(consumer);
          const onAbort = () => notify(consumer);
          signal?.addEventListener("abort", onAbort, { once: true });
          const finish = () => {
            consumer.done = true;
            consumers.delete(consumer);
            signal?.removeEventListener("abort", onAbort);
          };
          return {
            async next(): Promise<IteratorResult<MapperEvent>> {
              for (;;) {
                if (consumer.done || signal?.aborted === true) {
                  finish();
                  return { done: true, value: undefined };
                }
                if (consumer.head < consumer.queue.length) {
                  const value = consumer.queue[consumer.head++]!;
                  if (consumer.head > 1024 && consumer.head * 2 > consumer.queue.length) {
                    consumer.queue = consumer.queue.slice(consumer.head);
                    consumer.head = 0;
                  }
                  return { done: false, value };
                }
                if (closed) {
                  finish();
                  if (failure !== undefined) throw failure;
                  return { done: true, value: undefined };
                }
                await new Promise<void>((resolve) => (consumer.wake = resolve));
              }
            },
            async return(): Promise<IteratorResult<MapperEvent>> {
              finish();
              return { done: true, value: undefined };
            },
          };
        },
      };
    },
  };
}
