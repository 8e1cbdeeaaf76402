/**
 * A conversation id as a person types it: the whole id, or the start of one
 * — the 8 characters `audit` prints — when exactly one known id starts with
 * it. The known ids are what the command can see: the ids in the audit log
 * for `audit`; for live commands, the conversations of the server `--url`
 * names, else of every agy discovery finds. A prefix two ids share is
 * refused (exit 2) with both named; a prefix no known id starts with is
 * passed on as given, so the command fails (or an older agy that lists no
 * conversations answers) as it did for a whole id.
 */
import { UsageError, type ConnectionArgs } from "./args.js";
import type { CliIo } from "./command.js";

/** agy's conversation ids are UUIDs (spike-notes §4.2): a whole one needs no lookup. */
const WHOLE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The most candidates an ambiguity names; the rest are counted. */
const SHOWN = 10;

/**
 * The known id `ref` names: `ref` itself when it is known, else the one id
 * that starts with it; undefined when none does. Throws {@link UsageError}
 * naming the candidates when several do.
 */
export function matchConversationRef(ref: string, known: Iterable<string>): string | undefined {
  const ids = new Set(known);
  if (ids.has(ref)) return ref;
  const matches = [...ids].filter((id) => id.startsWith(ref)).sort();
  if (matches.length <= 1) return matches[0];
  const more = matches.length > SHOWN ? `, and ${matches.length - SHOWN} more` : "";
  throw new UsageError(`--conversation is the start of ${matches.length} conversation ids (${matches.slice(0, SHOWN).join(", ")}${more}); give more of the id`);
}

/** Lists the conversation ids a live command could reach with `connection`. */
export type ConversationLister = (connection: ConnectionArgs, signal: AbortSignal) => Promise<string[]>;

/**
 * `target` with its `--conversation` prefix replaced by the one id it names
 * (see the file comment); unchanged without `--conversation`, for a whole
 * id, or when nothing could be listed. Throws {@link UsageError} (exit 2)
 * for an ambiguous prefix.
 */
export async function resolveConversationTarget<T extends { connection: ConnectionArgs }>(
  io: Pick<CliIo, "signal">,
  target: T,
  list: ConversationLister = listConversations,
): Promise<T> {
  const ref = target.connection.conversationId;
  if (ref === undefined || WHOLE_ID.test(ref)) return target;
  const known = await list(target.connection, io.signal).catch(() => []);
  const id = matchConversationRef(ref, known);
  return id === undefined || id === ref ? target : { ...target, connection: { ...target.connection, conversationId: id } };
}

/** The server's conversations when `--url` names it, else those of every agy discovery finds. */
async function listConversations(connection: ConnectionArgs, signal: AbortSignal): Promise<string[]> {
  if (connection.url !== undefined) {
    const { createAgyRpcClient } = await import("../rpc/client.js");
    const client = createAgyRpcClient({ baseUrl: connection.url, ...(connection.csrfToken === undefined ? {} : { csrfToken: connection.csrfToken }) });
    try {
      return Object.keys((await client.getAllCascadeTrajectories({}, { signal })).trajectorySummaries ?? {});
    } finally {
      await client.close();
    }
  }
  const { discoverServers } = await import("../discovery/index.js");
  // Panes do not matter for the ids: tmux is skipped.
  const found = await discoverServers({ tmuxServers: [], ...(connection.csrfToken === undefined ? {} : { csrfToken: connection.csrfToken }), signal });
  return found.servers.flatMap((server) => server.conversations.map((c) => c.conversationId));
}
