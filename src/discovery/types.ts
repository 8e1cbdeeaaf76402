/**
 * What discovery finds and how callers ask for a server. The shapes here are
 * the contract between discovery, the session runner and the CLI.
 */

/** How a listener speaks: identified by a real handshake, never by port order. */
export type ListenerTransport = "tls" | "plain" | "unknown";

export interface DiscoveredListener {
  port: number;
  /** The loopback address it listens on (`127.0.0.1`, or `::1` / IPv4-mapped). */
  host: string;
  transport: ListenerTransport;
  /** `Heartbeat` answered 200 on this listener. */
  heartbeatOk: boolean;
  /** Why the probe failed, in one sentence (never containing a token). */
  error?: string;
}

export interface DiscoveredConversation {
  conversationId: string;
  /** `CASCADE_RUN_STATUS_*` as agy reports it. */
  status?: string;
  stepCount?: number;
  lastUserInputTime?: string;
  /** Step indices of WAITING steps, from `GetAllCascadeTrajectories`. */
  waitingSteps: number[];
  title?: string;
  /** A sub-agent's conversation names its parent (spike-notes §4.11). */
  parentConversationId?: string;
}

/** One agy (or IDE language server) process and what it serves. */
export interface DiscoveredServer {
  pid: number;
  /** Absolute path of the executable (`/proc/<pid>/exe` or argv[0]). */
  executable: string;
  version?: string;
  /** The preferred listener's URL (TLS first), when one answered. */
  url?: string;
  listeners: DiscoveredListener[];
  /** The CSRF token the server wants, when one was found. Never print it. */
  csrfToken?: string;
  csrfTokenPresent: boolean;
  conversations: DiscoveredConversation[];
  /** The tmux pane (`%N`) whose process tree holds this pid, when known. */
  tmuxPane?: string;
}

/** A server chosen for one caller: where to connect and with what. */
export interface ServerBinding {
  url: string;
  csrfToken?: string;
  pid?: number;
  /** The conversation asked for, or the server's only/most recent one. */
  conversationId?: string;
  /** How it was found, for `doctor`-style explanations ("only agy process", "owns conversation X"). */
  how: string;
}

/** A tmux pane given by the caller: target (`%N` or `=session`) and socket. */
export interface PaneRef {
  target: string;
  /** `-L name` */
  socketName?: string;
  /** `-S path` */
  socketPath?: string;
}

/** What a caller knows when it asks for a server. */
export interface ServerQuery {
  conversationId?: string;
  pane?: PaneRef;
  /** Given explicitly: discovery is skipped (the URL must still be loopback). */
  url?: string;
  csrfToken?: string;
  signal?: AbortSignal;
}
