/**
 * Notifications: reaching a person about an interaction that waits for them
 * (docs/notifications.md) — webhooks, Web Push, ntfy, Telegram — and the
 * escalation when nobody answers. Adapters take a pending interaction and a
 * callback to answer it; they never talk to agy or a session directly.
 */
export { createActionTokens, type ActionTokens, type ScopedAction } from "./action-tokens.js";
export { loadOrCreateSecret, randomSecret, readSecretFile, type InstallSecret } from "./install-secret.js";
export { deepLink, type AnswerInteraction, type AnswerOutcome, type InteractionAction, type Notifier, type PendingNotice, type ResolvedNotice } from "./notice.js";
export { noticeBody, noticeTitle, outcomeText } from "./notice-text.js";
export { createNotifyDispatcher, formatDuration, parseDuration, type Escalation, type NotifyDispatcher, type NotifyDispatcherOptions, type SessionObserver } from "./notify-dispatcher.js";
export { createNtfyNotifier, ntfyTarget, type NtfyNotifierOptions, type NtfyReport } from "./ntfy-notifier.js";
export { checkEndpoint, openPushSubscriptionStore, subscriptionId, type PushSubscriptionJson, type PushSubscriptionStore } from "./push-subscriptions.js";
export { createRetryQueue, type AttemptResult, type JobReport, type RetryPolicy, type RetryQueue } from "./retry-queue.js";
export { createTelegramNotifier, type TelegramNotifierOptions } from "./telegram-notifier.js";
export { createWebPushNotifier, generateVapidKeys, parseVapidKeys, type PushReport, type VapidKeys, type WebPushNotifierOptions } from "./web-push-notifier.js";
export { createWebhookNotifier, type WebhookDelivery, type WebhookNotifierOptions, type WebhookReport } from "./webhook-notifier.js";
export { signWebhook, verifyWebhook, SIGNATURE_HEADER, TIMESTAMP_HEADER } from "./webhook-signature.js";
