/**
 * Notifications: reaching a person about an interaction that waits for them
 * (docs/notifications.md) — webhooks, Web Push, ntfy, Telegram, the desktop — and the
 * escalation when nobody answers. Adapters take a pending interaction and a
 * callback to answer it; they never talk to agy or a session directly.
 */
export {
  checkDesktop,
  createDesktopNotifier,
  createMacNotifier,
  desktopSupport,
  type DesktopNotifierOptions,
  type DesktopSupport,
  type MacNotifierOptions,
} from "./desktop-notifier.js";
export {
  desktopBody,
  desktopSafe,
  desktopTitle,
  displayPath,
  waitingKind,
  MAX_DESKTOP_BODY,
  type AnswerPlace,
  type DesktopTextOptions,
  type WaitingKind,
} from "./desktop-text.js";
export {
  checkFreedesktopServer,
  createFreedesktopNotifier,
  DESKTOP_DECIDED_BY,
  type DesktopServer,
  type FreedesktopNotifier,
  type FreedesktopNotifierOptions,
} from "./freedesktop-notifier.js";
export { createActionTokens, type ActionTokens, type ScopedAction } from "./action-tokens.js";
export { loadOrCreateSecret, randomSecret, readSecretFile, type InstallSecret } from "./install-secret.js";
export {
  deepLink,
  type AnswerInteraction,
  type AnswerOutcome,
  type InteractionAction,
  type Notifier,
  type PendingNotice,
  type ResolvedNotice,
} from "./notice.js";
export { noticeBody, noticeTitle, outcomeText } from "./notice-text.js";
export {
  createNotifyDispatcher,
  formatDuration,
  parseDuration,
  type Escalation,
  type NotifyDispatcher,
  type NotifyDispatcherOptions,
  type SessionObserver,
} from "./notify-dispatcher.js";
export { createNtfyNotifier, ntfyTarget, type NtfyNotifierOptions, type NtfyReport } from "./ntfy-notifier.js";
export {
  checkEndpoint,
  isLoopbackAddress,
  isNonPublicAddress,
  MAX_SUBSCRIPTIONS_PER_DEVICE,
  openPushSubscriptionStore,
  OWNER,
  subscriptionId,
  type PushSubscriptionJson,
  type PushSubscriptionStore,
  type PushSubscriptionStoreOptions,
  type StoredPushSubscription,
} from "./push-subscriptions.js";
export { createRequestPool, PUSH_POOL, PUSH_POOL_SIZE, type RequestPool } from "./request-pool.js";
export { createRetryQueue, type AttemptResult, type JobReport, type RetryPolicy, type RetryQueue } from "./retry-queue.js";
// The Telegram adapter (grammY) is imported from "./telegram-notifier.js" by who uses it, so
// importing this index does not load grammY.
export { createWebPushNotifier, generateVapidKeys, parseVapidKeys, type PushReport, type VapidKeys, type WebPushNotifierOptions } from "./web-push-notifier.js";
export { createWebhookNotifier, type WebhookDelivery, type WebhookNotifierOptions, type WebhookReport } from "./webhook-notifier.js";
export { signWebhook, verifyWebhook, SIGNATURE_HEADER, TIMESTAMP_HEADER } from "./webhook-signature.js";
