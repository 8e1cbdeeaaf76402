/**
 * The webhook signature: `X-Agy-Bridge-Signature: sha256=<hex HMAC-SHA256
 * over "<timestamp>.<body>">` with the webhook's secret, and the timestamp in
 * `X-Agy-Bridge-Timestamp` (unix seconds), so a receiver can refuse a body
 * replayed later (docs/notifications.md).
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export const TIMESTAMP_HEADER = "x-agy-bridge-timestamp";
export const SIGNATURE_HEADER = "x-agy-bridge-signature";

export function signWebhook(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

/**
 * Checks a received webhook the way docs/notifications.md tells receivers to:
 * the signature over exactly the bytes received, and a timestamp within
 * `toleranceS` of `nowS`.
 */
export function verifyWebhook(
  secret: string,
  headers: { timestamp: string | undefined; signature: string | undefined },
  body: string,
  nowS: number,
  toleranceS = 300,
): boolean {
  const timestamp = Number(headers.timestamp);
  if (!/^\d+$/.test(headers.timestamp ?? "") || Math.abs(nowS - timestamp) > toleranceS) return false;
  const expected = Buffer.from(signWebhook(secret, timestamp, body));
  const given = Buffer.from(headers.signature ?? "");
  return given.length === expected.length && timingSafeEqual(given, expected);
}
