/**
 * Defensive readers over raw agy steps. Steps are loose JSON (agy 1.0.10
 * proto-JSON: zero values omitted, int64 as strings), so every accessor
 * tolerates missing or mistyped fields and never throws.
 */

import { asIndex, asObject, asString, isObject, type JsonObject } from "../protocol/json.js";
import { STEP_STATUS_PREFIX, STEP_TYPE_PREFIX } from "../protocol/wire-names.js";
import { StringMemo } from "./string-memo.js";

export { asIndex, asObject, asString, isObject, type JsonObject };

const stripped = (prefix: string) => (value: string) => (value.startsWith(prefix) ? value.slice(prefix.length) : value);
// agy has a few dozen step types and statuses.
const typeSuffixes = new StringMemo(stripped(STEP_TYPE_PREFIX), 512);
const statusSuffixes = new StringMemo(stripped(STEP_STATUS_PREFIX), 512);

/** Strips a wire enum prefix (memoised: every step of a snapshot asks). */
function suffixOf(value: unknown, memo: StringMemo): string {
  return typeof value === "string" ? memo.of(value) : "";
}

/** A step's `type` value → its suffix: `CORTEX_STEP_TYPE_RUN_COMMAND` → `RUN_COMMAND`; a missing type → `""`. */
export function typeSuffixOf(type: unknown): string {
  return suffixOf(type, typeSuffixes);
}

/** A step's `status` value → its suffix: `CORTEX_STEP_STATUS_DONE` → `DONE`; a missing status → `""`. */
export function statusSuffixOf(status: unknown): string {
  return suffixOf(status, statusSuffixes);
}

const bodyKeys = new Map<string, string>();

/** `RUN_COMMAND` → `runCommand`: the key of the typed body (derived, so unknown types resolve too). */
export function bodyKey(suffix: string): string {
  let key = bodyKeys.get(suffix);
  if (key === undefined) {
    key = suffix
      .toLowerCase()
      .split("_")
      .map((part, i) => (i === 0 ? part : part.charAt(0).toUpperCase() + part.slice(1)))
      .join("");
    // Bounded: agy has a few dozen step types; a flood of invented ones is not cached.
    if (bodyKeys.size < 256) bodyKeys.set(suffix, key);
  }
  return key;
}

export function metadata(step: JsonObject): JsonObject | undefined {
  return asObject(step["metadata"]);
}

/**
 * Tells apart USER_INPUT steps that carry no index: every turn's USER_INPUT has
 * the same trajectory id, so without this turn 2 would look like turn 1.
 * `executionId` (one per turn) else `createdAt`; both are stable across the
 * poll and stream projections of one step (agy 1.0.10).
 */
export function discriminator(step: JsonObject): string | undefined {
  const meta = metadata(step);
  const executionId = asString(meta?.["executionId"]);
  if (executionId !== undefined && executionId !== "") return `x:${executionId}`;
  const createdAt = asString(meta?.["createdAt"]);
  if (createdAt !== undefined && createdAt !== "") return `t:${createdAt}`;
  return undefined;
}

/** The committed planner text: `modifiedResponse` when non-empty, else `response`. */
export function plannerText(body: JsonObject | undefined): string {
  const modified = asString(body?.["modifiedResponse"]);
  if (modified !== undefined && modified !== "") return modified;
  return asString(body?.["response"]) ?? "";
}

/** The USER_INPUT text: `userResponse` when non-blank, else the non-empty item texts joined by newlines. */
export function userText(body: JsonObject | undefined): string {
  const response = asString(body?.["userResponse"]);
  if (response !== undefined && response.trim() !== "") return response;
  const items = Array.isArray(body?.["items"]) ? (body["items"] as unknown[]) : [];
  return items
    .map((item) => asString(asObject(item)?.["text"]) ?? "")
    .filter((text) => text !== "")
    .join("\n");
}

/** The USER_INPUT's model enum: `planModel`, else the legacy `requestedModel.model`. */
export function userPlanModel(body: JsonObject | undefined): string | undefined {
  const planner = asObject(asObject(body?.["userConfig"])?.["plannerConfig"]);
  const plan = asString(planner?.["planModel"]);
  if (plan !== undefined && plan !== "") return plan;
  const legacy = asString(asObject(planner?.["requestedModel"])?.["model"]);
  return legacy === "" ? undefined : legacy;
}
