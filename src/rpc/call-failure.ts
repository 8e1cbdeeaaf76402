/**
 * Turns whatever a call threw into one RpcError: the client's single failure
 * contract. Pure; the client tells it why the call stopped (deadline, caller
 * abort) because only the client knows.
 */
import { AgyBridgeError, RpcError } from "../errors.js";
import { cutScrubbed, redactRpcError, scrubCutEnd, scrubText } from "./redaction.js";
import { serverErrorText } from "./response-decoding.js";

/** A deadline that ended a call, and what the call was still waiting for. */
export interface Deadline {
  afterMs: number;
  /** E.g. "complete answer", "response headers". */
  waitingFor: string;
}

export interface FailureContext {
  method: string;
  /** Origin of the server, for messages (never carries secrets). */
  origin: string;
  timedOut: Deadline | undefined;
  abortedByCaller: boolean;
  /** Replaced by `[redacted]` wherever it appears in text we keep. */
  secret: string | undefined;
}

/** Maps a thrown value to the RpcError a caller sees. */
export function toRpcError(reason: unknown, context: FailureContext): RpcError {
  const { method } = context;
  let error: RpcError;
  if (context.timedOut !== undefined) {
    error = new RpcError(
      "timeout",
      `${method} got no ${context.timedOut.waitingFor} within ${context.timedOut.afterMs} ms from ${context.origin}; ` +
        "agy may be busy, retry later or raise the timeout",
      { method, cause: reason },
    );
  } else if (context.abortedByCaller) {
    error = new RpcError("aborted", `${method} was aborted by the caller`, { method, cause: reason });
  } else if (reason instanceof RpcError) {
    error = reason;
  } else {
    const ours = findInChain(reason, (e): e is AgyBridgeError => e instanceof AgyBridgeError);
    if (ours !== undefined) {
      error = new RpcError(ours.code, `${method}: ${ours.message}`, { method, cause: reason });
    } else {
      error = new RpcError("transport", `${method} could not reach agy's language server at ${context.origin}: ${describeTransport(reason)}`, {
        method,
        cause: reason,
      });
    }
  }
  return redactRpcError(error, context.secret);
}

/** Characters of the server's text quoted in a message. */
const SHOWN_CHARS = 500;

/**
 * The error for a non-2xx answer, keeping the server's text verbatim in
 * `serverMessage` (but for `secret`, scrubbed before any cut). `truncated`
 * says the body was cut at the read limit.
 */
export function httpStatusError(method: string, status: number, body: { bytes: Uint8Array; truncated: boolean }, secret: string | undefined): RpcError {
  const text = serverErrorText(body.bytes);
  const serverMessage = body.truncated ? scrubCutEnd(text.serverMessage, secret) : scrubText(text.serverMessage, secret);
  const connectCode = text.connectCode === undefined ? undefined : scrubText(text.connectCode, secret);
  // The sentence is for people: the server's control characters show as escapes there (never raw in a
  // terminal or a log); `serverMessage` keeps them exactly.
  const shown = visibleControls(cutScrubbed(serverMessage, SHOWN_CHARS, secret));
  const hint =
    status === 401
      ? "; the server wants a (different) x-codeium-csrf-token: re-discover it rather than retry"
      : /input not registered/i.test(serverMessage)
        ? " (the step is no longer waiting, e.g. it timed out and agy retried it at a higher index, or trajectoryId was missing: re-read the steps and answer the waiting one)"
        : /trajectory not found/i.test(serverMessage)
          ? " (this language server does not host that conversation)"
          : "";
  return new RpcError(
    "http_status",
    `${method} failed with HTTP ${status}${connectCode ? ` (${visibleControls(connectCode)})` : ""}: ${shown || "(empty body)"}${hint}`,
    { method, httpStatus: status, ...(connectCode === undefined ? {} : { connectCode }), serverMessage },
  );
}

/** C0 (tab and line feed aside), DEL and C1 as `\xNN`: ESC, BEL, BS and CSI cannot act on whoever reads the message. */
function visibleControls(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/gu, (char) => `\\x${(char.codePointAt(0) as number).toString(16).padStart(2, "0")}`);
}

function describeTransport(reason: unknown): string {
  const chain = errorChain(reason);
  const innermost = chain[chain.length - 1];
  if (innermost === undefined) return String(reason);
  const code = chain.map((e) => (e as { code?: unknown }).code).find((c) => typeof c === "string" && /^E[A-Z_]+$/.test(c));
  const text = innermost.message.replace(/^\[[a-z_]+\]\s*/, "");
  return typeof code === "string" && !text.includes(code) ? `${code}: ${text}` : text;
}

function errorChain(reason: unknown): Error[] {
  const chain: Error[] = [];
  let current: unknown = reason;
  while (current instanceof Error && !chain.includes(current)) {
    chain.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}

function findInChain<T extends Error>(reason: unknown, match: (e: Error) => e is T): T | undefined {
  return errorChain(reason).find(match);
}
