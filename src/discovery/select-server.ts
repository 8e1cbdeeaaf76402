/**
 * Choosing one server for a caller, from what discovery found. Pure: the
 * rules are "the owner of the conversation", "the agy in the pane", "the only
 * server"; anything else is a {@link DiscoveryError} that lists the
 * candidates, and two owners of one conversation are refused, never guessed
 * (spike-notes §2.6, §2.7).
 */
import { DiscoveryError, describeCandidates, type DiscoveryCandidate } from "./discovery-error.js";
import type { DiscoveredServer, ServerBinding } from "./types.js";

export interface Selection {
  conversationId?: string;
  /** The agy pid found in the caller's pane (undefined when no pane was given). */
  paneAgyPid?: number;
  /** What the pane was, for messages (`%3 on -L work`). */
  paneLabel?: string;
  /**
   * Pids whose `GetConversationMetadata` echoed the conversation, for servers
   * that did not list it in `GetAllCascadeTrajectories` (older builds).
   */
  metadataOwners?: readonly number[];
}

/** A candidate as errors list it: pid and ports, never a token. */
export function candidateOf(server: DiscoveredServer): DiscoveryCandidate {
  const candidate: DiscoveryCandidate = { pid: server.pid, ports: server.listeners.map((l) => l.port) };
  if (server.url !== undefined) candidate.url = server.url;
  return candidate;
}

/** The one server `selection` asks for, bound to a URL and token; throws {@link DiscoveryError} otherwise. */
export function selectServer(servers: readonly DiscoveredServer[], selection: Selection): ServerBinding {
  const usable = servers.filter((s) => s.url !== undefined);
  const all = servers.map(candidateOf);
  let pool = usable;
  const why: string[] = [];

  if (selection.paneLabel !== undefined) {
    const inPane = servers.find((s) => s.pid === selection.paneAgyPid);
    if (inPane === undefined) {
      throw new DiscoveryError(
        "not_found",
        `no agy process runs in tmux pane ${selection.paneLabel}${all.length > 0 ? `; agy processes found: ${describeCandidates(all)}` : ""}; check the pane target and socket`,
        all,
      );
    }
    if (inPane.url === undefined) {
      throw new DiscoveryError(
        "no_server",
        `the agy in tmux pane ${selection.paneLabel} (pid ${inPane.pid}) has no listener that answers Heartbeat; run \`agy-bridge doctor\` to see why`,
        [candidateOf(inPane)],
      );
    }
    pool = [inPane];
    why.push(`the agy in tmux pane ${selection.paneLabel}`);
  }

  const id = selection.conversationId;
  if (id !== undefined) {
    const owners = pool.filter((s) => s.conversations.some((c) => c.conversationId === id) || selection.metadataOwners?.includes(s.pid) === true);
    if (owners.length > 1) {
      throw new DiscoveryError(
        "conflict",
        `conversation ${id} is claimed by ${owners.length} servers (${describeCandidates(owners.map(candidateOf))}), so none is chosen; stop the stray agy or pass --url`,
        owners.map(candidateOf),
      );
    }
    const owner = owners[0];
    if (owner === undefined) {
      const seen =
        usable.length === 0 ? "no usable agy language server was found" : `the servers found (${describeCandidates(usable.map(candidateOf))}) do not host it`;
      throw new DiscoveryError("not_found", `no agy hosts conversation ${id}: ${seen}; check the id or run \`agy-bridge sessions\``, all);
    }
    why.push(`owns conversation ${id}`);
    return bind(owner, id, why);
  }

  if (pool.length === 1) {
    const only = pool[0] as DiscoveredServer;
    if (why.length === 0) why.push("the only agy language server");
    return bind(only, only.conversations.find((c) => c.parentConversationId === undefined)?.conversationId, why);
  }
  if (pool.length === 0) {
    const detail = servers.length === 0 ? "no agy process is running" : `agy processes were found (${describeCandidates(all)}) but none answers Heartbeat`;
    throw new DiscoveryError("no_server", `no usable agy language server: ${detail}; start agy or run \`agy-bridge doctor\``, all);
  }
  throw new DiscoveryError(
    "ambiguous",
    `${pool.length} agy language servers are running (${describeCandidates(pool.map(candidateOf))}); pick one with --conversation, a tmux pane, or --url`,
    pool.map(candidateOf),
  );
}

function bind(server: DiscoveredServer, conversationId: string | undefined, why: string[]): ServerBinding {
  const binding: ServerBinding = { url: server.url as string, pid: server.pid, how: `pid ${server.pid}: ${why.join(", ")}` };
  if (server.csrfToken !== undefined) binding.csrfToken = server.csrfToken;
  if (conversationId !== undefined) binding.conversationId = conversationId;
  if (server.agyVersion !== undefined) binding.agyVersion = server.agyVersion;
  if (server.agyVersionSource !== undefined) binding.agyVersionSource = server.agyVersionSource;
  if (server.simulator === true) binding.simulator = true;
  return binding;
}
