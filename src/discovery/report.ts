/**
 * The step-by-step account of one discovery run, which `agy-bridge doctor`
 * prints. Every failed or doubtful step carries a one-sentence hint from
 * {@link HINTS}.
 */

export type StepStatus = "ok" | "warn" | "fail" | "info";

export interface DiscoveryStep {
  /** Which step: `processes`, `listeners`, `credentials`, `transport`, `heartbeat`, `conversations`, `tmux`. */
  step: string;
  status: StepStatus;
  /** The pid the step is about, when it is about one process. */
  pid?: number;
  /** The port the step is about, when it is about one listener. */
  port?: number;
  /** What was found or what failed, in one sentence (never a token). */
  detail: string;
  /** What to do about it, in one sentence. */
  hint?: string;
}

/** The hints `doctor` gives, one per kind of failure. */
export const HINTS = {
  noProcess: "Start agy (or `agy-bridge sim --as-agy`) in this network namespace, then run this again.",
  otherNetns: "Run agy-bridge inside the same container or network namespace as agy.",
  fdsUnreadable:
    "Run agy-bridge as the same user as agy so /proc/<pid>/fd is readable; until then listeners are guessed from the host-wide table, and a guessed listener is never sent the CSRF token.",
  guessed:
    "agy's CSRF token goes only to a listener proven to be agy's (its own fds, or its user's socket that refuses a tokenless call): run agy-bridge as agy's user, or pass --url and --csrf-token yourself.",
  noListener: "agy binds its listeners a moment after it starts: wait a second and run this again.",
  unauthorized:
    "The server wants a CSRF token and none was found: run as agy's user so its arguments and its children's environment are readable, or pass --csrf-token.",
  tokenRefused: "The CSRF token found was refused: pass the right one with --csrf-token.",
  tokenConflict: "Pass the right CSRF token with --csrf-token.",
  tlsFailed: "The listener accepted but the TLS handshake failed and it did not answer plain HTTP either: it is probably not agy's language server.",
  timeout: "The listener accepted the connection but answered nothing in time: agy may be hung or busy; try again, or restart agy.",
  refused: "Nothing listens on that port any more: agy may have exited or restarted; run this again.",
  notAgy: "The listener speaks HTTP but does not answer agy's Heartbeat: it is probably another service.",
  noTmux: "Install tmux to resolve panes, or pass --url.",
} as const;
