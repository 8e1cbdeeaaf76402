/**
 * What discovery finds and how callers ask for a server. The shapes here are
 * the contract between discovery, the session runner and the CLI.
 */

import type { AgyVersionSource } from "./agy-version.js";

/** How a listener speaks: identified by a real handshake, never by port order. */
export type ListenerTransport = "tls" | "plain" | "unknown";

/**
 * Where a listener came from: the process's own fds (`fd`, Linux), `lsof`
 * (macOS), the address agy gives its children (`environ`), agy's log (`log`),
 * or the bounded host-wide table when nothing else could attribute one
 * (`fallback`: a guess, confirmed only by what it answers).
 */
export type ListenerSource = "fd" | "lsof" | "environ" | "log" | "fallback";

/**
 * Whether a listener is proven to be the agy process's own, which decides
 * whether it may receive agy's CSRF token: `own` (one of the process's
 * socket fds, or lsof says so), `same_user` (owned by agy's uid in
 * `net/tcp` — it gets the token only after a tokenless `Heartbeat` was
 * refused with 401 as agy refuses it), `guess` (anything else: never sent a
 * token).
 */
export type ListenerTrust = "own" | "same_user" | "guess";

export interface DiscoveredListener {
  port: number;
  /** The loopback address it listens on (`127.0.0.1`, or `::1` / IPv4-mapped). */
  host: string;
  transport: ListenerTransport;
  /** `Heartbeat` answered 200 on this listener. */
  heartbeatOk: boolean;
  /** Why the probe failed, in one sentence (never containing a token). */
  error?: string;
  source: ListenerSource;
  trust: ListenerTrust;
  /** The CSRF token was sent to this listener (only ever to `own` and vetted `same_user` ones). */
  tokenSent: boolean;
  /** The HTTP status `Heartbeat` got when it was not 200 (401: a token is needed). */
  httpStatus?: number;
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
  /** `ANTIGRAVITY_LS_VERSION` as agy's children carry it (`cli-` dropped), whatever it says (`sim`). */
  version?: string;
  /** agy's version (`1.2.10`), learned without starting agy (docs/discovery.md, "Which agy"); absent when unknown. */
  agyVersion?: string;
  /** Where {@link agyVersion} came from. */
  agyVersionSource?: AgyVersionSource;
  /** The process is agy-bridge's simulator (`agy-bridge sim --as-agy`), not a real agy. */
  simulator?: boolean;
  /** The preferred listener's URL (TLS first), when one answered. */
  url?: string;
  listeners: DiscoveredListener[];
  /** The CSRF token the server wants, when one was found. Never print it. */
  csrfToken?: string;
  csrfTokenPresent: boolean;
  /** Where the token was found (`--csrf_token argument`, `environment of pid N`); never the token. */
  csrfTokenSources?: string[];
  /** `agy` (the CLI serves RPC itself) or the IDE's `language_server`. */
  kind?: "agy" | "language_server";
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
  /** agy's version as discovery read it; absent when unknown (or discovery was skipped). */
  agyVersion?: string;
  agyVersionSource?: AgyVersionSource;
  /** The server is agy-bridge's simulator. */
  simulator?: boolean;
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
