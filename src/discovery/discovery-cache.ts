/**
 * What discovery learned of an agy process, kept for a short time where it
 * is still true (issue #36): which of its listeners speaks TLS or plain HTTP
 * and which one answered `Heartbeat`. A process's listeners are fixed for its
 * life, so while the same process runs, a later discovery skips the
 * handshakes and Heartbeats and asks the remembered listener for its
 * conversations at once.
 *
 * An entry is keyed by the process's identity, never by its pid alone: the
 * pid, its command name and start time (`/proc/<pid>/stat` field 22, clock
 * ticks since boot) and the boot id (`/proc/sys/kernel/random/boot_id`), so a
 * reused pid, an exec'd process or a reboot is a different process. It is
 * trusted only while that identity reads the same, for at most `maxAgeMs`,
 * and only when the remembered listener is still among the process's own
 * fds; a remembered listener that does not answer drops the entry and the
 * full probe runs. The file holds ports, transports and verdicts, never the
 * CSRF token: the token is read from the process each time.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { DiscoveredListener, ListenerSource, ListenerTransport, ListenerTrust } from "./types.js";

/** A process as the cache knows it: pid and identity (command name, start time, boot id). */
export interface ProcessIdentity {
  pid: number;
  /** `parseStatIdentity` of its stat, joined with the boot id. */
  key: string;
}

/** What a probe learned of one process, minus its conversations (they change) and its token (never kept). */
export interface CachedProbe {
  listeners: DiscoveredListener[];
  /** The listener that answered Heartbeat and was asked for conversations. */
  url: string;
  /** The token was sent to `url` (and taken): a binding may carry the token read afresh. */
  urlTokenSent: boolean;
}

export interface DiscoveryCache {
  /** The probe of `who` when one is kept for that identity and younger than the bound. */
  lookup(who: ProcessIdentity): Promise<CachedProbe | undefined>;
  /** Keeps `probe` for `who` (written at {@link flush}). */
  store(who: ProcessIdentity, probe: CachedProbe): void;
  /** Forgets the process of `pid` (its listener did not answer, or it is gone). */
  forget(pid: number): void;
  /** Drops every entry whose pid is not in `alive` with the same identity. */
  keepOnly(alive: readonly ProcessIdentity[]): Promise<void>;
  /** Writes what changed (atomically, mode 0600); a cache that cannot be written is skipped silently. */
  flush(): Promise<void>;
}

export interface DiscoveryCacheOptions {
  /** The directory of `discovery.json`; created mode 0700. */
  dir: string;
  /** How long an entry is trusted (ms); default 300,000 (five minutes). */
  maxAgeMs?: number;
  now?: () => number;
}

interface Entry extends CachedProbe {
  key: string;
  savedAt: number;
}

interface CacheFile {
  version: 1;
  entries: Record<string, Entry>;
}

const FILE = "discovery.json";
const DEFAULT_MAX_AGE_MS = 300_000;
const TRANSPORTS: readonly ListenerTransport[] = ["tls", "plain", "unknown"];
const SOURCES: readonly ListenerSource[] = ["fd", "lsof", "environ", "log", "fallback"];
const TRUSTS: readonly ListenerTrust[] = ["own", "same_user", "guess"];

/** A discovery cache in `dir/discovery.json`. */
export function createDiscoveryCache(options: DiscoveryCacheOptions): DiscoveryCache {
  const path = join(options.dir, FILE);
  const maxAgeMs = options.maxAgeMs ?? DEFAULT_MAX_AGE_MS;
  const now = options.now ?? Date.now;
  let entries: Map<number, Entry> | undefined;
  let dirty = false;

  async function loaded(): Promise<Map<number, Entry>> {
    entries ??= await readEntries(path);
    return entries;
  }

  return {
    async lookup(who) {
      const entry = (await loaded()).get(who.pid);
      if (entry === undefined || entry.key !== who.key) return undefined;
      const age = now() - entry.savedAt;
      if (age < 0 || age > maxAgeMs) return undefined;
      return { url: entry.url, urlTokenSent: entry.urlTokenSent, listeners: entry.listeners.map((l) => ({ ...l })) };
    },
    store(who, probe) {
      entries ??= new Map();
      entries.set(who.pid, { key: who.key, savedAt: now(), url: probe.url, urlTokenSent: probe.urlTokenSent, listeners: probe.listeners.map(listenerRecord) });
      dirty = true;
    },
    forget(pid) {
      if (entries?.delete(pid) === true) dirty = true;
    },
    async keepOnly(alive) {
      const kept = await loaded();
      const keys = new Map(alive.map((p) => [p.pid, p.key]));
      for (const [pid, entry] of kept) {
        if (keys.get(pid) === entry.key) continue;
        kept.delete(pid);
        dirty = true;
      }
    },
    async flush() {
      if (!dirty || entries === undefined) return;
      dirty = false;
      const file: CacheFile = { version: 1, entries: Object.fromEntries([...entries].map(([pid, e]) => [String(pid), e])) };
      const temporary = `${path}.${randomBytes(6).toString("hex")}.tmp`;
      try {
        await mkdir(options.dir, { recursive: true, mode: 0o700 });
        await writeFile(temporary, `${JSON.stringify(file)}\n`, { mode: 0o600 });
        await rename(temporary, path);
      } catch {
        // A cache is an optimisation: one that cannot be written leaves discovery as it was.
      }
    },
  };
}

/** A listener as the file keeps it: named fields only, so nothing else a probe carried can reach the disk. */
function listenerRecord(l: DiscoveredListener): DiscoveredListener {
  const out: DiscoveredListener = {
    port: l.port,
    host: l.host,
    transport: l.transport,
    heartbeatOk: l.heartbeatOk,
    source: l.source,
    trust: l.trust,
    tokenSent: l.tokenSent,
  };
  if (l.httpStatus !== undefined) out.httpStatus = l.httpStatus;
  if (l.error !== undefined) out.error = l.error;
  return out;
}

/** The file's entries; a missing, unreadable or malformed file (or entry) is no entry. */
async function readEntries(path: string): Promise<Map<number, Entry>> {
  const out = new Map<number, Entry>();
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, "utf8"));
  } catch {
    return out;
  }
  if (!isObject(parsed) || parsed["version"] !== 1 || !isObject(parsed["entries"])) return out;
  for (const [pid, value] of Object.entries(parsed["entries"])) {
    const entry = entryOf(value);
    if (/^\d+$/.test(pid) && entry !== undefined) out.set(Number(pid), entry);
  }
  return out;
}

function entryOf(value: unknown): Entry | undefined {
  if (!isObject(value)) return undefined;
  const { key, savedAt, url, urlTokenSent, listeners } = value;
  if (typeof key !== "string" || typeof savedAt !== "number" || typeof url !== "string" || typeof urlTokenSent !== "boolean") return undefined;
  if (!Array.isArray(listeners)) return undefined;
  const read = listeners.map(listenerOf);
  if (read.some((l) => l === undefined)) return undefined;
  return { key, savedAt, url, urlTokenSent, listeners: read as DiscoveredListener[] };
}

function listenerOf(value: unknown): DiscoveredListener | undefined {
  if (!isObject(value)) return undefined;
  const { port, host, transport, heartbeatOk, source, trust, tokenSent, httpStatus, error } = value;
  if (typeof port !== "number" || !Number.isInteger(port) || typeof host !== "string" || typeof heartbeatOk !== "boolean" || typeof tokenSent !== "boolean") {
    return undefined;
  }
  const t = TRANSPORTS.find((x) => x === transport);
  const s = SOURCES.find((x) => x === source);
  const r = TRUSTS.find((x) => x === trust);
  if (t === undefined || s === undefined || r === undefined) return undefined;
  const out: DiscoveredListener = { port, host, transport: t, heartbeatOk, source: s, trust: r, tokenSent };
  if (typeof httpStatus === "number") out.httpStatus = httpStatus;
  if (typeof error === "string") out.error = error;
  return out;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The cache directory the CLI uses: `$AGY_BRIDGE_CACHE_DIR`, else
 * `$XDG_CACHE_HOME/agy-bridge`, else `$HOME/.cache/agy-bridge` (where
 * `sim --as-agy` keeps its launcher); undefined without any of them.
 */
export function discoveryCacheDir(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const own = env["AGY_BRIDGE_CACHE_DIR"];
  if (own !== undefined && own !== "") return own;
  const xdg = env["XDG_CACHE_HOME"];
  if (xdg !== undefined && xdg !== "") return join(xdg, "agy-bridge");
  const home = env["HOME"];
  return home === undefined || home === "" ? undefined : join(home, ".cache", "agy-bridge");
}
