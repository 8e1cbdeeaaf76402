/**
 * Where agy puts the detail of a failure (spike-notes §11): on the step,
 * `step.error` = CortexErrorDetails, and in ERROR_MESSAGE steps under
 * `errorMessage.error`. `plannerResponse.errorMessage` / `error` are read last:
 * another client names them, agy's schema does not.
 */
import { asObject, asString, type JsonObject } from "../protocol/json.js";

/** CortexErrorDetails fields, most readable first. */
const DETAIL_FIELDS = ["userErrorMessage", "shortError", "modelErrorMessage", "fullError"] as const;

/** The first non-blank detail of a CortexErrorDetails block. */
export function errorDetails(details: JsonObject | undefined): string | undefined {
  if (details === undefined) return undefined;
  for (const field of DETAIL_FIELDS) {
    const text = asString(details[field]);
    if (text !== undefined && text.trim() !== "") return text;
  }
  return undefined;
}

/** A failed step's detail: `step.error` first, then the body's `errorMessage` / `error` (string or `{message}`). */
export function failureDetail(step: JsonObject, body: JsonObject | undefined): string | undefined {
  const fromStep = errorDetails(asObject(step["error"]));
  if (fromStep !== undefined) return fromStep;
  const candidates = [body?.["errorMessage"], body?.["error"], asObject(body?.["error"])?.["message"]];
  for (const candidate of candidates) {
    if (typeof candidate === "string" && candidate.trim() !== "") return candidate;
  }
  return undefined;
}

/** What an ERROR_MESSAGE step says, and whether agy meant the user to see it. */
export function errorMessageStep(step: JsonObject, body: JsonObject | undefined): { detail: string | undefined; showUser: boolean } {
  const detail = errorDetails(asObject(body?.["error"])) ?? errorDetails(asObject(step["error"]));
  return { detail, showUser: body?.["shouldShowUser"] === true };
}

/** At most `max` characters, for diagnostics (a `fullError` can be a whole stack trace). */
export function clipText(text: string, max = 300): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
