/**
 * A server's probe through the discovery cache (`discovery-cache.ts`): the
 * remembered listener is asked for its conversations at once, and the full
 * probe (`server-probe.ts`) runs when nothing is remembered for this process,
 * when what is remembered no longer matches its listeners, or when the
 * remembered listener does not answer.
 *
 * The token rule of the full probe holds: the cache is consulted only for a
 * process whose every listener is its own (from its fds, re-read now), and a
 * probe is kept only when every listener was its own, so the token never goes
 * anywhere on the cache's word alone.
 */
import type { AgyRpcClient } from "../rpc/client.js";
import { conversationsOf } from "./conversations.js";
import type { CachedProbe, DiscoveryCache, ProcessIdentity } from "./discovery-cache.js";
import type { ProcSource } from "./proc-source.js";
import { dialHost, probeServer, type ProbeCandidate, type ProbeSettings, type ServerProbe } from "./server-probe.js";

export interface CacheContext {
  cache: DiscoveryCache;
  /** The process's identity now; undefined when its stat could not be read (no cache then). */
  identity: ProcessIdentity | undefined;
}

/** {@link probeServer}, or the cached probe when it still holds. */
export async function probeThroughCache(
  pid: number,
  candidates: readonly ProbeCandidate[],
  token: string | undefined,
  settings: ProbeSettings,
  context: CacheContext | undefined,
): Promise<ServerProbe> {
  const identity = context?.identity;
  const ownOnly = candidates.length > 0 && candidates.every((c) => c.trust === "own");
  if (context === undefined || identity === undefined || !ownOnly) return probeServer(pid, candidates, token, settings);
  const kept = await context.cache.lookup(identity);
  if (kept !== undefined) {
    const hit = await probeFromCache(pid, kept, candidates, token, settings);
    if (hit !== undefined) return hit;
    context.cache.forget(pid);
  }
  const probe = await probeServer(pid, candidates, token, settings);
  if (probe.url !== undefined) context.cache.store(identity, { listeners: probe.listeners, url: probe.url, urlTokenSent: probe.urlTokenSent === true });
  return probe;
}

/** The cached probe with fresh conversations, or undefined when it does not hold for the process as it is now. */
async function probeFromCache(
  pid: number,
  kept: CachedProbe,
  candidates: readonly ProbeCandidate[],
  token: string | undefined,
  settings: ProbeSettings,
): Promise<ServerProbe | undefined> {
  const ports = (list: ReadonlyArray<{ port: number; host: string }>) =>
    list
      .map((l) => `${l.host}:${l.port}`)
      .sort()
      .join(",");
  // Same listeners as when they were probed, and the token found now is the one the kept verdict was made with (or none).
  if (ports(kept.listeners) !== ports(candidates)) return undefined;
  if (kept.urlTokenSent !== (token !== undefined)) return undefined;
  // The remembered URL must name one of those listeners, one that answered: the file alone never picks where the token goes.
  const chosen = listenerOfUrl(kept);
  if (chosen === undefined || !chosen.heartbeatOk) return undefined;
  let client: AgyRpcClient | undefined;
  try {
    client = settings.createClient({ baseUrl: kept.url, ...(token === undefined ? {} : { csrfToken: token }) });
    const signal = settings.signal?.();
    const answer = await client.getAllCascadeTrajectories({}, { timeoutMs: settings.rpcTimeoutMs, ...(signal === undefined ? {} : { signal }) });
    const conversations = conversationsOf(answer);
    const port = chosen.port;
    const n = conversations.length;
    return {
      listeners: kept.listeners,
      url: kept.url,
      urlTokenSent: kept.urlTokenSent,
      conversations,
      steps: [
        {
          step: "listener",
          status: "ok",
          pid,
          port,
          detail: `port ${port} is the listener the discovery cache remembers for pid ${pid} (the same process since it was probed); handshakes and Heartbeat skipped`,
        },
        { step: "conversations", status: "ok", pid, port, detail: `GetAllCascadeTrajectories lists ${n} conversation${n === 1 ? "" : "s"}` },
      ],
    };
  } catch {
    // Gone, restarted behind the same identity, or stuck: the full probe finds out and says why.
    return undefined;
  } finally {
    await client?.close();
  }
}

/** The kept listener `kept.url` names (scheme by transport, host and port), if any. */
function listenerOfUrl(kept: CachedProbe): CachedProbe["listeners"][number] | undefined {
  let url: URL;
  try {
    url = new URL(kept.url);
  } catch {
    return undefined;
  }
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return kept.listeners.find(
    (l) =>
      String(l.port) === url.port && dialHost(l.host) === host && (l.transport === "tls" ? "https:" : l.transport === "plain" ? "http:" : "") === url.protocol,
  );
}

/**
 * Each scanned process's identity for the cache: its stat identity (command
 * name and start time, as the scan read it) with the boot id, since start
 * times count from boot. No boot id, or no stat, means no identity.
 */
export async function processIdentities(proc: ProcSource, identities: ReadonlyMap<number, { key: string }>): Promise<Map<number, ProcessIdentity>> {
  const out = new Map<number, ProcessIdentity>();
  const boot = await proc.read("sys/kernel/random/boot_id", 256);
  if (!boot.ok || boot.value.trim() === "") return out;
  for (const [pid, { key }] of identities) out.set(pid, { pid, key: `${boot.value.trim()}\u0000${key}` });
  return out;
}
