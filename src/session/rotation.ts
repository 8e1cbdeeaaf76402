/**
 * `/clear` detection over `GetAllCascadeTrajectories` (spike-notes §4.10,
 * §3.11): a TUI `/clear` mints a new root conversation on the same server.
 * Sub-agent conversations are children (a `parentConversationId`, or a
 * `rootConversationId` that is not their own key) and are never a rotation,
 * although each is more recently active than its idle parent (§4.11).
 *
 * A conversation the caller named is held to a stricter reading than one the
 * session picked itself: only a `/clear` from it leaves it. Activity elsewhere
 * on the server (another conversation's turn, a sibling that was there before)
 * never does, or a watcher started before its conversation's first turn would
 * follow whatever else happens to be busy.
 */
import { asObject, asString, isObject } from "../protocol/json.js";
import { isIdle } from "./run-status.js";

/** The `trajectorySummaries` map as agy sends it. */
export type Summaries = Record<string, unknown>;

/** How strictly a rotation is read. */
export interface RotationRules {
  /**
   * The caller named the bound conversation: leave it only through a `/clear`
   * from it — it has had turns and is idle now, and the sibling was created
   * after its last turn began and has been used since.
   */
  named?: boolean;
  /**
   * Conversations the reader saw before (its first reading). A sibling without
   * a readable creation time counts as new, for a named conversation, only
   * when it is not among them.
   */
  seenBefore?: ReadonlySet<string>;
}

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
  return timeOf(asString(s?.["lastUserInputTime"]) ?? asString(s?.["lastModifiedTime"]));
}

/** Creation time in ms: `createdTime`, else `trajectoryMetadata.createdAt`; undefined when absent or unreadable. */
export function createdOf(summary: unknown): number | undefined {
  const s = asObject(summary);
  return timeOf(asString(s?.["createdTime"]) ?? asString(asObject(s?.["trajectoryMetadata"])?.["createdAt"]));
}

function timeOf(text: string | undefined): number | undefined {
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
 * With `rules.named`, see {@link RotationRules.named}: a bound conversation
 * without turns, or one that is running, never rotates.
 */
export function rotationTarget(bound: string, summaries: Summaries, skip: ReadonlySet<string> = new Set(), rules: RotationRules = {}): string | undefined {
  const own = summaries[bound];
  if (!isObject(own)) return undefined;
  const ownActivity = activityOf(own);
  if (rules.named === true && (ownActivity === undefined || !isIdle(own))) return undefined;
  let best: { id: string; at: number } | undefined;
  for (const [id, summary] of Object.entries(summaries)) {
    if (id === bound || skip.has(id) || !isObject(summary)) continue;
    const type = asString(summary["trajectoryType"]);
    if (type !== undefined && type !== own["trajectoryType"]) continue;
    if (isChildConversation(id, summary)) continue;
    const at = activityOf(summary);
    if (at === undefined) continue;
    if (rules.named === true && !mintedAfter(id, summary, ownActivity!, rules.seenBefore)) continue;
    if (best === undefined || at > best.at) best = { id, at };
  }
  if (best === undefined) return undefined;
  if (ownActivity !== undefined && best.at <= ownActivity) return undefined;
  return best.id;
}

/** A `/clear` mints its conversation after the turns of the one it replaces. */
function mintedAfter(id: string, summary: Record<string, unknown>, ownActivity: number, seenBefore: ReadonlySet<string> | undefined): boolean {
  const created = createdOf(summary);
  if (created !== undefined) return created > ownActivity;
  return seenBefore !== undefined && !seenBefore.has(id);
}

/**
 * One reader's rotation state across readings: the conversations it rotated
 * away from (skipped until they show newer activity than when it left them)
 * and what the first reading listed (`seenBefore`).
 */
export class RotationWatch {
  readonly #named: boolean;
  readonly #skip = new Map<string, number | undefined>();
  #seenBefore: Set<string> | undefined;

  constructor(named: boolean) {
    this.#named = named;
  }

  /** Where `bound` rotates to after this reading, if anywhere; a rotation is remembered as left. */
  next(bound: string, summaries: Summaries): string | undefined {
    this.#seenBefore ??= new Set(Object.keys(summaries));
    for (const [id, at] of this.#skip) {
      const now = activityOf(summaries[id]);
      if (now !== undefined && (at === undefined || now > at)) this.#skip.delete(id);
    }
    const next = rotationTarget(bound, summaries, new Set(this.#skip.keys()), { named: this.#named, seenBefore: this.#seenBefore });
    if (next !== undefined) this.#skip.set(bound, activityOf(summaries[bound]));
    return next;
  }
}
