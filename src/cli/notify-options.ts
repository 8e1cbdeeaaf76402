/**
 * serve's notification flags (docs/notifications.md): webhooks, ntfy,
 * Telegram, desktop alerts (desktop-alerts.ts), the escalation, and Web Push
 * (always on; the page subscribes).
 * Everything a flag names is read and checked before serve listens; the
 * channels start once serve knows its own address (for deep links).
 */
import { hostname } from "node:os";
import { join } from "node:path";
import type { AuditLog } from "../audit/index.js";
import type { EventOf } from "../mapper/index.js";
import type {
  ActionTokens,
  AnswerInteraction,
  Escalation,
  Notifier,
  NotifyDispatcher,
  PushSubscriptionStore,
  VapidKeys,
  WebhookReport,
} from "../notify/index.js";
import type { SessionHub } from "../server/index.js";
import type { RuleOffers } from "../notify/rule-offer.js";
import type { RuleOffersOptions } from "../server/rule-offers.js";
import type { PolicyOutcome } from "../session/index.js";
import { createInteractionLedger } from "../session/interaction-ledger.js";
import type { CliIo } from "./command.js";
import { terminalText } from "./terminal-text.js";
import { DESKTOP_OPTIONS, prepareDesktop, type DesktopPlan } from "./desktop-alerts.js";

export const NOTIFY_OPTIONS = {
  "notify-webhook": { type: "string", multiple: true },
  "notify-webhook-secret-file": { type: "string", multiple: true },
  "notify-ntfy": { type: "string" },
  "notify-base-url": { type: "string" },
  "telegram-bot-token-file": { type: "string" },
  "telegram-chat": { type: "string" },
  "telegram-api-root": { type: "string" },
  "escalate-after": { type: "string" },
  "escalate-action": { type: "string" },
  "escalate-instruction": { type: "string" },
  "allow-loopback-push": { type: "boolean" },
  ...DESKTOP_OPTIONS,
} as const;

export const NOTIFY_HELP = `Notifications (docs/notifications.md) — each interaction that needs a person
(after --policy, if one is set), and its resolution:
  --notify-webhook URL            POST signed JSON to URL (repeatable)
  --notify-webhook-secret-file F  the HMAC secret of each webhook, in order (default one
                                  secret per install, $XDG_CONFIG_HOME/agy-bridge/webhook-secret)
  --notify-ntfy TOPIC_URL         an ntfy message with Approve/Deny buttons
  --notify-base-url URL           serve's address as phones reach it, for links and
                                  ntfy's buttons (default the --listen address)
  --telegram-bot-token-file F     a Telegram bot posting to --telegram-chat ID, with buttons
  --telegram-chat ID              the one chat the bot posts to and obeys
  --telegram-api-root URL         a Bot API server other than https://api.telegram.org
  --escalate-after DURATION       when nobody answered within DURATION (90s, 5m, 1h):
  --escalate-action notify|deny   notify again (default) or deny a permission,
  --escalate-instruction TEXT     with TEXT as the deny instruction
  Web Push goes to every browser the page subscribed (no flag needed), only to
  https: push services on public hosts:
  --allow-loopback-push           also to push endpoints on this machine (a test's stand-in)
  --notify-desktop                a desktop alert on this machine (Linux: its notification
                                  server over D-Bus, with Approve / Deny where it offers
                                  buttons; macOS: Notification Centre, no buttons)`;

export type NotifyValues = {
  [K in keyof typeof NOTIFY_OPTIONS]?: (typeof NOTIFY_OPTIONS)[K] extends { multiple: true }
    ? string[] | undefined
    : (typeof NOTIFY_OPTIONS)[K] extends { type: "boolean" }
      ? boolean | undefined
      : string | undefined;
};

/** Checked and loaded before serve listens; {@link Notifications.start} once it does. */
export interface Notifications {
  /** For the API server: the page's push routes and ntfy's one-time actions. */
  readonly push: {
    publicKey: string;
    subscribe(subscription: Parameters<PushSubscriptionStore["add"]>[0], device: string): ReturnType<PushSubscriptionStore["add"]>;
    unsubscribe(endpoint: string, device: string): Promise<boolean>;
  };
  readonly actions: ActionTokens;
  /** For `policyAttachOption`'s `onDecision`: an `ask` (or a failed delivery) goes to a person. */
  policyDecided(outcome: PolicyOutcome): void;
  /** `describe` names a conversation's workspace, for desktop alerts' titles. */
  start(options: {
    hub: SessionHub;
    pageUrl: string;
    describe?: (conversationId: string) => { workspace?: string };
    /** The workspace a learned rule is scoped to: the one the policy decides with (else `describe`'s). */
    ruleWorkspace?: (conversationId: string) => string | undefined;
  }): void;
  close(): Promise<void>;
}

type Requested = EventOf<"interaction_requested">;

/**
 * Reads the flags, secrets and keys (kept in `configDir`, i.e.
 * `$XDG_CONFIG_HOME/agy-bridge`). A usage mistake is a string (exit 2); an
 * unreadable file throws with a sentence (exit 1).
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: one of the functions over 100 lines that #35 splits; listed so no new one is added
export async function prepareNotifications(
  io: CliIo,
  values: NotifyValues,
  options: {
    configDir: string;
    auditLog: AuditLog;
    policy: boolean;
    /** The paired devices' file (`devices.json` beside the token file): a revoked device's push subscriptions are deleted before each push. */
    devicesFile?: string;
  },
): Promise<Notifications | string> {
  const notify = await import("../notify/index.js");
  const webhooks = values["notify-webhook"] ?? [];
  const secretFiles = values["notify-webhook-secret-file"] ?? [];
  for (const url of webhooks) {
    if (!/^https?:\/\//i.test(url) || !URL.canParse(url)) return `--notify-webhook wants an http(s) URL, not ${url}`;
    // fetch refuses them, and they would sit in the process list: the signature is the authentication.
    const parsed = new URL(url);
    if (parsed.username !== "" || parsed.password !== "")
      return `--notify-webhook takes no user:password@ in the URL (${parsed.host}); receivers check the signature instead (docs/notifications.md)`;
  }
  for (const flag of ["notify-base-url", "telegram-api-root"] as const) {
    const value = values[flag];
    if (value !== undefined && (!/^https?:\/\//i.test(value) || !URL.canParse(value))) return `--${flag} wants an http(s) URL, not ${value}`;
  }
  if (secretFiles.length > 0 && secretFiles.length !== webhooks.length) {
    return `--notify-webhook-secret-file is given ${secretFiles.length} time(s) for ${webhooks.length} webhook(s); give one per webhook, in order, or none to use the install's secret`;
  }
  if (values["notify-ntfy"] !== undefined) {
    try {
      notify.ntfyTarget(values["notify-ntfy"]);
    } catch (error) {
      return (error as Error).message;
    }
  }
  const telegramToken = values["telegram-bot-token-file"];
  const telegramChat = values["telegram-chat"];
  if ((telegramToken === undefined) !== (telegramChat === undefined))
    return "--telegram-bot-token-file and --telegram-chat go together: the bot needs both its token and the one chat it posts to";
  if (telegramChat !== undefined && !/^(-?\d+|@[A-Za-z0-9_]{4,})$/.test(telegramChat))
    return `--telegram-chat wants a numeric chat id or @channelname, not ${telegramChat}`;
  let escalation: Escalation | undefined;
  if (values["escalate-after"] !== undefined) {
    const afterMs = notify.parseDuration(values["escalate-after"]);
    if (afterMs === undefined || afterMs < 1000)
      return `--escalate-after wants a duration of at least 1s such as 90s, 5m or 1h, not ${values["escalate-after"]}`;
    const action = values["escalate-action"] ?? "notify";
    if (action !== "notify" && action !== "deny") return `--escalate-action is notify or deny, not ${action}`;
    escalation = { afterMs, action, ...(values["escalate-instruction"] === undefined ? {} : { instruction: values["escalate-instruction"] }) };
  } else if (values["escalate-action"] !== undefined || values["escalate-instruction"] !== undefined) {
    return "--escalate-action and --escalate-instruction need --escalate-after DURATION";
  }
  if (values["escalate-instruction"] !== undefined && values["escalate-action"] !== "deny") return "--escalate-instruction goes with --escalate-action deny";
  let desktop: DesktopPlan | undefined;
  if (values["notify-desktop"] === true) {
    const plan = await prepareDesktop(io, "serve");
    if (typeof plan === "string") return plan;
    desktop = plan;
  }

  // The install's own directory, whatever --token-file says: the issue names `$XDG_CONFIG_HOME/agy-bridge/webhook-secret`.
  const dir = options.configDir;
  const secrets: string[] = [];
  if (webhooks.length > 0) {
    if (secretFiles.length > 0) {
      for (const file of secretFiles) secrets.push(await notify.readSecretFile(file, "webhook secret"));
    } else {
      const path = join(dir, "webhook-secret");
      const secret = await notify.loadOrCreateSecret(path, notify.randomSecret);
      // Said once, when made: the receivers need it, and it is in the file from then on.
      if (secret.created) io.stderr.write(`agy-bridge serve: a webhook secret was generated and saved to ${path} (mode 0600): ${secret.text}\n`);
      for (const _ of webhooks) secrets.push(secret.text);
    }
  }
  const vapidPath = join(dir, "vapid.json");
  const vapidText = await notify.loadOrCreateSecret(vapidPath, () => JSON.stringify(notify.generateVapidKeys()));
  const keys: VapidKeys | undefined = notify.parseVapidKeys(vapidText.text);
  if (keys === undefined)
    throw new Error(
      `${vapidPath} does not hold a VAPID key pair; delete it to have a new one generated (browsers subscribed with the old key must subscribe again)`,
    );
  const allowLoopbackPush = values["allow-loopback-push"] === true;
  const store = await notify.openPushSubscriptionStore(join(dir, "push-subscriptions.json"), { allowLoopback: allowLoopbackPush });
  const deviceStore =
    options.devicesFile === undefined ? undefined : (await import("../server/device-store.js")).createDeviceStore({ file: options.devicesFile });
  const pairedDevices = deviceStore === undefined ? undefined : async () => new Set((await deviceStore.list()).map((d) => d.id));
  const telegramBotToken = telegramToken === undefined ? undefined : await notify.readSecretFile(telegramToken, "Telegram bot token");
  // grammY loads only for a configured bot (docs/cli.md "Start-up cost").
  const telegram = telegramBotToken === undefined ? undefined : await import("../notify/telegram-notifier.js");
  const actions = notify.createActionTokens();
  // Learned rules apply where a policy does (docs/policy.md): only then do Telegram and ntfy offer "Always allow" / "Always deny".
  const learned = options.policy ? await learnedRulesOf(io, options.auditLog) : undefined;
  const host = hostname();
  const say = (message: string) => io.stderr.write(`${terminalText(`agy-bridge serve: ${message}`)}\n`);

  const audit = (report: WebhookReport, request: Requested | undefined) => {
    options.auditLog
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

  let dispatcher: NotifyDispatcher | undefined;
  // A revocation (here or by `agy-bridge devices` in another process) deletes the device's subscriptions at once,
  // so serve's own next write of the file cannot bring them back; the notifier prunes again before each push.
  const unwatchDevices = deviceStore?.onChange(() => {
    void pairedDevices!()
      .then(
        (paired) => store.retain(paired),
        () => undefined,
      )
      .catch(() => undefined);
  });
  // A policy's ask can come before serve listens (the hub attaches early): kept until start.
  const early: Requested[] = [];
  // What was asked, by id, for rule offers and the audit lines of late deliveries: the session layer's ledger (bounded).
  const requests = createInteractionLedger();

  return {
    push: { publicKey: keys.publicKey, subscribe: (s, device) => store.add(s, device), unsubscribe: (e, device) => store.remove(e, device) },
    actions,
    policyDecided(outcome) {
      requests.apply(outcome.request);
      // A person is needed when the policy said ask, or its answer was never sent (an approve rule
      // matching a question). A delivery that threw does not hand it over: the policy's verdict
      // stands (docs/policy.md); a timed-out one is over already.
      if (outcome.decision.decision !== "ask" && (outcome.result !== undefined || outcome.error !== undefined)) return;
      if (dispatcher === undefined) early.push(outcome.request);
      else dispatcher.policyAsked(outcome.request);
    },
    start({ hub, pageUrl, describe, ruleWorkspace }) {
      const base = values["notify-base-url"] ?? pageUrl;
      const answer: AnswerInteraction = async (conversationId, interactionId, action, decidedBy) => {
        const session = hub.get(conversationId);
        if (session === undefined) return { result: "not_found", reason: "its session is gone" };
        return session.respond(interactionId, action, decidedBy);
      };
      const rules = learned?.({
        place: (conversationId) => {
          const workspace = ruleWorkspace !== undefined ? ruleWorkspace(conversationId) : describe?.(conversationId).workspace;
          return { conversationId, ...(workspace === undefined ? {} : { workspace }) };
        },
        stepTypeOf: (interactionId) => requests.get(interactionId)?.request?.stepType,
      });
      const notifiers: Notifier[] = webhooks.map((url, index) =>
        notify.createWebhookNotifier({
          url,
          secret: secrets[index]!,
          name: `webhook:${index + 1}`,
          onReport: (report) => audit(report, requests.get(report.delivery.interactionId)?.request),
        }),
      );
      notifiers.push(
        notify.createWebPushNotifier({ keys, store, allowLoopback: allowLoopbackPush, ...(pairedDevices === undefined ? {} : { pairedDevices }) }),
      );
      if (values["notify-ntfy"] !== undefined) {
        notifiers.push(
          notify.createNtfyNotifier({
            topicUrl: values["notify-ntfy"],
            apiUrl: base,
            tokens: actions,
            onProblem: say,
            ...(rules === undefined ? {} : { rules }),
          }),
        );
      }
      if (telegram !== undefined && telegramBotToken !== undefined && telegramChat !== undefined) {
        notifiers.push(
          telegram.createTelegramNotifier({
            token: telegramBotToken,
            chatId: telegramChat,
            answer,
            onProblem: say,
            ...(rules === undefined ? {} : { rules }),
            ...(values["telegram-api-root"] === undefined ? {} : { apiRoot: values["telegram-api-root"] }),
          }),
        );
      }
      if (desktop !== undefined) {
        const workspaceOf = describe === undefined ? undefined : (conversationId: string) => describe(conversationId).workspace;
        notifiers.push(
          notify.createDesktopNotifier({
            support: desktop.support,
            answer,
            answerOn: "page",
            onProblem: say,
            ...(workspaceOf === undefined ? {} : { workspaceOf }),
          }),
        );
      }
      dispatcher = notify.createNotifyDispatcher({
        notifiers,
        pageUrl: base,
        host,
        policy: options.policy,
        answer,
        onProblem: say,
        ...(escalation === undefined ? {} : { escalation }),
      });
      const watched = new Set<unknown>();
      const watch = () => {
        for (const session of hub.list()) {
          if (watched.has(session)) continue;
          watched.add(session);
          // Asked now, so the workspace (read once, in the background) is known when a rule is offered.
          describe?.(session.conversationId);
          const observer = dispatcher!.session(session.conversationId);
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
      for (const event of early.splice(0)) dispatcher.policyAsked(event);
    },
    async close() {
      unwatchDevices?.();
      await dispatcher?.close();
    },
  };
}

/** The learned rules file serve's policy includes, as Telegram's and ntfy's remember buttons save into it. */
async function learnedRulesOf(io: CliIo, audit: AuditLog): Promise<(where: Omit<RuleOffersOptions, "rules">) => RuleOffers> {
  const [{ createLearnedStore, defaultLearnedFile }, { createRuleOffers }] = await Promise.all([
    import("./learned-store.js"),
    import("../server/rule-offers.js"),
  ]);
  const store = createLearnedStore({ file: defaultLearnedFile(io.env), audit });
  return (where) => createRuleOffers({ rules: store, ...where });
}

function auditRequestOf(event: Requested): { commandLine?: string; path?: string; question?: string; variant?: string } {
  const request = event.request;
  switch (request.kind) {
    case "permission":
      return request.variant === "filePermission" || request.action === "file" ? { path: request.target } : { commandLine: request.target };
    case "question":
      return { question: request.questions[0]?.question ?? "" };
    case "other":
      return { variant: request.variant };
  }
}
