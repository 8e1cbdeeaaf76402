/**
 * Where the ACP agent's sessions come from. The CLI builds it (discovery,
 * `AgySession.attach`, the policy); the ACP layer only lists and attaches
 * through it, so it never talks to discovery, RPC or tmux itself.
 */
import type { AgySessionApi } from "../session/index.js";

/** One attended conversation on offer. */
export interface AcpCandidate {
  conversationId: string;
  title?: string;
  /** agy's workspace root for the conversation, when agy names one. */
  workspace?: string;
  /** When the person last typed a turn (RFC 3339), when agy says. */
  updatedAt?: string;
}

export interface AcpSessionSource {
  /** The conversations on offer now (a fresh look). */
  list(signal: AbortSignal): Promise<AcpCandidate[]>;
  /** Attaches to one of them (following it, with the policy applied when one was given). */
  attach(conversationId: string, signal: AbortSignal): Promise<AgySessionApi>;
  /** The conversation named on the command line (`--conversation`): used when the editor names none. */
  readonly defaultConversationId?: string;
}
