/**
 * Web Push to every subscribed browser (RFC 8030 delivery, RFC 8291
 * `aes128gcm` encryption, RFC 8292 VAPID), with the `web-push` package
 * building each request and node:https sending it, so nothing is written to
 * the console and serve decides where it connects: the endpoint is checked
 * again before each push, and the address a name resolves to is checked as
 * the connection is made (a public name pointing at 127.0.0.1 or a private
 * network is refused, not reached). A subscription its push service calls
 * gone (404, 410) is dropped; so are those of a device no longer paired.
 *
 * Every push goes through one process-wide pool ({@link PUSH_POOL}: at most
 * eight in flight, each with its own deadline, one connection each, closed
 * after it), so a push service that accepts and never answers holds at most
 * eight descriptors however many subscriptions and notices there are.
 *
 * The payload (docs/http-api.md): `{type, conversationId, interactionId,
 * title, body, url, …}`; the `Topic` is the interaction, so a resolution
 * replaces a pending notice the push service still holds.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import webpush from "web-push";
import type { Notifier, PendingNotice, ResolvedNotice } from "./notice.js";
import { noticeBody, noticeTitle, outcomeText } from "./notice-text.js";
import type { PushSubscriptionJson, PushSubscriptionStore } from "./push-subscriptions.js";
import { isLoopbackAddress, isNonPublicAddress, OWNER, subscriptionId } from "./push-subscriptions.js";
import { PUSH_POOL, type RequestPool } from "./request-pool.js";
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
  /** Sends with this instead of node:https (no address check at connect time then: the caller's fetch decides). */
  fetch?: typeof fetch;
  /** Seconds the push service keeps an undelivered message (default 3600). */
  ttlSeconds?: number;
  /** Each attempt's deadline, from when it leaves the pool (default 10 000 ms). */
  timeoutMs?: number;
  /** Where attempts wait their turn (default the process-wide {@link PUSH_POOL}). */
  pool?: RequestPool;
  /**
   * The ids of the devices still paired (the device store's list). Before each
   * fan-out the subscriptions of any other device are deleted: a revoked
   * device gets no push, however it was revoked. Without it nothing is pruned.
   */
  pairedDevices?: () => Promise<ReadonlySet<string>>;
  /** Lets loopback addresses through the connect-time check (the store's `allowLoopback`; tests only). */
  allowLoopback?: boolean;
}

/** A DNS lookup that refuses, at connect time, a name resolving to this machine or a private network. */
export function publicOnlyLookup(allowLoopback: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error !== null) {
        callback(error, "", 4);
        return;
      }
      const list = addresses as LookupAddress[];
      const inward = list.find((a) => isNonPublicAddress(a.address) && !(allowLoopback && isLoopbackAddress(a.address)));
      if (inward !== undefined || list.length === 0) {
        const refused = Object.assign(new Error(`${hostname} resolves to ${inward?.address ?? "nothing"}, not a public push service`), {
          code: "EPUSHADDRESS",
        });
        callback(refused, "", 4);
        return;
      }
      if ((options as { all?: boolean }).all === true) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      else callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/** One POST, one connection (closed after), a deadline for all of it; the status, or a thrown error with a `code`. */
function post(endpoint: string, details: webpush.RequestDetails, timeoutMs: number, signal: AbortSignal, lookup: LookupFunction): Promise<number> {
  return new Promise((resolve, reject) => {
    const url = new URL(endpoint);
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const request = send(url, { method: details.method, headers: details.headers as Record<string, string>, agent: false, lookup, signal });
    const timer = setTimeout(() => request.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: "ETIMEDOUT" })), timeoutMs);
    request.on("response", (response) => {
      clearTimeout(timer);
      resolve(response.statusCode ?? 0);
      // The body says nothing we use: the connection goes at once.
      response.destroy();
    });
    request.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    request.on("close", () => clearTimeout(timer));
    request.end(details.body as Buffer);
  });
}

interface PushJob {
  subscription: PushSubscriptionJson;
  type: PushReport["type"];
  interactionId: string;
  payload: string;
}

export function createWebPushNotifier(options: WebPushNotifierOptions): Notifier {
  const lifetime = new AbortController();
  const pool = options.pool ?? PUSH_POOL;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const lookup = publicOnlyLookup(options.allowLoopback === true);
  const vapidDetails = {
    subject: options.subject ?? "mailto:agy-bridge@localhost.invalid",
    publicKey: options.keys.publicKey,
    privateKey: options.keys.privateKey,
  };

  async function attempt(job: PushJob): Promise<AttemptResult> {
    const { endpoint, keys } = job.subscription;
    const details: webpush.RequestDetails = webpush.generateRequestDetails(
      { endpoint, keys, expirationTime: job.subscription.expirationTime ?? null },
      Buffer.from(job.payload),
      {
        vapidDetails,
        TTL: options.ttlSeconds ?? 3600,
        urgency: job.type === "interaction.pending" ? "high" : "normal",
        topic: job.interactionId.replace(/[^A-Za-z0-9_-]/g, "").slice(0, 32),
      },
    );
    try {
      options.store.check(endpoint);
    } catch (error) {
      // Stored by an older version, or a file edited by hand: never sent to.
      await options.store.remove(endpoint).catch(() => undefined);
      return { ok: false, retry: false, error: `${(error as Error).message}; it was removed` };
    }
    let status: number;
    try {
      status = await pool.run(async () => {
        if (lifetime.signal.aborted) throw Object.assign(new Error("serve is closing"), { code: "ECANCELED" });
        if (options.fetch === undefined) return post(details.endpoint, details, timeoutMs, lifetime.signal, lookup);
        const response = await options.fetch(details.endpoint, {
          method: details.method,
          headers: details.headers as Record<string, string>,
          body: details.body as Uint8Array,
          redirect: "manual",
          signal: AbortSignal.any([lifetime.signal, AbortSignal.timeout(timeoutMs)]),
        });
        await response.body?.cancel().catch(() => undefined);
        return response.status;
      });
    } catch (error) {
      const code = (error as { code?: string }).code ?? (error as { cause?: { code?: string } }).cause?.code;
      if (code === "EPUSHADDRESS") return { ok: false, retry: false, error: (error as Error).message };
      return { ok: false, retry: true, error: code ?? (error instanceof Error ? error.name : "error") };
    }
    const response = { status };
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
    onDone: (job, report) =>
      options.onReport?.({ ...report, subscription: subscriptionId(job.subscription.endpoint), type: job.type, interactionId: job.interactionId }),
  });

  function send(type: PushJob["type"], notice: PendingNotice | ResolvedNotice, extra: Record<string, unknown>, title: string, after = ""): void {
    // `after` (the escalation's announcement) is kept whole; the request text is what gets cut.
    const build = (body: string) =>
      JSON.stringify({
        type,
        conversationId: notice.conversationId,
        interactionId: notice.interactionId,
        title,
        body: `${body}${after}`,
        url: notice.url,
        ...extra,
      });
    let body = noticeBody(notice.request);
    let payload = build(body);
    // Push services take about 4 KB after encryption: a long request (multi-byte text) is cut.
    while (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES && body.length > 0) {
      body = `${body.slice(0, Math.floor(body.length * 0.8))}…`.replace(/……$/, "…");
      if (body === "…") body = "";
      payload = build(body);
    }
    // In order (a resolution after its request), each after the store forgot revoked devices.
    fanOut = fanOut.then(async () => {
      let paired: ReadonlySet<string> | undefined;
      if (options.pairedDevices !== undefined) {
        paired = await options.pairedDevices().catch(() => undefined);
        // Deleted only on a list read in full; an unreadable device file deletes nothing, but then
        // no device is known to be paired, so only the bearer token's subscriptions are sent to.
        if (paired !== undefined) await options.store.retain(paired).catch(() => undefined);
        else paired = new Set();
      }
      if (lifetime.signal.aborted) return;
      for (const subscription of options.store.list()) {
        if (paired !== undefined && subscription.device !== OWNER && !paired.has(subscription.device)) continue;
        queue.push({ subscription, type, interactionId: notice.interactionId, payload });
      }
    });
  }
  let fanOut: Promise<void> = Promise.resolve();

  return {
    name: "push",
    pending(notice) {
      const title = notice.escalated ? `Still waiting: ${noticeTitle(notice.request)}` : noticeTitle(notice.request);
      send(
        "interaction.pending",
        notice,
        { escalated: notice.escalated, ...(notice.escalation === undefined ? {} : { escalation: notice.escalation }) },
        title,
        notice.escalation === undefined ? "" : `\n${notice.escalation}`,
      );
    },
    resolved(notice) {
      send(
        "interaction.resolved",
        notice,
        { outcome: notice.outcome, ...(notice.decidedBy === undefined ? {} : { decidedBy: notice.decidedBy }) },
        outcomeText(notice.outcome, notice.decidedBy),
      );
    },
    async close() {
      lifetime.abort();
      await fanOut;
      await queue.close();
    },
  };
}
