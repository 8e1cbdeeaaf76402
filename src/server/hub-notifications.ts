/**
 * serve's notifications over its session hub (docs/notifications.md): the
 * channels a plan names — webhooks, Web Push, ntfy, Telegram, a desktop
 * alert — behind one dispatcher that watches every session the hub follows.
 * The CLI reads the flags,
 * secrets and keys into a {@link HubNotificationsPlan}; this file wires it,
 * so `cli/` holds flags only (issue 35).
 *
 * What was asked is kept in the session layer's interaction ledger (for
 * rule offers and the audit lines of late webhook deliveries). With a
 * session policy, what a person is told of is read off the verdict the
 * session wrote on each request (`interaction_requested.policy`: `ask`, and
 * an approve rule that matched a question, which the session writes as
 * `ask`), in each session's log from its history on — so nothing is handed
 * over from the policy runner, and nothing that came before the channels
 * started is lost: the log still holds it when they start.
 */
import type { AuditLog } from "../audit/audit-log.js";
import { auditRequestOf } from "../audit/session-auditor.js";
import {
  createDesktopNotifier,
  createNotifyDispatcher,
  createNtfyNotifier,
  createWebhookNotifier,
  createWebPushNotifier,
  type ActionTokens,
  type AnswerInteraction,
  type Escalation,
  type Notifier,
  type NotifyDispatcher,
  type PushSubscriptionStore,
  type VapidKeys,
  type WebhookReport,
} from "../notify/index.js";
import type { DesktopSupport } from "../notify/desktop-notifier.js";
import type { RuleOffers } from "../notify/rule-offer.js";
import type { createTelegramNotifier } from "../notify/telegram-notifier.js";
import { createInteractionLedger } from "../session/interaction-ledger.js";
import type { RuleOffersOptions } from "./rule-offers.js";
import type { SessionHub } from "./session-hub.js";

/** Everything the flags named, read and checked (secrets, keys, stores): what the channels are built from. */
export interface HubNotificationsPlan {
  /** Each webhook with its HMAC secret, in the flags' order. */
  webhooks: readonly { url: string; secret: string }[];
  /** Web Push, always on: the page subscribes. */
  push: { keys: VapidKeys; store: PushSubscriptionStore; allowLoopback: boolean; pairedDevices?: () => Promise<Set<string>> };
  /** `--notify-ntfy`'s topic URL. */
  ntfyTopicUrl?: string;
  /** A Telegram bot; `create` is the loaded notifier module's factory (grammY loads only for a configured bot). */
  telegram?: { create: typeof createTelegramNotifier; token: string; chatId: string; apiRoot?: string };
  /** A desktop alert on this machine. */
  desktop?: { support: Exclude<DesktopSupport, { kind: "unsupported" }> };
  escalation?: Escalation;
  /** A session policy is set (the dispatcher then notifies only what it hands to a person). */
  policy: boolean;
  /** Learned rules' "Always allow / deny" offers, where a policy applies. */
  rules?: (where: Omit<RuleOffersOptions, "rules">) => RuleOffers;
  actions: ActionTokens;
  /** This machine's name, in notices. */
  host: string;
  /** `--notify-base-url`: serve's address as phones reach it (default the page's). */
  baseUrl?: string;
  /** Where webhook deliveries are recorded (`decision: "notify"`). */
  auditLog: AuditLog;
  /** One sentence about a channel's trouble. */
  onProblem(message: string): void;
}

export interface HubNotifications {
  /** Starts the channels once serve knows its address; `describe` names a conversation's workspace for desktop titles. */
  start(options: {
    hub: SessionHub;
    pageUrl: string;
    describe?: (conversationId: string) => { workspace?: string };
    /** The workspace a learned rule is scoped to: the one the policy decides with (else `describe`'s). */
    ruleWorkspace?: (conversationId: string) => string | undefined;
  }): void;
  close(): Promise<void>;
}

export function createHubNotifications(plan: HubNotificationsPlan): HubNotifications {
  let dispatcher: NotifyDispatcher | undefined;
  // What was asked, by id, for rule offers and the audit lines of late deliveries: the session layer's ledger (bounded).
  const requests = createInteractionLedger();

  const audit = (report: WebhookReport) => {
    const request = requests.get(report.delivery.interactionId)?.request;
    plan.auditLog
      .append({
        conversationId: report.delivery.conversationId,
        interactionId: report.delivery.interactionId,
        kind: request?.request.kind ?? "permission",
        request: request === undefined ? {} : auditRequestOf(request),
        decision: "notify",
        decidedBy: report.notifier,
        delivery: report.result,
        reason: `${report.delivery.type} ${report.delivery.id} to ${report.origin}: ${report.attempts} attempt(s)${report.status === undefined ? "" : `, last HTTP ${report.status}`}${report.error === undefined || report.result === "delivered" ? "" : `, ${report.error}`}`,
      })
      .catch(() => undefined);
  };

  return {
    start({ hub, pageUrl, describe, ruleWorkspace }) {
      const base = plan.baseUrl ?? pageUrl;
      const answer: AnswerInteraction = async (conversationId, interactionId, action, decidedBy) => {
        const session = hub.get(conversationId);
        if (session === undefined) return { result: "not_found", reason: "its session is gone" };
        return session.respond(interactionId, action, decidedBy);
      };
      const rules = plan.rules?.({
        place: (conversationId) => {
          const workspace = ruleWorkspace !== undefined ? ruleWorkspace(conversationId) : describe?.(conversationId).workspace;
          return { conversationId, ...(workspace === undefined ? {} : { workspace }) };
        },
        stepTypeOf: (interactionId) => requests.get(interactionId)?.request?.stepType,
      });
      const notifiers = channels(plan, { base, answer, rules, audit, describe });
      const started = createNotifyDispatcher({
        notifiers,
        pageUrl: base,
        host: plan.host,
        policy: plan.policy,
        answer,
        onProblem: plan.onProblem,
        ...(plan.escalation === undefined ? {} : { escalation: plan.escalation }),
      });
      dispatcher = started;
      const watched = new Set<unknown>();
      const watch = () => {
        for (const session of hub.list()) {
          if (watched.has(session)) continue;
          watched.add(session);
          // Asked now, so the workspace (read once, in the background) is known when a rule is offered.
          describe?.(session.conversationId);
          const observer = started.session(session.conversationId);
          const feed = (event: Parameters<typeof observer.observe>[0]) => {
            requests.apply(event);
            observer.observe(event);
          };
          // A fleet session's log records where its history ends instead of holding `history_end` (event-log.ts).
          const end = session.log.historyEnd;
          let ended = false;
          const historyEnd = () => {
            ended = true;
            feed({ type: "history_end", conversationId: session.conversationId });
          };
          // What the log holds so far, then every later append (synchronous: nothing falls between).
          for (const entry of session.log.since(0)) {
            if (!ended && end !== undefined && entry.id > end) historyEnd();
            feed(entry.event);
          }
          if (!ended && end !== undefined) historyEnd();
          session.log.subscribe((entry) => feed(entry.event), historyEnd);
        }
      };
      hub.onChange(watch);
      watch();
    },
    async close() {
      await dispatcher?.close();
    },
  };
}

/** The notifiers the plan names: webhooks first, then Web Push, ntfy, Telegram and the desktop. */
function channels(
  plan: HubNotificationsPlan,
  wiring: {
    base: string;
    answer: AnswerInteraction;
    rules: RuleOffers | undefined;
    audit: (report: WebhookReport) => void;
    describe: ((conversationId: string) => { workspace?: string }) | undefined;
  },
): Notifier[] {
  const { base, answer, rules, audit, describe } = wiring;
  const withRules = rules === undefined ? {} : { rules };
  const notifiers: Notifier[] = plan.webhooks.map(({ url, secret }, index) =>
    createWebhookNotifier({ url, secret, name: `webhook:${index + 1}`, onReport: audit }),
  );
  const { keys, store, allowLoopback, pairedDevices } = plan.push;
  notifiers.push(createWebPushNotifier({ keys, store, allowLoopback, ...(pairedDevices === undefined ? {} : { pairedDevices }) }));
  if (plan.ntfyTopicUrl !== undefined) {
    notifiers.push(createNtfyNotifier({ topicUrl: plan.ntfyTopicUrl, apiUrl: base, tokens: plan.actions, onProblem: plan.onProblem, ...withRules }));
  }
  const telegram = plan.telegram;
  if (telegram !== undefined) {
    notifiers.push(
      telegram.create({
        token: telegram.token,
        chatId: telegram.chatId,
        answer,
        onProblem: plan.onProblem,
        ...withRules,
        ...(telegram.apiRoot === undefined ? {} : { apiRoot: telegram.apiRoot }),
      }),
    );
  }
  if (plan.desktop !== undefined) {
    const workspaceOf = describe === undefined ? undefined : (conversationId: string) => describe(conversationId).workspace;
    notifiers.push(
      createDesktopNotifier({
        support: plan.desktop.support,
        answer,
        answerOn: "page",
        onProblem: plan.onProblem,
        ...(workspaceOf === undefined ? {} : { workspaceOf }),
      }),
    );
  }
  return notifiers;
}
