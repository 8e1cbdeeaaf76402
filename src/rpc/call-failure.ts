/**
 * Turns whatever a call threw into one RpcError: the client's single failure
 * contract. Pure; the client tells it why the call stopped (deadline, caller
 * abort) because only the client knows.
 */
import { AgyBridgeError, RpcError } from "../errors.js";
import { serverErrorText } from "./response-decoding.js";

export interface FailureContext {
  method: string;
  /** Origin of the server, for messages (never carries secrets). */
  origin: string;
  timedOutAfterMs: number | undefined;
  abortedByCaller: boolean;
  /** Replaced by `[redacted]` wherever it appears in text we keep. */
  secret: string | undefined;
}

/** Maps a thrown value to the RpcError a caller sees. */
export function toRpcError(reason: unknown, context: FailureContext): RpcError {
  const { method } = context;
  let error: RpcError;
  if (context.timedOutAfterMs !== undefined) {
    error = new RpcError(
      "timeout",
      `${method} got no complete answer within ${context.timedOutAfterMs} ms from ${context.origin}; ` +
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
      error = new RpcError(
        "transport",
        `${method} could not reach agy's language server at ${context.origin}: ${describeTransport(reason)}`,
        { method, cause: reason },
      );
    }
  }
  return redact(error, context.secret);
}

/** The error for a non-2xx answer, keeping the server's text verbatim in `serverMessage`. */
export function httpStatusError(method: string, status: number, body: Uint8Array): RpcError {
  const { connectCode, serverMessage } = serverErrorText(body);
  const shown = serverMessage.length > 500 ? `${serverMessage.slice(0, 500)}…` : serverMessage;
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
    `${method} failed with HTTP ${status}${connectCode ? ` (${connectCode})` : ""}: ${shown || "(empty body)"}${hint}`,
    { method, httpStatus: status, ...(connectCode === undefined ? {} : { connectCode }), serverMessage },
  );
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

function redact(error: RpcError, secret: string | undefined): RpcError {
  if (secret === undefined || secret === "") return error;
  const leaks = error.message.includes(secret) || (error.serverMessage ?? "").includes(secret);
  if (!leaks) return error;
  const scrub = (text: string) => text.split(secret).join("[redacted]");
  // The cause is dropped too: it is where the secret came from.
  return new RpcError(error.code, scrub(error.message), {
    method: error.method,
    ...(error.httpStatus === undefined ? {} : { httpStatus: error.httpStatus }),
    ...(error.connectCode === undefined ? {} : { connectCode: error.connectCode }),
    ...(error.serverMessage === undefined ? {} : { serverMessage: scrub(error.serverMessage) }),
  });
}
