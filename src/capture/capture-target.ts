/**
 * Which agy a capture or a compatibility report looks at: the session
 * commands' choice (`findServer`: the URL given, else the owner of the
 * conversation, the agy in the pane, or the only one), plus what discovery
 * knows of that process — its listeners, its version and its pane. Tokens
 * travel only to the RPC client, never into what this returns for printing.
 */
import { discoverServers, type DiscoverOptions } from "../discovery/discover.js";
import { findServer } from "../discovery/find-server.js";
import type { DiscoveredServer, PaneRef, ServerQuery } from "../discovery/types.js";
import type { CaptureListener } from "./capture-format.js";

export interface CaptureTarget {
  url: string;
  /** Sent as agy's CSRF header; never printed or written. */
  csrfToken?: string;
  conversationId?: string;
  /** agy's version as discovery read it (`ANTIGRAVITY_LS_VERSION`, the log), or null. */
  agyVersion: string | null;
  /** Where discovery read it (`process`), null when unknown. */
  agyVersionSource?: "process" | "server" | "screen" | null;
  /** The process is agy-bridge's simulator. */
  simulator?: boolean;
  /** Every listener of the process, with the role it answered in; just the URL's when discovery was skipped. */
  listeners: CaptureListener[];
  /** The pane given, else the one discovery found holding this agy (on the default tmux server). */
  pane?: PaneRef;
  /** How it was chosen, in words (never a token). */
  how: string;
}

export async function resolveCaptureTarget(query: ServerQuery, options: DiscoverOptions = {}): Promise<CaptureTarget> {
  const binding = await findServer(query, options);
  let server: DiscoveredServer | undefined;
  if (query.url === undefined && binding.pid !== undefined) {
    const found = await discoverServers({
      ...options,
      pids: [binding.pid],
      ...(query.csrfToken === undefined ? {} : { csrfToken: query.csrfToken }),
      ...(query.signal === undefined ? {} : { signal: query.signal }),
      ...(query.pane === undefined
        ? {}
        : {
            tmuxServers: [
              {
                ...(query.pane.socketName === undefined ? {} : { socketName: query.pane.socketName }),
                ...(query.pane.socketPath === undefined ? {} : { socketPath: query.pane.socketPath }),
              },
            ],
          }),
    });
    server = found.servers.find((s) => s.pid === binding.pid);
  }
  const url = new URL(binding.url);
  const listeners: CaptureListener[] =
    server === undefined
      ? [{ role: "rpc", transport: url.protocol === "https:" ? "tls" : "plain", port: Number(url.port) }]
      : server.listeners.map((l) => ({ role: l.heartbeatOk ? "rpc" : "silent", transport: l.transport, port: l.port }));
  const target: CaptureTarget = { url: binding.url, agyVersion: server?.agyVersion ?? server?.version ?? null, listeners, how: binding.how };
  if (server?.agyVersion !== undefined) target.agyVersionSource = server.agyVersionSource ?? "process";
  if (server?.simulator === true) target.simulator = true;
  if (binding.csrfToken !== undefined) target.csrfToken = binding.csrfToken;
  if (binding.conversationId !== undefined) target.conversationId = binding.conversationId;
  if (query.pane !== undefined) target.pane = query.pane;
  else if (server?.tmuxPane !== undefined) target.pane = { target: server.tmuxPane };
  return target;
}
