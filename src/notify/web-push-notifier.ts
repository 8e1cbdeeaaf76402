/**
 * Web Push to every subscribed browser (RFC 8030 delivery, RFC 8291
 * `aes128gcm` encryption, RFC 8292 VAPID), with the `web-push` package
 * building each request and fetch sending it — so a push service on any
 * scheme the store allows can be reached, and nothing is written to the
 * console. A subscription its push service calls gone (404, 410) is dropped.
 *
 * The payload (docs/http-api.md): `{type, conversationId, interactionId,
 * title, body, url, …}`; the `Topic` is the interaction, so a resolution
 * replaces a pending notice the push service still holds.
 */
import webpush from "web-push";
import type { Notifier, PendingNotice, ResolvedNotice } from "./notice.js";
import { noticeBody, noticeTitle, outcomeText } from "./notice-text.js";
import type { PushSubscriptionJson, PushSubscriptionStore } from "./push-subscriptions.js";
import { subscriptionId } from "./push-subscriptions.js";
import { createRetryQueue, type AttemptResult, type JobReport, type RetryPolicy } from "./retry-queue.js";

/** The plaintext limit: 4096-byte records minus the RFC 8291 header (86), the tag (16) and the delimiter, with room. */
const MAX_PAYLOAD_BYTES = 3800;

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
}

/** A new VAPID key pair (P-256, base64url), stored once per install. */
export function generateVapidKeys(): VapidKeys {
  const keys = webpush.generateVAPIDKeys();
  return { publicKey: keys.publicKey, privateKey: keys.privateKey };
}

/** Parses a stored key pair; undefined when it is not one. */
export function parseVapidKeys(text: string): VapidKeys | undefined {
  try {
    const parsed = JSON.parse(text) as Partial<VapidKeys>;
    if (typeof parsed.publicKey === "string" && typeof parsed.privateKey === "string") return { publicKey: parsed.publicKey, privateKey: parsed.privateKey };
  } catch {
    // Not JSON: not a key pair.
  }
  return undefined;
}

export interface PushReport extends JobReport {
  /** The subscription's id (its endpoint stays out of logs). */
  subscription: string;
  type: "interaction.pending" | "interaction.resolved";
  interactionId: string;
}

export interface WebPushNotifierOptions {
  keys: VapidKeys;
  store: PushSubscriptionStore;
  /** The VAPID `sub` claim: a mailto: or https: contact (default `mailto:agy-bridge@localhost.invalid`). */
  subject?: string;
  retry?: RetryPolicy;
  onReport?: (report: PushReport) => void;
  fetch?: typeof fetch;
  /** Seconds the push service keeps an undelivered message (default 3600). */
  ttlSeconds?: number;
}

interface PushJob {
  subscription: PushSubscriptionJson;
  type: PushReport["type"];
  interactionId: string;
  payload: string;
}

export function createWebPushNotifier(options: WebPushNotifierOptions): Notifier {
  const doFetch = options.fetch ?? fetch;
  const lifetime = new AbortController();
  const vapidDetails = { subject: options.subject ?? "mailto:agy-bridge@localhost.invalid", publicKey: options.keys.publicKey, privateKey: options.keys.privateKey };

  async function attempt(job: PushJob): Promise<AttemptResult> {
    const { endpoint, keys } = job.subscription;
    const details: webpush.RequestDetails = webpush.generateRequestDetails({ endpoint, keys, expirationTime: job.subscription.expirationTime ?? null }, Buffer.from(job.payload), {
      vapidDetails,
      TTL: options.ttlSeconds ?? 3600,
      urgency: job.type === "interaction.pending" ? "high" : "normal",
      topic: job.interactionId.replace(/[^A-Za-z0-9_-]/g, "").slice(0, 32),
    });
    let response: Response;
    try {
      response = await doFetch(details.endpoint, {
        method: details.method,
        headers: details.headers as Record<string, string>,
        body: details.body as Uint8Array,
        redirect: "manual",
        signal: AbortSignal.any([lifetime.signal, AbortSignal.timeout(10_000)]),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      return { ok: false, retry: true, error: cause ?? (error instanceof Error ? error.name : "error") };
    }
    await response.body?.cancel().catch(() => undefined);
    if (response.status >= 200 && response.status < 300) return { ok: true, status: response.status };
    if (response.status === 404 || response.status === 410) {
      // The browser unsubscribed or the subscription expired: it will never work again.
      await options.store.remove(job.subscription.endpoint).catch(() => undefined);
      return { ok: false, retry: false, status: response.status, error: "the push service says the subscription is gone; it was removed" };
    }
    const retry = response.status >= 500 || response.status === 429 || response.status === 408;
    return { ok: false, retry, status: response.status, error: `HTTP ${response.status}` };
  }

  const queue = createRetryQueue<PushJob>({
    maxAttempts: 5,
    ...options.retry,
    attempt,
    onDone: (job, report) => options.onReport?.({ ...report, subscription: subscriptionId(job.subscription.endpoint), type: job.type, interactionId: job.interactionId }),
  });

  function send(type: PushJob["type"], notice: PendingNotice | ResolvedNotice, extra: Record<string, unknown>, title: string, after = ""): void {
    // `after` (the escalation's announcement) is kept whole; the request text is what gets cut.
    const build = (body: string) => JSON.stringify({ type, conversationId: notice.conversationId, interactionId: notice.interactionId, title, body: `${body}${after}`, url: notice.url, ...extra });
    let body = noticeBody(notice.request);
    let payload = build(body);
    // Push services take about 4 KB after encryption: a long request (multi-byte text) is cut.
    while (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES && body.length > 0) {
      body = `${body.slice(0, Math.floor(body.length * 0.8))}…`.replace(/……$/, "…");
      if (body === "…") body = "";
      payload = build(body);
    }
    for (const subscription of options.store.list()) queue.push({ subscription, type, interactionId: notice.interactionId, payload });
  }

  return {
    name: "push",
    pending(notice) {
      const title = notice.escalated ? `Still waiting: ${noticeTitle(notice.request)}` : noticeTitle(notice.request);
      send("interaction.pending", notice, { escalated: notice.escalated, ...(notice.escalation === undefined ? {} : { escalation: notice.escalation }) }, title, notice.escalation === undefined ? "" : `\n${notice.escalation}`);
    },
    resolved(notice) {
      send("interaction.resolved", notice, { outcome: notice.outcome, ...(notice.decidedBy === undefined ? {} : { decidedBy: notice.decidedBy }) }, outcomeText(notice.outcome, notice.decidedBy));
    },
    async close() {
      lifetime.abort();
      await queue.close();
    },
  };
}
