/**
 * The one error family of agy-bridge. Every failure a caller can see is an
 * {@link AgyBridgeError} with a fixed {@link ErrorCode}; subclasses exist only
 * where callers branch on extra fields.
 *
 * Messages say what happened and what to do. They never contain secrets (CSRF
 * or bearer tokens): errors are built from facts we choose to include, never
 * from request headers.
 */

export type ErrorCode =
  /** A URL was refused before any socket opened because it is not loopback. */
  | "not_loopback"
  /** The connection failed: refused, reset, TLS handshake, DNS. */
  | "transport"
  /** A deadline passed (per-call timeout or read-idle timeout). */
  | "timeout"
  /** The caller's AbortSignal fired. */
  | "aborted"
  /** The server answered with a non-2xx HTTP status. */
  | "http_status"
  /** The server reported a Connect error (end-stream trailer or error frame). */
  | "rpc_error"
  /** The bytes broke the protocol: bad frame, compressed flag, bad JSON, oversize, schema. */
  | "protocol"
  /** The caller passed something unusable. */
  | "invalid_argument"
  /** Discovery could not find or identify a language server. */
  | "discovery"
  /** A tmux command failed or the pane is gone. */
  | "tmux"
  /** Something the code assumed impossible happened. */
  | "internal";

export interface AgyBridgeErrorOptions {
  cause?: unknown;
}

export class AgyBridgeError extends Error {
  override name = "AgyBridgeError";
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options: AgyBridgeErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
  }

  /**
   * Wraps anything thrown into an AgyBridgeError once, at the edge. An
   * AgyBridgeError passes through unchanged.
   */
  static from(reason: unknown, code: ErrorCode = "internal"): AgyBridgeError {
    if (reason instanceof AgyBridgeError) return reason;
    if (reason instanceof Error) {
      return new AgyBridgeError(code, reason.message, { cause: reason });
    }
    return new AgyBridgeError(code, String(reason), { cause: reason });
  }
}

export interface RpcErrorDetails extends AgyBridgeErrorOptions {
  /** The RPC method, e.g. `HandleCascadeUserInteraction`. */
  method: string;
  /** HTTP status when the server answered with one. */
  httpStatus?: number;
  /** Connect error code from the body or trailer, e.g. `invalid_argument`. */
  connectCode?: string;
  /** The server's own message text, verbatim (callers match substrings in it). */
  serverMessage?: string;
}

/** A failure talking to agy's language server. */
export class RpcError extends AgyBridgeError {
  override name = "RpcError";
  readonly method: string;
  readonly httpStatus: number | undefined;
  readonly connectCode: string | undefined;
  readonly serverMessage: string | undefined;

  constructor(code: ErrorCode, message: string, details: RpcErrorDetails) {
    super(code, message, details);
    this.method = details.method;
    this.httpStatus = details.httpStatus;
    this.connectCode = details.connectCode;
    this.serverMessage = details.serverMessage;
  }

  /**
   * agy answers HTTP 500 "input not registered for step N" when an interaction
   * targets a step that is no longer WAITING (timed out, answered) or when
   * `trajectoryId` was missing (agy 1.0.10, live).
   */
  get isInputNotRegistered(): boolean {
    return /input not registered/i.test(this.serverMessage ?? "");
  }

  /** agy answers HTTP 500 "trajectory not found" for a conversation it does not host (1.0.10, live). */
  get isTrajectoryNotFound(): boolean {
    return /trajectory not found/i.test(this.serverMessage ?? "");
  }

  /** HTTP 401: the server wants a (different) `x-codeium-csrf-token`; re-discover it, do not retry. */
  get isUnauthenticated(): boolean {
    return this.httpStatus === 401 || this.connectCode === "unauthenticated";
  }
}

/** What went wrong with tmux, for callers that branch (a gone pane ends a session; a missing server does not). */
export type TmuxFailure =
  /** The tmux executable could not be started. */
  | "no_binary"
  /** No tmux server listens on the chosen socket. */
  | "no_server"
  /** The target names no pane on that server. */
  | "no_target"
  /** The pane exists but its program has exited (remain-on-exit). */
  | "pane_dead"
  /** A tmux command did not finish in time. */
  | "timeout"
  /** tmux reported another error. */
  | "failed";

/** A tmux command failed or the pane is gone. */
export class TmuxError extends AgyBridgeError {
  override name = "TmuxError";
  readonly failure: TmuxFailure;

  constructor(failure: TmuxFailure, message: string, options: AgyBridgeErrorOptions = {}) {
    super(failure === "timeout" ? "timeout" : "tmux", message, options);
    this.failure = failure;
  }
}

/** Narrowing helper for callers that branch on codes. */
export function isAgyBridgeError(value: unknown, code?: ErrorCode): value is AgyBridgeError {
  return value instanceof AgyBridgeError && (code === undefined || value.code === code);
}
