/**
 * Keeps the CSRF token out of every error the client hands out. A hostile or
 * confused server can echo the token anywhere: in a status body, a Connect
 * error code, a JSON key that ends up in a validation path, or text that some
 * library (V8's JSON parser, our own length caps) then cuts, leaving a piece
 * of the token behind. So text is scrubbed before it is cut, a piece of the
 * token found at a cut is removed too, and the whole cause chain is scrubbed.
 */
import { RpcError } from "../errors.js";

export const REDACTED = "[redacted]";

/** A piece of the token at least this long is removed wherever it appears. */
const WINDOW = 8;
/** Next to a cut (`…`, `...`), even a short piece of the token is removed. */
const PIECE_AT_CUT = 2;
const CUT_MARKERS = ["…", "..."];

/**
 * `text` with every occurrence of `secret`, every piece of it of
 * {@link WINDOW}+ characters, and every piece next to a cut marker replaced by
 * {@link REDACTED}.
 */
export function scrubText(text: string, secret: string | undefined): string {
  if (secret === undefined || secret === "" || text === "") return text;
  let out = text.split(secret).join(REDACTED);
  out = scrubWindows(out, secret);
  return scrubAtCutMarkers(out, secret);
}

/**
 * `text` that was cut right after its last character (by a byte limit):
 * scrubbed, then a trailing beginning of the token is replaced too.
 */
export function scrubCutEnd(text: string, secret: string | undefined): string {
  const scrubbed = scrubText(text, secret);
  if (secret === undefined || secret === "") return scrubbed;
  for (let k = Math.min(secret.length - 1, scrubbed.length); k >= 1; k--) {
    if (scrubbed.endsWith(secret.slice(0, k))) return `${scrubbed.slice(0, -k)}${REDACTED}`;
  }
  return scrubbed;
}

/** Scrubs, then cuts to `max` characters (never inside a {@link REDACTED} mark), adding `…`. */
export function cutScrubbed(text: string, max: number, secret: string | undefined): string {
  const scrubbed = scrubText(text, secret);
  if (scrubbed.length <= max) return scrubbed;
  let end = max;
  const mark = scrubbed.lastIndexOf(REDACTED, end);
  if (mark >= 0 && mark < end && mark + REDACTED.length > end) end = mark + REDACTED.length;
  return `${scrubbed.slice(0, end)}…`;
}

/**
 * The same error with `secret` scrubbed from its message, server text,
 * Connect code and every error in its cause chain. Returns `error` itself when
 * nothing leaks.
 */
export function redactRpcError(error: RpcError, secret: string | undefined): RpcError {
  if (secret === undefined || secret === "") return error;
  const scrub = (text: string) => scrubText(text, secret);
  const message = scrub(error.message);
  const serverMessage = error.serverMessage === undefined ? undefined : scrub(error.serverMessage);
  const connectCode = error.connectCode === undefined ? undefined : scrub(error.connectCode);
  const cause = scrubCause(error.cause, scrub, new Set());
  if (message === error.message && serverMessage === error.serverMessage && connectCode === error.connectCode && cause === error.cause) {
    return error;
  }
  return new RpcError(error.code, message, {
    method: error.method,
    ...(error.httpStatus === undefined ? {} : { httpStatus: error.httpStatus }),
    ...(connectCode === undefined ? {} : { connectCode }),
    ...(serverMessage === undefined ? {} : { serverMessage }),
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * A cause with the secret scrubbed: unchanged when nothing leaks, else a plain
 * `Error` carrying only the scrubbed name, message, string `code` and cause
 * (fields that leaked, like a validation error's issue paths, are dropped).
 */
function scrubCause(value: unknown, scrub: (text: string) => string, seen: Set<unknown>): unknown {
  if (typeof value === "string") return scrub(value);
  if (value === undefined || value === null || typeof value !== "object") return value;
  if (seen.has(value)) return undefined;
  seen.add(value);
  if (!(value instanceof Error)) return leaks(value, scrub) ? REDACTED : value;
  const cause = scrubCause(value.cause, scrub, seen);
  const message = scrub(value.message);
  const ownLeak = Object.getOwnPropertyNames(value).some(
    (key) => key !== "cause" && key !== "message" && leaks((value as unknown as Record<string, unknown>)[key], scrub),
  );
  if (!ownLeak && message === value.message && cause === value.cause) return value;
  const copy = new Error(message, cause === undefined ? undefined : { cause });
  copy.name = scrub(value.name);
  const code = (value as { code?: unknown }).code;
  if (typeof code === "string") (copy as { code?: string }).code = scrub(code);
  copy.stack = `${copy.name}: ${message}`;
  return copy;
}

function leaks(value: unknown, scrub: (text: string) => string): boolean {
  const text = typeof value === "string" ? value : safeJson(value);
  return text !== undefined && scrub(text) !== text;
}

function safeJson(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return value === undefined ? undefined : String(value);
  try {
    return JSON.stringify(value);
  } catch {
    // A cycle or a BigInt: judge what a plain string conversion shows instead.
    return String(value);
  }
}

function scrubWindows(text: string, secret: string): string {
  if (secret.length < WINDOW || text.length < WINDOW) return text;
  const windows = new Set<string>();
  for (let i = 0; i + WINDOW <= secret.length; i++) windows.add(secret.slice(i, i + WINDOW));
  let out = "";
  let i = 0;
  while (i < text.length) {
    if (i + WINDOW <= text.length && windows.has(text.slice(i, i + WINDOW))) {
      let end = i + WINDOW;
      while (end < text.length && secret.includes(text.slice(i, end + 1))) end++;
      out += REDACTED;
      i = end;
    } else {
      out += text[i];
      i++;
    }
  }
  return out;
}

function scrubAtCutMarkers(text: string, secret: string): string {
  let out = text;
  for (const marker of CUT_MARKERS) {
    let from = 0;
    for (let at = out.indexOf(marker, from); at >= 0; at = out.indexOf(marker, from)) {
      // The beginning of the token just before the cut (a closing quote may sit between).
      const quoteBefore = out[at - 1] === '"' ? 1 : 0;
      const before = out.slice(0, at - quoteBefore);
      const head = longest(secret.length - 1, (k) => before.endsWith(secret.slice(0, k)));
      // The end of the token just after the cut (an opening quote may sit between).
      const afterStart = at + marker.length + (out[at + marker.length] === '"' ? 1 : 0);
      const after = out.slice(afterStart);
      const tail = longest(secret.length - 1, (k) => after.startsWith(secret.slice(-k)));
      const left = head >= PIECE_AT_CUT ? `${before.slice(0, -head)}${REDACTED}` : before;
      const middle = out.slice(at - quoteBefore, afterStart);
      const right = tail >= PIECE_AT_CUT ? `${REDACTED}${after.slice(tail)}` : after;
      out = `${left}${middle}${right}`;
      from = left.length + middle.length;
    }
  }
  return out;
}

function longest(max: number, fits: (k: number) => boolean): number {
  for (let k = max; k >= 1; k--) if (fits(k)) return k;
  return 0;
}
