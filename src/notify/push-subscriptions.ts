/**
 * The browsers subscribed to Web Push, kept in one JSON file (0600, beside
 * the token) so they survive a restart of serve. Writes go to a temporary
 * file renamed over the old one: a crash leaves the old list or the new one.
 */
import { createHash } from "node:crypto";
import { BlockList, isIP } from "node:net";
import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { AgyBridgeError } from "../errors.js";

/** `PushSubscription.toJSON()` as the page sends it. */
export interface PushSubscriptionJson {
  endpoint: string;
  expirationTime?: number | null | undefined;
  keys: { p256dh: string; auth: string };
}

export interface PushSubscriptionStore {
  list(): PushSubscriptionJson[];
  /** Stores it (replacing the keys of a stored endpoint); `invalid_argument` for an endpoint push cannot use. */
  add(subscription: PushSubscriptionJson): Promise<{ id: string; created: boolean }>;
  /** False when no subscription had that endpoint. */
  remove(endpoint: string): Promise<boolean>;
}

const loopback = new BlockList();
loopback.addSubnet("127.0.0.0", 8, "ipv4");
loopback.addAddress("::1", "ipv6");

/** A short stable id for a subscription: its endpoint is a capability URL and stays out of answers and logs. */
export function subscriptionId(endpoint: string): string {
  return createHash("sha256").update(endpoint).digest("hex").slice(0, 16);
}

/** Push services are https; plain http only to this machine (a test's stand-in). */
export function checkEndpoint(endpoint: string): void {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new AgyBridgeError("invalid_argument", "the subscription's endpoint is not a URL; send PushSubscription.toJSON() as the browser gives it");
  }
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const isLoopback = host === "localhost" || (isIP(host) !== 0 && loopback.check(host, isIP(host) === 6 ? "ipv6" : "ipv4"));
  if (url.protocol === "https:" || (url.protocol === "http:" && isLoopback)) return;
  throw new AgyBridgeError("invalid_argument", `the subscription's endpoint must be an https: URL (plain http: only to a loopback host), not ${url.protocol}//${url.host}`);
}

export async function openPushSubscriptionStore(path: string): Promise<PushSubscriptionStore> {
  let subscriptions: PushSubscriptionJson[] = [];
  try {
    const parsed = JSON.parse(await readFile(path, "utf8")) as unknown;
    if (Array.isArray(parsed)) subscriptions = parsed.filter(isSubscription);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT" && !(error instanceof SyntaxError)) {
      throw new AgyBridgeError("invalid_argument", `cannot read the push subscriptions ${path} (${(error as NodeJS.ErrnoException).code ?? "error"})`, { cause: error });
    }
  }
  let chain: Promise<void> = Promise.resolve();
  const save = (): Promise<void> => {
    const text = `${JSON.stringify(subscriptions, null, 1)}\n`;
    const next = chain.then(async () => {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      const temporary = `${path}.${process.pid}.tmp`;
      await writeFile(temporary, text, { mode: 0o600 });
      await chmod(temporary, 0o600);
      await rename(temporary, path);
    });
    chain = next.catch(() => undefined);
    return next;
  };
  return {
    list: () => [...subscriptions],
    async add(subscription) {
      checkEndpoint(subscription.endpoint);
      const stored: PushSubscriptionJson = { endpoint: subscription.endpoint, expirationTime: subscription.expirationTime ?? null, keys: { p256dh: subscription.keys.p256dh, auth: subscription.keys.auth } };
      const index = subscriptions.findIndex((s) => s.endpoint === subscription.endpoint);
      if (index >= 0) subscriptions[index] = stored;
      else subscriptions.push(stored);
      await save();
      return { id: subscriptionId(subscription.endpoint), created: index < 0 };
    },
    async remove(endpoint) {
      const before = subscriptions.length;
      subscriptions = subscriptions.filter((s) => s.endpoint !== endpoint);
      if (subscriptions.length === before) return false;
      await save();
      return true;
    },
  };
}

function isSubscription(value: unknown): value is PushSubscriptionJson {
  const v = value as PushSubscriptionJson;
  return typeof v === "object" && v !== null && typeof v.endpoint === "string" && typeof v.keys?.p256dh === "string" && typeof v.keys.auth === "string";
}
