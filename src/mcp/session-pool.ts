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

/** One pool's state, shared by the steps below. */
interface PoolState {
  readonly options: SessionPoolOptions;
  readonly entries: Map<string, Entry>;
  /** Logs outlive their sessions: a re-attached conversation keeps its numbering. */
  readonly logs: Map<string, ConversationLog>;
  readonly listeners: Set<() => void>;
  readonly lifetime: AbortController;
  /** The refresh under way, shared by concurrent callers. */
  running: Promise<void> | undefined;
  defaultAttach: Promise<Entry> | undefined;
  defaultId: string | undefined;
}

export function createSessionPool(options: SessionPoolOptions): SessionPool {
  const state: PoolState = {
    options,
    entries: new Map(),
    logs: new Map(),
    listeners: new Set(),
    lifetime: new AbortController(),
    running: undefined,
    defaultAttach: undefined,
    defaultId: undefined,
  };
  const { entries, listeners, lifetime } = state;
  return {
    refresh: () => refresh(state),
    list: () => [...entries.values()],
    get: (conversationId) => (conversationId === undefined ? theDefault(state) : named(state, conversationId)),
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

function changed(state: PoolState): void {
  for (const listener of [...state.listeners]) listener();
}

function remove(state: PoolState, id: string): void {
  const entry = state.entries.get(id);
  if (entry === undefined) return;
  state.entries.delete(id);
  entry.abort.abort();
  entry.session.close().catch(() => undefined);
  if (entry.isDefault) state.defaultAttach = undefined;
  changed(state);
}

/** Adds an attached session and pumps its events into its log until it ends (then it is removed). */
function add(state: PoolState, descriptor: SessionDescriptor, session: AgySessionApi, isDefault: boolean): Entry {
  const id = descriptor.conversationId;
  const known = state.logs.get(id);
  const log = known ?? createConversationLog();
  state.logs.set(id, log);
  const entry: Entry = { conversationId: id, descriptor, session, log, isDefault, abort: new AbortController() };
  state.entries.set(id, entry);
  changed(state);
  const pump = async () => {
    // A re-attach starts at the present: the history is in the log already.
    for await (const event of session.events({ signal: entry.abort.signal, history: known === undefined })) log.append(event);
  };
  void pump()
    .catch((error: unknown) => state.options.onProblem?.(`conversation ${id}: ${(error as Error).message}`))
    .finally(() => {
      if (state.entries.get(id) === entry) remove(state, id);
    });
  return entry;
}

async function attach(state: PoolState, descriptor: SessionDescriptor): Promise<void> {
  try {
    const session = await state.options.source.attach(descriptor, state.lifetime.signal);
    if (state.lifetime.signal.aborted || state.entries.has(descriptor.conversationId)) {
      await session.close();
      return;
    }
    add(state, descriptor, session, false);
  } catch (error) {
    state.options.onProblem?.(`attaching to conversation ${descriptor.conversationId} failed: ${(error as Error).message}`);
  }
}

/** Lists, drops the vanished sessions (unless the source retains them), attaches the new ones. */
async function run(state: PoolState): Promise<void> {
  const { source } = state.options;
  let found: SessionDescriptor[];
  try {
    found = await source.list(state.lifetime.signal);
  } catch (error) {
    state.options.onProblem?.(`listing sessions failed: ${(error as Error).message}`);
    return;
  }
  const seen = new Set(found.map((d) => d.conversationId));
  for (const [id, entry] of [...state.entries]) {
    if (!entry.isDefault && !seen.has(id) && source.retain?.(entry.descriptor) !== true) remove(state, id);
  }
  await Promise.all(found.filter((d) => !state.entries.has(d.conversationId)).map((d) => attach(state, d)));
}

function refresh(state: PoolState): Promise<void> {
  state.running ??= run(state).finally(() => {
    state.running = undefined;
  });
  return state.running;
}

/** The session named by the command line, or else the only one there is. */
async function theDefault(state: PoolState): Promise<Entry> {
  const attachDefault = state.options.source.attachDefault;
  if (attachDefault !== undefined) {
    state.defaultAttach ??= (async () => {
      const { descriptor, session } = await attachDefault(state.lifetime.signal);
      state.defaultId = descriptor.conversationId;
      const existing = state.entries.get(descriptor.conversationId);
      if (existing !== undefined) {
        // Discovery attached it first: it is the default all the same.
        await session.close();
        existing.isDefault = true;
        changed(state);
        return existing;
      }
      return add(state, descriptor, session, true);
    })();
    const attaching = state.defaultAttach;
    attaching.catch(() => {
      state.defaultAttach = undefined;
    });
    try {
      return await attaching;
    } catch (error) {
      throw new McpToolError(
        `The conversation named when agy-bridge mcp started cannot be reached (${(error as Error).message.replace(/\.$/, "")}); pass a conversationId from list_sessions.`,
      );
    }
  }
  await refresh(state);
  const all = [...state.entries.values()];
  if (all.length === 1) return all[0]!;
  if (all.length === 0) throw new McpToolError("No agy session was found on this machine; start agy in tmux, then call list_sessions.");
  const ids = all.map((e) => e.conversationId).join(", ");
  throw new McpToolError(`${all.length} agy sessions are running and no conversationId was given; pass one of: ${ids}.`);
}

/** The session of `conversationId`: known, the default one, or found by a refresh. */
async function named(state: PoolState, conversationId: string): Promise<Entry> {
  const known = state.entries.get(conversationId);
  if (known !== undefined) return known;
  if (state.options.source.attachDefault !== undefined && (state.defaultId === undefined || state.defaultId === conversationId)) {
    const entry = await theDefault(state).catch(() => undefined);
    if (entry?.conversationId === conversationId) return entry;
  }
  await refresh(state);
  const found = state.entries.get(conversationId);
  if (found !== undefined) return found;
  throw new McpToolError(
    `No agy session in reach has conversation ${JSON.stringify(conversationId.slice(0, 100))}; call list_sessions for the conversations on offer.`,
  );
}
