/**
 * `--notify-ntfy TOPIC_URL`: an ntfy message per interaction that needs a
 * person — the request text, a click to its card, and (for permissions)
 * Approve / Deny as ntfy `http` actions that POST to serve's `/v1/actions`
 * with a one-time action token (`action-tokens.ts`), never the bearer token.
 * Published as JSON to the server's root (`{"topic":…}`), so any text is
 * safe; a resolution is a short follow-up message on the same topic.
 *
 * With learned rules (serve `--policy`, {@link NtfyNotifierOptions.rules}) a
 * permission also gets a third action, "Always allow" (or "Always deny" when
 * no rule may allow it; ntfy shows at most three actions), its rule shown in
 * the message exactly as it will be saved. Its token is a remembering one:
 * the rule is saved once the resolution says the answer delivered was that
 * press's (decided by `ntfy`, with its outcome), and the follow-up message
 * says "Approved; rule saved: …".
 */
import type { ActionTokens } from "./action-tokens.js";
import type { Notifier, PendingNotice, ResolvedNotice } from "./notice.js";
import { noticeBody, noticeTitle, outcomeText } from "./notice-text.js";
import { createRetryQueue, type AttemptResult, type JobReport, type RetryPolicy } from "./retry-queue.js";
import { REMEMBER_LABELS, ruleSavedText, type OfferedRule, type RuleOffers } from "./rule-offer.js";

/** Who serve's `POST /v1/actions` answers as: the decidedBy of a press of an ntfy action. */
export const NTFY_DECIDED_BY = "ntfy";

/** ntfy shows at most three actions on a notification. */
const MAX_ACTIONS = 3;

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
  /** The rules a press may save with its answer; given only by a serve that keeps learned rules (`--policy`). */
  rules?: RuleOffers;
  /** Told when a rule could not be offered or saved, one sentence. */
  onProblem?: (message: string) => void;
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

  const button = (notice: PendingNotice, action: "approve" | "deny", label: string, remember = false) => ({
    action: "http",
    label,
    url: actionsUrl,
    method: "POST",
    headers: {
      Authorization: `Bearer ${options.tokens.mint({ conversationId: notice.conversationId, interactionId: notice.interactionId, action, ...(remember ? { remember: true as const } : {}) })}`,
    },
    clear: true,
  });
  // The rule each interaction's remembering action offered, until it is resolved (bounded: some never are).
  const offered = new Map<string, OfferedRule>();

  /** The one rule ntfy's third action offers: Always allow when a rule may allow it, else Always deny. */
  const offerFor = (notice: PendingNotice): OfferedRule | undefined => {
    if (options.rules === undefined || notice.request.kind !== "permission") return undefined;
    try {
      return options.rules(notice)[0];
    } catch (error) {
      options.onProblem?.(`ntfy: no rule could be offered for interaction ${notice.interactionId}: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
  };

  const resolution = (notice: ResolvedNotice, saved?: string) => {
    queue.push({
      interactionId: notice.interactionId,
      message: {
        topic,
        title: outcomeText(notice.outcome, notice.decidedBy),
        message: saved === undefined ? noticeBody(notice.request) : `${saved}\n\n${noticeBody(notice.request)}`,
        click: notice.url,
        priority: 2,
        tags: ["agy-bridge"],
      },
    });
  };

  return {
    name: "ntfy",
    pending(notice: PendingNotice) {
      const answerable = notice.request.kind === "permission";
      const offer = answerable ? offerFor(notice) : undefined;
      if (offer !== undefined) {
        offered.set(notice.interactionId, offer);
        while (offered.size > 10_000) offered.delete(offered.keys().next().value as string);
      }
      const lines = [
        noticeBody(notice.request),
        ...(offer === undefined ? [] : [offer.text]),
        ...(notice.escalation === undefined ? [] : [notice.escalation]),
        `on ${notice.host}`,
      ];
      const actions = [button(notice, "approve", "Approve"), button(notice, "deny", "Deny")];
      if (offer !== undefined) actions.push(button(notice, offer.decision, REMEMBER_LABELS[offer.decision], true));
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
          ...(answerable ? { actions: actions.slice(0, MAX_ACTIONS) } : {}),
        },
      });
    },
    resolved(notice: ResolvedNotice) {
      const offer = offered.get(notice.interactionId);
      offered.delete(notice.interactionId);
      const pressed = options.tokens.remembered(notice.interactionId);
      options.tokens.revoke(notice.interactionId);
      const decision = notice.outcome === "approved" ? "approve" : notice.outcome === "denied" ? "deny" : undefined;
      // The remembering press delivered the answer: serve answered as ntfy, with that press's decision.
      const chosen = offer !== undefined && decision === offer.decision && notice.decidedBy === NTFY_DECIDED_BY && pressed.has(decision) ? offer : undefined;
      if (chosen === undefined || decision === undefined) return resolution(notice);
      chosen.save(NTFY_DECIDED_BY).then(
        () => resolution(notice, ruleSavedText(decision, chosen)),
        (error: unknown) => {
          const reason = error instanceof Error ? error.message : String(error);
          options.onProblem?.(`ntfy: the rule of interaction ${notice.interactionId} was not saved: ${reason}`);
          resolution(notice, `The rule was not saved: ${reason}`);
        },
      );
    },
    async close() {
      lifetime.abort();
      await queue.close();
    },
  };
}
