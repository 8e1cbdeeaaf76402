/**
 * The sessions the MCP server supervises: listed by the injected source,
 * attached on first need (a tool, a resource, `list_sessions`), each with its
 * events pumped into a {@link ConversationLog}. Shared by every MCP client of
 * one process, so two agents see one numbering and one pending set. Kept in
 * step by the session layer's supervisor (session/supervisor.ts), as `serve`'s
 * sessions are.
 */
import type { AgySessionApi } from "../session/index.js";
import { createSupervisor, type Supervisor } from "../session/supervisor.js";
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

interface Pooled extends PooledSession {
  isDefault: boolean;
}

export function createSessionPool(options: SessionPoolOptions): SessionPool {
  const { source } = options;
  // Logs outlive their sessions: a re-attached conversation keeps its numbering.
  const logs = new Map<string, ConversationLog>();
  let defaultAttach: Promise<Pooled> | undefined;
  let defaultId: string | undefined;
  const supervisor: Supervisor<SessionDescriptor, AgySessionApi, Pooled> = createSupervisor({
    list: (signal) => source.list(signal),
    // The command line's session stays whatever discovery says; others while the source retains them.
    retain: (descriptor): boolean => supervisor.get(descriptor.conversationId)?.state.isDefault === true || source.retain?.(descriptor) === true,
    attach: (descriptor, signal) => source.attach(descriptor, signal),
    follow(descriptor, session, signal) {
      const id = descriptor.conversationId;
      const known = logs.get(id);
      const log = known ?? createConversationLog();
      logs.set(id, log);
      const state: Pooled = { conversationId: id, descriptor, session, log, isDefault: false };
      // A re-attach starts at the present: the history is in the log already.
      const reading = (async () => {
        for await (const event of session.events({ signal, history: known === undefined })) log.append(event);
      })();
      return { state, reading };
    },
    onDropped({ state }) {
      if (state.isDefault) defaultAttach = undefined;
    },
    ...(options.onProblem === undefined ? {} : { onProblem: options.onProblem }),
  });
  const notify = () => {
    // Marking the default changes what list_sessions says: the listeners hear of it.
    for (const listener of [...listeners]) listener();
  };
  const listeners = new Set<() => void>();
  supervisor.onChange(notify);

  /** The session named by the command line, or else the only one there is. */
  async function theDefault(): Promise<Pooled> {
    const attachDefault = source.attachDefault;
    if (attachDefault === undefined) return onlyOne();
    defaultAttach ??= (async () => {
      const { descriptor, session } = await attachDefault(supervisor.signal);
      defaultId = descriptor.conversationId;
      const known = supervisor.get(descriptor.conversationId) !== undefined;
      const { state } = await supervisor.adopt(descriptor, session);
      state.isDefault = true;
      // Discovery attached it first: it is the default all the same.
      if (known) notify();
      return state;
    })();
    const attaching = defaultAttach;
    attaching.catch(() => {
      if (defaultAttach === attaching) defaultAttach = undefined;
    });
    try {
      return await attaching;
    } catch (error) {
      throw new McpToolError(
        `The conversation named when agy-bridge mcp started cannot be reached (${(error as Error).message.replace(/\.$/, "")}); pass a conversationId from list_sessions.`,
      );
    }
  }

  async function onlyOne(): Promise<Pooled> {
    await supervisor.refresh();
    const all = supervisor.list();
    if (all.length === 1) return all[0]!.state;
    if (all.length === 0) throw new McpToolError("No agy session was found on this machine; start agy in tmux, then call list_sessions.");
    const ids = all.map((e) => e.conversationId).join(", ");
    throw new McpToolError(`${all.length} agy sessions are running and no conversationId was given; pass one of: ${ids}.`);
  }

  /** The session of `conversationId`: known, the default one, or found by a refresh. */
  async function named(conversationId: string): Promise<Pooled> {
    const known = supervisor.get(conversationId);
    if (known !== undefined) return known.state;
    if (source.attachDefault !== undefined && (defaultId === undefined || defaultId === conversationId)) {
      const entry = await theDefault().catch(() => undefined);
      if (entry?.conversationId === conversationId) return entry;
    }
    await supervisor.refresh();
    const found = supervisor.get(conversationId);
    if (found !== undefined) return found.state;
    throw new McpToolError(
      `No agy session in reach has conversation ${JSON.stringify(conversationId.slice(0, 100))}; call list_sessions for the conversations on offer.`,
    );
  }

  return {
    refresh: () => supervisor.refresh(),
    list: () => supervisor.list().map((s) => s.state),
    get: (conversationId) => (conversationId === undefined ? theDefault() : named(conversationId)),
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () => supervisor.close(),
  };
}
