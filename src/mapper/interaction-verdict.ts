/**
 * What a step records about the verdict on its gate, and how a wait ended.
 * Read from the step itself, so a live reading and a replay of the same step
 * agree (docs/events.md, `interaction_resolved`).
 *
 * The records, most direct first: agy's echo of the delivered answer (the
 * last `completedInteractions[].response`, spike-notes §5.7) naming
 * `permission {allow}`, `filePermission {allow}` or `runCommand {confirm}`;
 * then `permissions.permissionGrants[].allow` (§4.3). proto-JSON leaves out
 * `false`, so an answer or grant without `allow`/`confirm` is a deny (§12).
 */
import type { InteractionOutcome, InteractionRequest } from "./events.js";
import { asObject, type JsonObject } from "./step-access.js";

export type Verdict = "approved" | "denied";

/** The verdict the step records, or undefined when it records none. */
export function recordedVerdict(step: JsonObject): Verdict | undefined {
  const completed = step["completedInteractions"];
  if (Array.isArray(completed) && completed.length > 0) {
    const response = asObject(asObject(completed[completed.length - 1])?.["response"]);
    if (response !== undefined) {
      const permission = asObject(response["permission"]) ?? asObject(response["filePermission"]);
      if (permission !== undefined) return permission["allow"] === true ? "approved" : "denied";
      const runCommand = asObject(response["runCommand"]);
      if (runCommand !== undefined) return runCommand["confirm"] === true ? "approved" : "denied";
    }
  }
  const grants = asObject(step["permissions"])?.["permissionGrants"];
  if (!Array.isArray(grants) || grants.length === 0) return undefined;
  return grants.every((grant) => asObject(grant)?.["allow"] === true) ? "approved" : "denied";
}

const MOVED_ON = new Set(["DONE", "RUNNING", "PENDING", "GENERATING"]);

/**
 * How a wait ended, from the status the step left WAITING for and what it
 * records: ERROR is agy's timeout (it retries at a higher index); a step that
 * moved on accepted an answer — approved or denied for a permission gate (a
 * gate that moves on to RUNNING without a record was allowed: agy runs a tool
 * only after an allow, and a declined step goes to DONE), answered otherwise;
 * anything else is cancelled.
 */
export function interactionOutcome(statusSuffix: string, kind: InteractionRequest["kind"], step: JsonObject): InteractionOutcome {
  if (statusSuffix === "ERROR") return "timed_out";
  if (!MOVED_ON.has(statusSuffix)) return "cancelled";
  if (kind !== "permission") return "answered";
  return recordedVerdict(step) ?? (statusSuffix === "DONE" ? "answered" : "approved");
}
