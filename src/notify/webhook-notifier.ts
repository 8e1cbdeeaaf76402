/**
 * `--notify-webhook URL`: each interaction that needs a person, and its
 * resolution, POSTed as signed JSON (docs/notifications.md). The body is
 * built once per delivery, so its `id` and bytes are the same on every retry;
 * the timestamp and signature are made fresh for each attempt.
 */
import { randomBytes } from "node:crypto";
import { waitingForRequest } from "../mapper/index.js";
import type { Notifier, PendingNotice, ResolvedNotice } from "./notice.js";
import { createRetryQueue, type AttemptResult, type JobReport, type RetryPolicy } from "./retry-queue.js";
import { signWebhook, SIGNATURE_HEADER, TIMESTAMP_HEADER } from "./webhook-signature.js";

export interface WebhookDelivery {
  type: "interaction.pending" | "interaction.resolved";
  id: string;
  conversationId: string;
  interactionId: string;
  body: string;
}

/** A delivery's end, for the audit log: never holds the secret or the URL's path and query. */
export interface WebhookReport extends JobReport {
  notifier: string;
  /** The endpoint's origin (its path may carry a secret of the receiver's). */
  origin: string;
  delivery: WebhookDelivery;
}

export interface WebhookNotifierOptions {
  url: string;
  secret: string;
  /** `webhook:1`, … */
  name: string;
  retry?: RetryPolicy;
  /** Each delivery's end. */
  onReport?: (report: WebhookReport) => void;
  fetch?: typeof fetch;
  /** Default `() => new Date()`. */
  now?: () => Date;
  /** One attempt's deadline (default 10 000 ms). */
  attemptTimeoutMs?: number;
  /** For tests: the queue's timers and jitter. */
  queue?: { random?: () => number; setTimer?: (fn: () => void, ms: number) => unknown; clearTimer?: (handle: unknown) => void };
}

export function createWebhookNotifier(options: WebhookNotifierOptions): Notifier {
  const doFetch = options.fetch ?? fetch;
  const now = options.now ?? (() => new Date());
  const origin = new URL(options.url).origin;
  const attemptTimeoutMs = options.attemptTimeoutMs ?? 10_000;
  const lifetime = new AbortController();

  async function attempt(delivery: WebhookDelivery): Promise<AttemptResult> {
    const timestamp = Math.floor(now().getTime() / 1000);
    let response: Response;
    try {
      response = await doFetch(options.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": "agy-bridge",
          [TIMESTAMP_HEADER]: String(timestamp),
          [SIGNATURE_HEADER]: signWebhook(options.secret, timestamp, delivery.body),
        },
        body: delivery.body,
        redirect: "manual",
        signal: AbortSignal.any([lifetime.signal, AbortSignal.timeout(attemptTimeoutMs)]),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      return { ok: false, retry: true, error: cause ?? (error instanceof Error ? error.name : "error") };
    }
    await response.body?.cancel().catch(() => undefined);
    if (response.status >= 200 && response.status < 300) return { ok: true, status: response.status };
    // A 4xx other than timeout and rate limit will not change by itself.
    const retry = response.status >= 500 || response.status === 408 || response.status === 429;
    return { ok: false, retry, status: response.status, error: `HTTP ${response.status}` };
  }

  const queue = createRetryQueue<WebhookDelivery>({
    ...options.retry,
    ...options.queue,
    attempt,
    onDone: (delivery, report) => options.onReport?.({ ...report, notifier: options.name, origin, delivery }),
  });

  function send(type: WebhookDelivery["type"], notice: PendingNotice | ResolvedNotice, outcome: string | null): void {
    const id = `whd_${randomBytes(12).toString("hex")}`;
    // Field order as documented: receivers that log the body read it in this order.
    const body = JSON.stringify({
      type,
      id,
      time: now().toISOString(),
      conversationId: notice.conversationId,
      interactionId: notice.interactionId,
      host: notice.host,
      request: notice.request,
      outcome,
      url: notice.url,
      // Added last (extend, never reorder): what the session waits for while this request is open.
      waitingFor: waitingForRequest(notice.request),
    });
    queue.push({ type, id, conversationId: notice.conversationId, interactionId: notice.interactionId, body });
  }

  return {
    name: options.name,
    pending: (notice) => send("interaction.pending", notice, null),
    resolved: (notice) => send("interaction.resolved", notice, notice.outcome),
    async close() {
      lifetime.abort();
      await queue.close();
    },
  };
}
