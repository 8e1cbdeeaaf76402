/**
 * The browsers subscribed to Web Push, kept in one JSON file (0600, beside
 * the token) so they survive a restart of serve. Writes go to a temporary
 * file renamed over the old one: a crash leaves the old list or the new one.
 *
 * Each subscription belongs to the principal that stored it — a paired
 * device's id, or `owner` for the bearer token — so revoking a device deletes
 * its subscriptions, and a device holds at most {@link MAX_SUBSCRIPTIONS_PER_DEVICE}
 * (a new one replaces its oldest). Endpoints are checked before they are
 * stored and again before every push (docs/notifications.md): `https:` on a
 * public host only, so a device token cannot make serve POST to this machine
 * or its network; loopback only when the store was opened with
 * `allowLoopback` (a test's push stand-in).
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

/** A stored subscription: whose it is (a device id, or `owner`). */
export interface StoredPushSubscription extends PushSubscriptionJson {
  device: string;
}

/** The principal of the bearer token (not a paired device). */
export const OWNER = "owner";
/** Subscriptions one device (or the bearer token) may hold; a new one replaces its oldest. */
export const MAX_SUBSCRIPTIONS_PER_DEVICE = 5;

export interface PushSubscriptionStore {
  list(): StoredPushSubscription[];
  /**
   * Stores it for `device` (default {@link OWNER}), replacing the keys of a stored endpoint;
   * `invalid_argument` for an endpoint push must not use. Over the device's cap, its oldest goes.
   */
  add(subscription: PushSubscriptionJson, device?: string): Promise<{ id: string; created: boolean }>;
  /** False when no subscription had that endpoint (a device removes only its own; the owner any). */
  remove(endpoint: string, device?: string): Promise<boolean>;
  /** Deletes every subscription of the device (it was revoked); how many went. */
  removeDevice(device: string): Promise<number>;
  /** Deletes the subscriptions of devices not in `paired` (the owner's stay); how many went. */
  retain(paired: ReadonlySet<string>): Promise<number>;
  /** The check {@link add} makes, with this store's `allowLoopback`. */
  check(endpoint: string): void;
}

export interface PushSubscriptionStoreOptions {
  /** Let endpoints on loopback (http or https) in: only for a test's push stand-in. Default false. */
  allowLoopback?: boolean;
  /** Default {@link MAX_SUBSCRIPTIONS_PER_DEVICE}. */
  maxPerDevice?: number;
}

const loopback = new BlockList();
loopback.addSubnet("127.0.0.0", 8, "ipv4");
loopback.addAddress("::1", "ipv6");

/** Addresses a push service never has: this machine, private networks, link-local, CGNAT, multicast, reserved. */
const nonPublic = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const)
  nonPublic.addSubnet(net, bits, "ipv4");
for (const [net, bits] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
  ["2001:db8::", 32],
  ["64:ff9b::", 96],
  ["100::", 64],
] as const)
  nonPublic.addSubnet(net, bits, "ipv6");

/** The IPv4 address inside an IPv4-mapped IPv6 one (`::ffff:127.0.0.1`), if it is one. */
function mappedV4(address: string): string | undefined {
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (dotted !== undefined) return dotted;
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (hex === null) return undefined;
  const high = parseInt(hex[1]!, 16);
  const low = parseInt(hex[2]!, 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/** True for an IP address on this machine (127/8, ::1, and their mapped forms). */
export function isLoopbackAddress(address: string): boolean {
  const v4 = mappedV4(address);
  if (v4 !== undefined) return loopback.check(v4, "ipv4");
  const family = isIP(address);
  return family !== 0 && loopback.check(address, family === 6 ? "ipv6" : "ipv4");
}

/** True for an IP address no public push service has (private, loopback, link-local, …). */
export function isNonPublicAddress(address: string): boolean {
  const v4 = mappedV4(address);
  if (v4 !== undefined) return nonPublic.check(v4, "ipv4");
  const family = isIP(address);
  if (family === 0) return true;
  return nonPublic.check(address, family === 6 ? "ipv6" : "ipv4");
}

/** Names that never reach a public push service: this machine and local-network names. */
function isLocalName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  // A single label (`router`, `nas`) is resolved on the local network, never a push service's name.
  if (!name.includes(".")) return true;
  return /\.(local|lan|internal|intranet|home|corp|home\.arpa)$/.test(name);
}

/** A short stable id for a subscription: its endpoint is a capability URL and stays out of answers and logs. */
export function subscriptionId(endpoint: string): string {
  return createHash("sha256").update(endpoint).digest("hex").slice(0, 16);
}

/**
 * Push services are `https:` on public hosts. Refused: another scheme, a URL
 * with credentials, a loopback/private/link-local address, and local names —
 * unless `allowLoopback`, which lets loopback (http or https) in, and nothing
 * else. (A public name whose DNS points inward is refused when serve connects:
 * web-push-notifier.ts checks the address it reaches.)
 */
export function checkEndpoint(endpoint: string, options: { allowLoopback?: boolean } = {}): void {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new AgyBridgeError("invalid_argument", "the subscription's endpoint is not a URL; send PushSubscription.toJSON() as the browser gives it");
  }
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const isLoopback = host.toLowerCase() === "localhost" || isLoopbackAddress(host);
  if (options.allowLoopback === true && isLoopback && (url.protocol === "http:" || url.protocol === "https:")) return;
  if (url.protocol !== "https:") {
    throw new AgyBridgeError("invalid_argument", `the subscription's endpoint must be an https: URL of a push service, not ${url.protocol}//${url.host}`);
  }
  if (url.username !== "" || url.password !== "")
    throw new AgyBridgeError("invalid_argument", "the subscription's endpoint carries user:password@; push services take none");
  if ((isIP(host) !== 0 && isNonPublicAddress(host)) || (isIP(host) === 0 && isLocalName(host))) {
    throw new AgyBridgeError(
      "invalid_argument",
      `the subscription's endpoint names ${url.host}, on this machine or a private network; push endpoints must be a public push service (the browser's own, e.g. fcm.googleapis.com)`,
    );
  }
}

export async function openPushSubscriptionStore(path: string, options: PushSubscriptionStoreOptions = {}): Promise<PushSubscriptionStore> {
  const allowLoopback = options.allowLoopback === true;
  const maxPerDevice = options.maxPerDevice ?? MAX_SUBSCRIPTIONS_PER_DEVICE;
  const check = (endpoint: string) => checkEndpoint(endpoint, { allowLoopback });
  const acceptable = (endpoint: string) => {
    try {
      check(endpoint);
      return true;
    } catch {
      return false;
    }
  };
  let subscriptions: StoredPushSubscription[] = [];
  try {
    const parsed = JSON.parse(await readFile(path, "utf8")) as unknown;
    // Stored before subscriptions had owners: the bearer token's. One push must not use (an older
    // version let loopback in) is never sent to; it is dropped at the next write.
    if (Array.isArray(parsed))
      subscriptions = parsed
        .filter(isSubscription)
        .map((s) => ({ ...s, device: typeof s.device === "string" && s.device !== "" ? s.device : OWNER }))
        .filter((s) => acceptable(s.endpoint));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT" && !(error instanceof SyntaxError)) {
      throw new AgyBridgeError("invalid_argument", `cannot read the push subscriptions ${path} (${(error as NodeJS.ErrnoException).code ?? "error"})`, {
        cause: error,
      });
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
  const drop = async (keep: (s: StoredPushSubscription) => boolean): Promise<number> => {
    const before = subscriptions.length;
    subscriptions = subscriptions.filter(keep);
    const removed = before - subscriptions.length;
    if (removed > 0) await save();
    return removed;
  };
  return {
    list: () => subscriptions.map((s) => ({ ...s, keys: { ...s.keys } })),
    check,
    async add(subscription, device = OWNER) {
      check(subscription.endpoint);
      const stored: StoredPushSubscription = {
        endpoint: subscription.endpoint,
        expirationTime: subscription.expirationTime ?? null,
        keys: { p256dh: subscription.keys.p256dh, auth: subscription.keys.auth },
        device,
      };
      const created = !subscriptions.some((s) => s.endpoint === subscription.endpoint);
      // Stored again (new keys, or the browser paired again as another device): it moves to the end, as the newest.
      subscriptions = subscriptions.filter((s) => s.endpoint !== subscription.endpoint);
      subscriptions.push(stored);
      // The cap: the device's oldest subscriptions make room.
      const own = subscriptions.filter((s) => s.device === device);
      if (own.length > maxPerDevice) {
        const gone = new Set(own.slice(0, own.length - maxPerDevice));
        subscriptions = subscriptions.filter((s) => !gone.has(s));
      }
      await save();
      return { id: subscriptionId(subscription.endpoint), created };
    },
    remove(endpoint, device = OWNER) {
      return drop((s) => s.endpoint !== endpoint || (device !== OWNER && s.device !== device)).then((n) => n > 0);
    },
    removeDevice(device) {
      return drop((s) => s.device !== device);
    },
    retain(paired) {
      return drop((s) => s.device === OWNER || paired.has(s.device));
    },
  };
}

function isSubscription(value: unknown): value is StoredPushSubscription {
  const v = value as StoredPushSubscription;
  return typeof v === "object" && v !== null && typeof v.endpoint === "string" && typeof v.keys?.p256dh === "string" && typeof v.keys.auth === "string";
}
