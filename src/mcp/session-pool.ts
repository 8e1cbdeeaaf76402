/**
 * The sessions the MCP server supervises: listed by the injected source,
 * attached on first need (a tool, a resource, `list_sessions`), each with its
 * events pumped into a {@link ConversationLog}. Shared by every MCP client of
 * one process, so two agents see one numbering and one pending set.
 */
import type { AgySessionApi } from "../session/index.js";
import { createConversationLog, type ConversationLog } from "./conversation-log.js";
import { McpToolError } from "./mcp-error.js";
import type { McpSessionSource, SessionDescriptor } from "./session-source.js";

export interface PooledSession {
  readonly conversationId: string;
  readonly descriptor: SessionDescriptor;
  readonly session: AgySessionApi;
  readonly log: ConversationLog;
  /** True for the session named by the command line's connection options. */
  readonly isDefault: boolean;
}

export interface SessionPool {
  /** Lists, attaches the new conversations, drops the vanished ones. Concurrent calls share one run. */
  refresh(): Promise<void>;
  list(): PooledSession[];
  /** The session of `conversationId`, or the default one; a {@link McpToolError} with a sentence when there is none. */
  get(conversationId: string | undefined): Promise<PooledSession>;
  /** Called when a session is added or removed. */
  onChange(listener: () => void): () => void;
  close(): Promise<void>;
}

export interface SessionPoolOptions {
  source: McpSessionSource;
  /** Told about failures to list, attach or read, one sentence each (no secrets). */
  onProblem?: (message: string) => void;
}

interface Entry extends PooledSession {
  abort: AbortController;
  isDefault: boolean;
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: one of the functions over 100 lines that #35 splits; listed so no new one is added
export function createSessionPool(options: SessionPoolOptions): SessionPool {
  const { source } = options;
  const entries = new Map<string, Entry>();
  // Logs outlive their sessions: a re-attached conversation keeps its numbering.
  const logs = new Map<string, ConversationLog>();
  const listeners = new Set<() => void>();
  const lifetime = new AbortController();
  let running: Promise<void> | undefined;
  let defaultAttach: Promise<Entry> | undefined;
  let defaultId: string | undefined;
  const changed = () => {
    for (const listener of [...listeners]) listener();
  };

  function remove(id: string): void {
    const entry = entries.get(id);
    if (entry === undefined) return;
    entries.delete(id);
    entry.abort.abort();
    entry.session.close().catch(() => undefined);
    if (entry.isDefault) defaultAttach = undefined;
    changed();
  }

  function add(descriptor: SessionDescriptor, session: AgySessionApi, isDefault: boolean): Entry {
    const id = descriptor.conversationId;
    const known = logs.get(id);
    const log = known ?? createConversationLog();
    logs.set(id, log);
    const entry: Entry = { conversationId: id, descriptor, session, log, isDefault, abort: new AbortController() };
    entries.set(id, entry);
    changed();
    const pump = async () => {
      // A re-attach starts at the present: the history is in the log already.
      for await (const event of session.events({ signal: entry.abort.signal, history: known === undefined })) log.append(event);
    };
    void pump()
      .catch((error: unknown) => options.onProblem?.(`conversation ${id}: ${(error as Error).message}`))
      .finally(() => {
        if (entries.get(id) === entry) remove(id);
      });
    return entry;
  }

  async function attach(descriptor: SessionDescriptor): Promise<void> {
    try {
      const session = await source.attach(descriptor, lifetime.signal);
      if (lifetime.signal.aborted || entries.has(descriptor.conversationId)) {
        await session.close();
        return;
      }
      add(descriptor, session, false);
    } catch (error) {
      options.onProblem?.(`attaching to conversation ${descriptor.conversationId} failed: ${(error as Error).message}`);
    }
  }

  async function run(): Promise<void> {
    let found: SessionDescriptor[];
    try {
      found = await source.list(lifetime.signal);
    } catch (error) {
      options.onProblem?.(`listing sessions failed: ${(error as Error).message}`);
      return;
    }
    const seen = new Set(found.map((d) => d.conversationId));
    for (const [id, entry] of [...entries]) {
      if (!entry.isDefault && !seen.has(id) && source.retain?.(entry.descriptor) !== true) remove(id);
    }
    await Promise.all(found.filter((d) => !entries.has(d.conversationId)).map(attach));
  }

  function refresh(): Promise<void> {
    running ??= run().finally(() => {
      running = undefined;
    });
    return running;
  }

  async function theDefault(): Promise<Entry> {
    const attachDefault = source.attachDefault;
    if (attachDefault !== undefined) {
      defaultAttach ??= (async () => {
        const { descriptor, session } = await attachDefault(lifetime.signal);
        defaultId = descriptor.conversationId;
        const existing = entries.get(descriptor.conversationId);
        if (existing !== undefined) {
          // Discovery attached it first: it is the default all the same.
          await session.close();
          existing.isDefault = true;
          changed();
          return existing;
        }
        return add(descriptor, session, true);
      })();
      defaultAttach.catch(() => {
        defaultAttach = undefined;
      });
      try {
        return await defaultAttach;
      } catch (error) {
        throw new McpToolError(
          `The conversation named when agy-bridge mcp started cannot be reached (${(error as Error).message.replace(/\.$/, "")}); pass a conversationId from list_sessions.`,
        );
      }
    }
    await refresh();
    const all = [...entries.values()];
    if (all.length === 1) return all[0]!;
    if (all.length === 0) throw new McpToolError("No agy session was found on this machine; start agy in tmux, then call list_sessions.");
    const ids = all.map((e) => e.conversationId).join(", ");
    throw new McpToolError(`${all.length} agy sessions are running and no conversationId was given; pass one of: ${ids}.`);
  }

  return {
    refresh,
    list: () => [...entries.values()],
    async get(conversationId) {
      if (conversationId === undefined) return theDefault();
      const known = entries.get(conversationId);
      if (known !== undefined) return known;
      if (source.attachDefault !== undefined && (defaultId === undefined || defaultId === conversationId)) {
        const entry = await theDefault().catch(() => undefined);
        if (entry?.conversationId === conversationId) return entry;
      }
      await refresh();
      const found = entries.get(conversationId);
      if (found !== undefined) return found;
      throw new McpToolError(
        `No agy session in reach has conversation ${JSON.stringify(conversationId.slice(0, 100))}; call list_sessions for the conversations on offer.`,
      );
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      lifetime.abort();
      const all = [...entries.values()];
      entries.clear();
      for (const entry of all) entry.abort.abort();
      await Promise.allSettled(all.map((e) => e.session.close()));
    },
  };
}
