/**
 * Running token totals of one tracker. agy sends counts as int64 digit
 * strings (spike-notes §4.2) and omits zeros; a count is accepted only as a
 * safe non-negative integer, and a total never passes 2^53-1, so every
 * `usage` event satisfies its own schema.
 */
import { asIndex, type JsonObject } from "../protocol/json.js";
import { describeValue } from "./step-check.js";

export const USAGE_FIELDS = ["inputTokens", "outputTokens", "thinkingOutputTokens", "cacheReadTokens"] as const;
export type UsageField = (typeof USAGE_FIELDS)[number];
export type UsageTotals = Record<UsageField, number>;

export function newUsageTotals(): UsageTotals {
  return { inputTokens: 0, outputTokens: 0, thinkingOutputTokens: 0, cacheReadTokens: 0 };
}

/**
 * `asIndex(value)`, with the digit strings agy sends read by a loop rather
 * than a regular expression: a snapshot has thousands of counts.
 */
function tokenCount(value: unknown): number | undefined {
  if (typeof value !== "string" || value.length === 0 || value.length > 16) return asIndex(value);
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return undefined;
  }
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * Adds one `modelUsage` block to `totals`. A count that is not a safe
 * non-negative integer, or that would take a total past 2^53-1, is left out;
 * the answer has a sentence about each (undefined when all counted).
 */
export function addUsage(totals: UsageTotals, usage: JsonObject): string[] | undefined {
  let problems: string[] | undefined;
  for (const field of USAGE_FIELDS) {
    const value = usage[field];
    if (value === undefined || value === null) continue;
    const count = tokenCount(value);
    if (count === undefined) {
      (problems ??= []).push(`modelUsage.${field} ${describeValue(value)} is not a whole number of tokens from 0 to 2^53-1; it was not counted.`);
    } else if (count > Number.MAX_SAFE_INTEGER - totals[field]) {
      (problems ??= []).push(`modelUsage.${field} ${count} would take the running total past 2^53-1; it was not counted.`);
    } else {
      totals[field] += count;
    }
  }
  return problems;
}
