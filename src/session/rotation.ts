/**
 * `/clear` detection over `GetAllCascadeTrajectories` (spike-notes §4.10,
 * §3.11): a TUI `/clear` mints a new root conversation on the same server.
 * Sub-agent conversations are children (a `parentConversationId`, or a
 * `rootConversationId` that is not their own key) and are never a rotation,
 * although each is more recently active than its idle parent (§4.11).
 */
import { asObject, asString, isObject } from "../protocol/json.js";

/** The `trajectorySummaries` map as agy sends it. */
export type Summaries = Record<string, unknown>;

/** True when the summary describes a sub-agent's conversation. */
export function isChildConversation(id: string, summary: unknown): boolean {
  const meta = asObject(asObject(summary)?.["trajectoryMetadata"]);
  if (meta === undefined) return false;
  if (asString(meta["parentConversationId"])) return true;
  const root = asString(meta["rootConversationId"]);
  return root !== undefined && root !== "" && root !== id;
}

/** Activity time in ms: `lastUserInputTime`, else `lastModifiedTime`; undefined when absent or unreadable. */
export function activityOf(summary: unknown): number | undefined {
  const s = asObject(summary);
  const text = asString(s?.["lastUserInputTime"]) ?? asString(s?.["lastModifiedTime"]);
  if (text === undefined || text === "") return undefined;
  // A timestamp without a zone is UTC (spike-notes §4.10).
  const zoned = /(?:Z|[+-]\d\d:?\d\d)$/i.test(text) ? text : `${text}Z`;
  const ms = Date.parse(zoned);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * The conversation `bound` rotated to, or undefined. Rotates only when the
 * bound entry is present and a root sibling is strictly more recently active
 * (any active sibling when the bound one has no activity); ties do not rotate.
 */
export function rotationTarget(bound: string, summaries: Summaries, skip: ReadonlySet<string> = new Set()): string | undefined {
  const own = summaries[bound];
  if (!isObject(own)) return undefined;
  const ownActivity = activityOf(own);
  let best: { id: string; at: number } | undefined;
  for (const [id, summary] of Object.entries(summaries)) {
    if (id === bound || skip.has(id) || !isObject(summary)) continue;
    const type = asString(summary["trajectoryType"]);
    if (type !== undefined && type !== own["trajectoryType"]) continue;
    if (isChildConversation(id, summary)) continue;
    const at = activityOf(summary);
    if (at === undefined) continue;
    if (best === undefined || at > best.at) best = { id, at };
  }
  if (best === undefined) return undefined;
  if (ownActivity !== undefined && best.at <= ownActivity) return undefined;
  return best.id;
}
