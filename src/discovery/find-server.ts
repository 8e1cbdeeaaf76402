/**
 * `findServer`: one language server for one caller. Given a URL, discovery is
 * skipped (the URL is still loopback-checked); otherwise the owner of the
 * conversation, the agy in the pane, or the only server — and a
 * {@link DiscoveryError} listing the candidates in every other case.
 */
import { assertLoopbackUrl } from "../rpc/loopback.js";
import { createAbortFanout } from "./abort-fanout.js";
import { clientFactory } from "./rpc-loader.js";
import { discoverServers, type DiscoverOptions } from "./discover.js";
import { DiscoveryError } from "./discovery-error.js";
import { paneLabel, panePid } from "./pane-lookup.js";
import { agyInSubtree } from "./process-scan.js";
import { spawnCommand } from "./run-command.js";
import { selectServer, type Selection } from "./select-server.js";
import type { DiscoveredServer, ServerBinding, ServerQuery } from "./types.js";

/** Finds the server `query` asks for; throws {@link DiscoveryError} (or `not_loopback` for a given URL). */
export async function findServer(query: ServerQuery, options: DiscoverOptions = {}): Promise<ServerBinding> {
  if (query.url !== undefined) {
    const url = assertLoopbackUrl(query.url);
    const binding: ServerBinding = { url: url.origin, how: "the URL given by the caller (discovery skipped)" };
    if (query.csrfToken !== undefined) binding.csrfToken = query.csrfToken;
    if (query.conversationId !== undefined) binding.conversationId = query.conversationId;
    return binding;
  }
  const signal = query.signal ?? options.signal;
  const run = options.run ?? spawnCommand;
  const settings: DiscoverOptions = {
    ...options,
    ...(signal === undefined ? {} : { signal }),
    ...(query.csrfToken === undefined ? {} : { csrfToken: query.csrfToken }),
    // The pane's own tmux server is where its pane id means something.
    ...(query.pane === undefined ? {} : { tmuxServers: [withoutTarget(query.pane)] }),
  };
  const [{ servers, parents }, pane] = await Promise.all([
    discoverServers(settings),
    query.pane === undefined ? undefined : panePid(run, query.pane, options.commandTimeoutMs ?? 5_000),
  ]);
  const selection: Selection = {};
  if (query.conversationId !== undefined) selection.conversationId = query.conversationId;
  if (query.pane !== undefined && pane !== undefined) {
    if ("failure" in pane) throw new DiscoveryError("pane", `cannot tell which process runs in tmux pane ${paneLabel(query.pane)}: ${pane.failure}`);
    selection.paneLabel = paneLabel(query.pane);
    const agy = agyInSubtree(parents, pane.pid, new Set(servers.map((s) => s.pid)));
    if (agy !== undefined) selection.paneAgyPid = agy;
  }
  if (query.conversationId !== undefined && !servers.some((s) => s.conversations.some((c) => c.conversationId === query.conversationId))) {
    selection.metadataOwners = await metadataOwners(servers, query.conversationId, options, signal);
  }
  return selectServer(servers, selection);
}

/**
 * Servers whose `GetConversationMetadata` echoes `id` exactly (spike-notes
 * §2.6): for builds that do not list it in `GetAllCascadeTrajectories`.
 * Anything but an exact echo counts as "not the owner".
 */
async function metadataOwners(servers: readonly DiscoveredServer[], id: string, options: DiscoverOptions, signal: AbortSignal | undefined): Promise<number[]> {
  const createClient = await clientFactory(options.createClient);
  const abort = createAbortFanout(signal);
  const checks = servers
    .filter((s) => s.url !== undefined)
    .map(async (server) => {
      const client = createClient({ baseUrl: server.url as string, ...(server.csrfToken === undefined ? {} : { csrfToken: server.csrfToken }) });
      try {
        const own = abort.child();
        const answer = await client.getConversationMetadata(
          { conversationId: id },
          { timeoutMs: options.rpcTimeoutMs ?? 2_000, ...(own === undefined ? {} : { signal: own }) },
        );
        return answer.metadata?.rootConversationId === id ? server.pid : undefined;
      } catch {
        return undefined;
      } finally {
        await client.close();
      }
    });
  const owners = await Promise.all(checks).finally(() => abort.close());
  return owners.filter((pid): pid is number => pid !== undefined);
}

function withoutTarget(pane: NonNullable<ServerQuery["pane"]>): { socketName?: string; socketPath?: string } {
  const out: { socketName?: string; socketPath?: string } = {};
  if (pane.socketName !== undefined) out.socketName = pane.socketName;
  if (pane.socketPath !== undefined) out.socketPath = pane.socketPath;
  return out;
}
