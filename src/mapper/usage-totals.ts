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
 * Adds one `modelUsage` block to `totals`. A count that is not a safe
 * non-negative integer, or that would take a total past 2^53-1, is left out
 * and `report` hears a sentence about it.
 */
export function addUsage(totals: UsageTotals, usage: JsonObject, report: (message: string) => void): void {
  for (const field of USAGE_FIELDS) {
    const value = usage[field];
    if (value === undefined || value === null) continue;
    const count = asIndex(value);
    if (count === undefined) {
      report(`modelUsage.${field} ${describeValue(value)} is not a whole number of tokens from 0 to 2^53-1; it was not counted.`);
    } else if (count > Number.MAX_SAFE_INTEGER - totals[field]) {
      report(`modelUsage.${field} ${count} would take the running total past 2^53-1; it was not counted.`);
    } else {
      totals[field] += count;
    }
  }
}
