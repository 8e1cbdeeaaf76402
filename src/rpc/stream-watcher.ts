/**
 * Keeps a `StreamAgentStateUpdates` subscription alive. agy's stream has no
 * keepalive and no resume token, blocks while the conversation is idle, and
 * may end cleanly when a turn settles (agy 1.0.10), so the watcher reconnects
 * with bounded backoff, uses a fresh `subscriberId` for every connection (a
 * repeated id closes the earlier subscription, newer builds), and announces
 * every (re)connection so the consumer can reconcile with a snapshot.
 */
import { randomUUID } from "node:crypto";
import { AgyBridgeError, RpcError } from "../errors.js";
import type { AgyRpcClient } from "./client.js";
import type { StreamUpdate } from "../protocol/wire-schemas.js";
import { sleep as pause } from "../util/sleep.js";

export type WatchEvent =
  /** A stream was accepted; take a snapshot now, frames may have been missed. */
  | { type: "connected"; subscriberId: string; attempt: number }
  | { type: "update"; update: StreamUpdate }
  /**
   * The stream ended. `reason` undefined means a clean end. `retryInMs` is the
   * wait before the next attempt, or undefined when the watcher stops (HTTP 401:
   * re-discover the CSRF token instead of retrying).
   */
  | { type: "disconnected"; reason: AgyBridgeError | undefined; retryInMs: number | undefined };

export interface WatchBackoff {
  initialMs: number;
  maxMs: number;
  factor: number;
}

export interface WatchTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface WatchOptions {
  conversationId: string;
  /** Ends the watch promptly, closing the stream and clearing every timer. */
  signal: AbortSignal;
  /**
   * Reconnect when no frame arrives for this long. Default 0 (disabled):
   * agy's stream is silent while idle, so only a caller that knows the
   * conversation is busy should set it.
   */
  readIdleTimeoutMs?: number;
  /** Default 250 ms doubling to 10 s; reset after every frame. */
  backoff?: Partial<WatchBackoff>;
  /** Timer functions; defaults to the global ones. */
  timers?: WatchTimers;
  /** Waits between attempts; resolves early when `signal` fires. Defaults to `timers`. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Makes subscriber ids; defaults to random UUIDs. */
  newSubscriberId?: () => string;
}

export type StreamSource = Pick<AgyRpcClient, "streamAgentStateUpdates">;

export const DEFAULT_WATCH_BACKOFF: Readonly<WatchBackoff> = { initialMs: 250, maxMs: 10_000, factor: 2 };

const IDLE = Symbol("idle");

type Outcome = { kind: "open" } | { kind: "next"; result: IteratorResult<StreamUpdate, void> };

/** Watches a conversation's stream until `signal` fires or the server refuses the token. */
export async function* watchAgentStateUpdates(client: StreamSource, options: WatchOptions): AsyncGenerator<WatchEvent, void, undefined> {
  const { signal, conversationId } = options;
  const backoff = { ...DEFAULT_WATCH_BACKOFF, ...options.backoff };
  const timers: WatchTimers = options.timers ?? {
    setTimeout: (callback, ms) => setTimeout(callback, ms),
    clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  };
  const sleep = options.sleep ?? ((ms: number, s: AbortSignal) => pause(ms, s, timers));
  const idleMs = options.readIdleTimeoutMs ?? 0;
  const newId = options.newSubscriberId ?? randomUUID;
  let delay = backoff.initialMs;

  for (let attempt = 1; !signal.aborted; attempt++) {
    const subscriberId = newId();
    const connection = new AbortController();
    const stop = () => connection.abort();
    signal.addEventListener("abort", stop, { once: true });
    let markOpen!: () => void;
    const opened = new Promise<Outcome>((resolve) => (markOpen = () => resolve({ kind: "open" })));
    const iterator = client
      .streamAgentStateUpdates({ conversationId, subscriberId }, { signal: connection.signal, timeoutMs: 0, onOpen: () => markOpen() })
      [Symbol.asyncIterator]();
    let reason: AgyBridgeError | undefined;
    let waitingForOpen = true;
    try {
      let pending = nextOutcome(iterator);
      // A `let` outside the loop, cleared after each yield: a frame (a whole history, on a stream's
      // first) must not stay reachable from this generator while it waits for the next one.
      let outcome: Outcome | typeof IDLE | undefined;
      for (;;) {
        outcome = await withIdle(waitingForOpen ? Promise.race([opened, pending]) : pending, idleMs, timers);
        if (outcome === IDLE) {
          reason = new AgyBridgeError("timeout", `no stream frame within ${idleMs} ms; reconnecting`);
          break;
        }
        if (waitingForOpen) {
          waitingForOpen = false;
          yield { type: "connected", subscriberId, attempt };
        }
        if (outcome.kind === "open") continue;
        if (outcome.result.done === true) break;
        delay = backoff.initialMs;
        let update: StreamUpdate | undefined = outcome.result.value;
        outcome = undefined;
        yield { type: "update", update };
        update = undefined;
        pending = nextOutcome(iterator);
      }
    } catch (error) {
      if (signal.aborted) return;
      reason = AgyBridgeError.from(error, "transport");
    } finally {
      signal.removeEventListener("abort", stop);
      connection.abort();
      // Lets the client's stream run its cleanup; queued behind any pending next().
      void iterator.return?.().catch(() => undefined);
    }
    if (signal.aborted) return;
    if (reason instanceof RpcError && reason.isUnauthenticated) {
      yield { type: "disconnected", reason, retryInMs: undefined };
      return;
    }
    const retryInMs = delay;
    yield { type: "disconnected", reason, retryInMs };
    if (signal.aborted) return;
    delay = Math.min(backoff.maxMs, Math.max(1, delay * backoff.factor));
    await sleep(retryInMs, signal);
  }
}

function nextOutcome(iterator: AsyncIterator<StreamUpdate, void>): Promise<Outcome> {
  const next = iterator.next().then((result): Outcome => ({ kind: "next", result }));
  // An abandoned next() (idle timeout, abort) rejects later; that is expected.
  next.catch(() => undefined);
  return next;
}

function withIdle<T>(promise: Promise<T>, ms: number, timers: WatchTimers): Promise<T | typeof IDLE> {
  if (ms <= 0) return promise;
  let handle: unknown;
  const idle = new Promise<typeof IDLE>((resolve) => {
    handle = timers.setTimeout(() => resolve(IDLE), ms);
  });
  return Promise.race([promise, idle]).finally(() => timers.clearTimeout(handle));
}
