/**
 * One form per tool-argument value, whichever projection the step came from.
 * The poll projection has the model's own `argumentsJson`; the stream
 * projection has only the typed body, where agy 1.0.10 writes paths as
 * `file://` URIs (`AbsolutePath` → `absolutePathUri`) and int64 values as
 * decimal strings (`WaitMsBeforeAsync` → `waitMsBeforeAsync: "2000"`),
 * spike-notes §4.2–4.3. Both are brought to the model's form: a path, a number.
 * Only top-level values change; nested values are left as agy sent them.
 */
import { setOwn } from "./plain-json.js";
import type { JsonObject } from "./step-access.js";

/** The decimal text of an integer, as proto-JSON writes int64: no sign on 0, no leading zeros, no exponent. */
const INTEGER_TEXT = /^(?:0|-?[1-9][0-9]{0,15})$/;
/** `/C:/…` after the scheme: a Windows drive path. */
const DRIVE_PATH = /^\/[A-Za-z]:\//;

/** Rewrites the top-level values of `args` (an object the caller owns) to their documented form. */
export function normaliseArguments(args: JsonObject): void {
  for (const key in args) {
    const value = args[key];
    if (typeof value !== "string" || value.length === 0) continue;
    const first = value.charCodeAt(0);
    if (first === 0x66 /* f */) {
      const path = filePath(value);
      if (path !== undefined) setOwn(args, key, path);
    } else if ((first >= 0x30 && first <= 0x39) || first === 0x2d /* - */) {
      if (!INTEGER_TEXT.test(value)) continue;
      const number = Number(value);
      if (Number.isSafeInteger(number)) setOwn(args, key, number);
    }
  }
}

/**
 * The path of a local `file://` URI (host empty or `localhost`), percent-escapes
 * decoded and a Windows drive's leading slash dropped; undefined for anything else.
 */
export function filePath(value: string): string | undefined {
  if (!value.startsWith("file://")) return undefined;
  let rest = value.slice(7);
  if (rest.startsWith("localhost/")) rest = rest.slice(9);
  if (!rest.startsWith("/")) return undefined;
  let path = rest;
  if (rest.includes("%")) {
    try {
      path = decodeURIComponent(rest);
    } catch {
      // A malformed escape: the text as agy wrote it.
    }
  }
  return DRIVE_PATH.test(path) ? path.slice(1) : path;
}
