/**
 * Discovery run again and again (serve's refresh, every two seconds by
 * default), at the cost of what changed (issue 23, docs/scale.md).
 *
 * A full pass (`discover.ts`) reads every agy process's listeners and
 * environment, the tail of agy's log, probes each listener (a TLS handshake
 * and an RPC) and runs tmux. Between two refreshes almost nothing of that
 * changes: the same agy processes hold the same listeners, token and pane,
 * and only their conversations come and go. So a refresh first scans the
 * process list (identities cached, so only new or exec'd pids are looked at)
 * and, while the set of agy processes is the one the last full pass saw,
 * re-reads each known server's conversations with one
 * `GetAllCascadeTrajectories` over a client it keeps. The full pass runs
 * again when an agy process starts or exits, when a known server does not
 * answer (or had no listener that answered), and every `fullEveryMs`
 * regardless (a safety net for anything the
 * quick path cannot see, like a pane that moved).
 */
import type { AgyRpcClient } from "../rpc/client.js";
import { conversationsOf } from "./conversations.js";
import { discoverServers, type DiscoverOptions, type DiscoveryResult } from "./discover.js";
import { createProcSource } from "./proc-source.js";
import { clientFactory } from "./rpc-loader.js";
import { scanProcesses, type ScanIdentity } from "./process-scan.js";
import type { DiscoveredServer } from "./types.js";

export interface DiscoveryWatchOptions extends DiscoverOptions {
  /** The longest time between two full passes (ms); default 30,000. */
  fullEveryMs?: number;
  /** Deadline of a quick conversations read (ms); default 2,000 (the probe's). */
  quickTimeoutMs?: number;
  /**
   * The servers the caller offers (e.g. those in its -L/-S scope,
   * tmux-scope.ts): a quick refresh reads the conversations of these only,
   * and passes the others on as the last full pass saw them, for the caller
   * to leave out. Default every server. A relay of one host among several on
   * a machine would otherwise ask every other host's agy for its
   * conversations every refresh.
   */
  admits?: (server: DiscoveredServer) => boolean;
  now?: () => number;
}

export interface DiscoveryWatch {
  /** The servers now: a quick refresh while the agy processes are the same, else a full pass. */
  refresh(signal?: AbortSignal): Promise<DiscoveredServer[]>;
  /** How many full passes and quick refreshes ran (for tests and `docs/scale.md`'s figures). */
  readonly counts: { readonly full: number; readonly quick: number };
  /** Closes the kept clients. */
  close(): Promise<void>;
}

export function createDiscoveryWatch(options: DiscoveryWatchOptions = {}): DiscoveryWatch {
  const now = options.now ?? Date.now;
  const fullEveryMs = options.fullEveryMs ?? 30_000;
  const proc = options.proc ?? createProcSource(options.procRoot ?? "/proc");
  const identities = new Map<number, ScanIdentity>();
  const clients = new Map<string, AgyRpcClient>();
  const counts = { full: 0, quick: 0 };
  let last: { result: DiscoveryResult; processes: string; at: number } | undefined;

  /** The agy processes a scan sees, as one comparable string (pid and stat identity each). */
  async function processSet(): Promise<string | undefined> {
    // Only Linux has /proc to scan cheaply; elsewhere every refresh is a full pass.
    if ((options.platform ?? process.platform) !== "linux") return undefined;
    const scan = await scanProcesses(proc, { ...(options.pids === undefined ? {} : { pids: options.pids }), identities });
    if (scan.failure !== undefined) return undefined;
    return scan.processes.map((p) => `${p.pid}:${identities.get(p.pid)?.key ?? "?"}`).join(",");
  }

  async function full(signal: AbortSignal | undefined): Promise<DiscoveredServer[]> {
    const processes = await processSet();
    const result = await discoverServers({ ...options, proc, ...(signal === undefined ? {} : { signal }) });
    counts.full++;
    last = processes === undefined ? undefined : { result, processes, at: now() };
    // Clients of servers that are gone (or moved) are closed.
    const urls = new Set(result.servers.map((s) => keyOf(s)).filter((k) => k !== undefined));
    for (const [key, client] of clients) {
      if (urls.has(key)) continue;
      clients.delete(key);
      void client.close();
    }
    return result.servers;
  }

  async function quick(servers: DiscoveredServer[], signal: AbortSignal | undefined): Promise<DiscoveredServer[] | undefined> {
    const timeoutMs = options.quickTimeoutMs ?? 2_000;
    const read = await Promise.all(
      servers.map(async (server) => {
        if (options.admits !== undefined && !options.admits(server)) return server;
        const key = keyOf(server);
        // No listener answered the last full pass (agy starting, or stuck): only a full pass finds it.
        if (key === undefined || server.url === undefined) return undefined;
        let client = clients.get(key);
        if (client === undefined) {
          const makeClient = await clientFactory(options.createClient);
          client = makeClient({ baseUrl: server.url, ...(server.csrfToken === undefined ? {} : { csrfToken: server.csrfToken }) });
          clients.set(key, client);
        }
        try {
          const answer = await client.getAllCascadeTrajectories({}, { timeoutMs, ...(signal === undefined ? {} : { signal }) });
          return { ...server, conversations: conversationsOf(answer) };
        } catch {
          return undefined;
        }
      }),
    );
    // A server that did not answer may have moved or gone: the full pass finds out.
    if (read.some((s) => s === undefined)) return undefined;
    return read as DiscoveredServer[];
  }

  return {
    counts,
    async refresh(signal) {
      if (last === undefined || now() - last.at >= fullEveryMs) return full(signal);
      const processes = await processSet();
      if (processes !== last.processes) return full(signal);
      const servers = await quick(last.result.servers, signal);
      if (servers === undefined) return full(signal);
      counts.quick++;
      last.result = { ...last.result, servers };
      return servers;
    },
    async close() {
      const open = [...clients.values()];
      clients.clear();
      await Promise.allSettled(open.map((c) => c.close()));
    },
  };
}

/** A kept client is per URL and token: a server that restarted with a new token gets a new one. */
function keyOf(server: DiscoveredServer): string | undefined {
  return server.url === undefined ? undefined : `${server.url}\u0000${server.csrfToken ?? ""}`;
}
