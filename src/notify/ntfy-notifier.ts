/**
 * `--notify-ntfy TOPIC_URL`: an ntfy message per interaction that needs a
 * person — the request text, a click to its card, and (for permissions)
 * Approve / Deny as ntfy `http` actions that POST to serve's `/v1/actions`
 * with a one-time action token (`action-tokens.ts`), never the bearer token.
 * Published as JSON to the server's root (`{"topic":…}`), so any text is
 * safe; a resolution is a short follow-up message on the same topic.
 */
import type { ActionTokens } from "./action-tokens.js";
import type { Notifier, PendingNotice, ResolvedNotice } from "./notice.js";
import { noticeBody, noticeTitle, outcomeText } from "./notice-text.js";
import { createRetryQueue, type AttemptResult, type JobReport, type RetryPolicy } from "./retry-queue.js";

export interface NtfyReport extends JobReport {
  notifier: "ntfy";
  interactionId: string;
}

export interface NtfyNotifierOptions {
  /** e.g. `https://ntfy.sh/my-agy-topic`. */
  topicUrl: string;
  /** serve's address as the phone reaches it: the actions POST to `<apiUrl>/v1/actions`. */
  apiUrl: string;
  tokens: ActionTokens;
  retry?: RetryPolicy;
  onReport?: (report: NtfyReport) => void;
  fetch?: typeof fetch;
}

interface NtfyJob {
  interactionId: string;
  message: Record<string, unknown>;
}

/** Splits `https://host/prefix/topic` into the publish URL and the topic name. */
export function ntfyTarget(topicUrl: string): { publishUrl: string; topic: string } {
  const url = new URL(topicUrl);
  const parts = url.pathname.split("/").filter((p) => p !== "");
  const topic = parts.pop();
  if (topic === undefined || (url.protocol !== "https:" && url.protocol !== "http:")) {
    throw new TypeError(`--notify-ntfy wants a topic URL such as https://ntfy.sh/my-topic, not ${url.protocol}//${url.host}${url.pathname}`);
  }
  return { publishUrl: `${url.origin}/${parts.map((p) => `${p}/`).join("")}`, topic: decodeURIComponent(topic) };
}

export function createNtfyNotifier(options: NtfyNotifierOptions): Notifier {
  const doFetch = options.fetch ?? fetch;
  const { publishUrl, topic } = ntfyTarget(options.topicUrl);
  const actionsUrl = `${options.apiUrl.replace(/\/+$/, "")}/v1/actions`;
  const lifetime = new AbortController();

  async function attempt(job: NtfyJob): Promise<AttemptResult> {
    let response: Response;
    try {
      response = await doFetch(publishUrl, {
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": "agy-bridge" },
        body: JSON.stringify(job.message),
        redirect: "manual",
        signal: AbortSignal.any([lifetime.signal, AbortSignal.timeout(10_000)]),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      return { ok: false, retry: true, error: cause ?? (error instanceof Error ? error.name : "error") };
    }
    await response.body?.cancel().catch(() => undefined);
    if (response.ok) return { ok: true, status: response.status };
    return { ok: false, retry: response.status >= 500 || response.status === 429, status: response.status, error: `HTTP ${response.status}` };
  }

  const queue = createRetryQueue<NtfyJob>({
    ...options.retry,
    attempt,
    onDone: (job, report) => options.onReport?.({ ...report, notifier: "ntfy", interactionId: job.interactionId }),
  });

  const button = (notice: PendingNotice, action: "approve" | "deny", label: string) => ({
    action: "http",
    label,
    url: actionsUrl,
    method: "POST",
    headers: { Authorization: `Bearer ${options.tokens.mint({ conversationId: notice.conversationId, interactionId: notice.interactionId, action })}` },
    clear: true,
  });

  return {
    name: "ntfy",
    pending(notice: PendingNotice) {
      const answerable = notice.request.kind === "permission";
      const lines = [noticeBody(notice.request), ...(notice.escalation === undefined ? [] : [notice.escalation]), `on ${notice.host}`];
      queue.push({
        interactionId: notice.interactionId,
        message: {
          topic,
          title: notice.escalated ? `Still waiting: ${noticeTitle(notice.request)}` : noticeTitle(notice.request),
          message: lines.join("\n"),
          click: notice.url,
          priority: 4,
          tags: ["agy-bridge"],
          // Questions and TUI-only gates are answered on the page (the click).
          ...(answerable ? { actions: [button(notice, "approve", "Approve"), button(notice, "deny", "Deny")] } : {}),
        },
      });
    },
    resolved(notice: ResolvedNotice) {
      options.tokens.revoke(notice.interactionId);
      queue.push({
        interactionId: notice.interactionId,
        message: {
          topic,
          title: outcomeText(notice.outcome, notice.decidedBy),
          message: noticeBody(notice.request),
          click: notice.url,
          priority: 2,
          tags: ["agy-bridge"],
        },
      });
    },
    async close() {
      lifetime.abort();
      await queue.close();
    },
  };
}
