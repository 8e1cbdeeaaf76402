/**
 * Where the MCP server's sessions come from. The CLI builds it (discovery,
 * `AgySession.attach`); the MCP layer only attaches through it, so it never
 * talks to discovery, RPC or tmux itself.
 */
import type { AgySessionApi } from "../session/index.js";

/** One conversation on offer. */
export interface SessionDescriptor {
  conversationId: string;
  /** agy's process id, when discovery knows it. */
  pid?: number;
  title?: string;
}

export interface McpSessionSource {
  /** The conversations on offer now (a fresh look). */
  list(signal: AbortSignal): Promise<SessionDescriptor[]>;
  /** Attaches to one of them. */
  attach(descriptor: SessionDescriptor, signal: AbortSignal): Promise<AgySessionApi>;
  /**
   * The session for tools called without a conversation, from the command
   * line's connection options. Absent: the one conversation `list` offers.
   */
  attachDefault?(signal: AbortSignal): Promise<{ descriptor: SessionDescriptor; session: AgySessionApi }>;
  /** Keeps a session a refresh did not list while this says it is still there (its agy lives). Default: dropped. */
  retain?(descriptor: SessionDescriptor): boolean;
}
