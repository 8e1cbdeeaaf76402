/**
 * Defensive readers over loose JSON as it comes off agy's wire (proto-JSON:
 * zero values omitted, int64 as digit strings; spike-notes §1.2). Every reader
 * tolerates missing or mistyped fields and never throws.
 */

/** A JSON object as it came off the wire. */
export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function asObject(value: unknown): JsonObject | undefined {
  return isObject(value) ? value : undefined;
}

export function asString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/**
 * A non-negative safe integer from a number or a digit string (proto-JSON
 * int64); anything else — negative, fractional, ≥ 2^53, not digits — is
 * `undefined`.
 */
export function asIndex(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value === "string" && /^\d{1,16}$/.test(value)) {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : undefined;
  }
  return undefined;
}
