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
import type { ActionTokens, Escalation, PushSubscriptionStore, VapidKeys } from "../notify/index.js";
import type { HubNotifications } from "../server/hub-notifications.js";
import type { RuleOffers } from "../notify/rule-offer.js";
import type { RuleOffersOptions } from "../server/rule-offers.js";
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

/** Checked and loaded before serve listens; {@link HubNotifications.start} once it does. */
export interface Notifications extends HubNotifications {
  /** For the API server: the page's push routes and ntfy's one-time actions. */
  readonly push: {
    publicKey: string;
    subscribe(subscription: Parameters<PushSubscriptionStore["add"]>[0], device: string): ReturnType<PushSubscriptionStore["add"]>;
    unsubscribe(endpoint: string, device: string): Promise<boolean>;
  };
  readonly actions: ActionTokens;
}

/**
 * Reads the flags, secrets and keys (kept in `configDir`, i.e.
 * `$XDG_CONFIG_HOME/agy-bridge`). A usage mistake is a string (exit 2); an
 * unreadable file throws with a sentence (exit 1).
 */
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
  const { createHubNotifications } = await import("../server/hub-notifications.js");
  const hub = createHubNotifications({
    webhooks: webhooks.map((url, index) => ({ url, secret: secrets[index]! })),
    push: { keys, store, allowLoopback: allowLoopbackPush, ...(pairedDevices === undefined ? {} : { pairedDevices }) },
    ...(values["notify-ntfy"] === undefined ? {} : { ntfyTopicUrl: values["notify-ntfy"] }),
    ...(telegram === undefined || telegramBotToken === undefined || telegramChat === undefined
      ? {}
      : {
          telegram: {
            create: telegram.createTelegramNotifier,
            token: telegramBotToken,
            chatId: telegramChat,
            ...(values["telegram-api-root"] === undefined ? {} : { apiRoot: values["telegram-api-root"] }),
          },
        }),
    ...(desktop === undefined ? {} : { desktop: { support: desktop.support } }),
    ...(escalation === undefined ? {} : { escalation }),
    policy: options.policy,
    ...(learned === undefined ? {} : { rules: learned }),
    actions,
    host: hostname(),
    ...(values["notify-base-url"] === undefined ? {} : { baseUrl: values["notify-base-url"] }),
    auditLog: options.auditLog,
    onProblem: (message) => io.stderr.write(`${terminalText(`agy-bridge serve: ${message}`)}\n`),
  });

  return {
    push: { publicKey: keys.publicKey, subscribe: (s, device) => store.add(s, device), unsubscribe: (e, device) => store.remove(e, device) },
    actions,
    start: (wiring) => hub.start(wiring),
    async close() {
      unwatchDevices?.();
      await hub.close();
    },
  };
}

/** The learned rules file serve's policy includes, as Telegram's and ntfy's remember buttons save into it. */
async function learnedRulesOf(io: CliIo, audit: AuditLog): Promise<(where: Omit<RuleOffersOptions, "rules">) => RuleOffers> {
  const [{ createLearnedStore, defaultLearnedFile }, { createRuleOffers }] = await Promise.all([
    import("../audit/learned-store.js"),
    import("../server/rule-offers.js"),
  ]);
  const store = createLearnedStore({ file: defaultLearnedFile(io.env), audit });
  return (where) => createRuleOffers({ rules: store, ...where });
}
