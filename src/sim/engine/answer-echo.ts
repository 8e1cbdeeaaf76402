/**
 * How a settled gate records the answer it got, and what the answer means
 * to it. agy keys delivery on the ids alone and checks no kind (spike-notes
 * §3.5), so the echo in `completedInteractions[].response` is what was sent,
 * re-serialised as proto-JSON: zero values (`false`, `0`, `""`, empty lists)
 * left out, as agy's own echoes and every capture do (spike-notes §1.2,
 * §11.1). A set message stays, even empty: a deny `{allow:false}` is echoed
 * as `permission: {}`.
 */
import { asObject, isObject, type JsonObject } from "../../protocol/json.js";

/** `completedInteractions[].response`: the ids, then every variant the answer carried, as agy re-serialises it. */
export function echoedResponse(trajectoryId: string, stepIndex: number, interaction: JsonObject): JsonObject {
  const response: JsonObject = { trajectoryId };
  if (stepIndex !== 0) response.stepIndex = stepIndex;
  for (const [key, value] of Object.entries(interaction)) {
    if (key === "trajectoryId" || key === "stepIndex") continue;
    const kept = withoutZeroValues(value);
    if (kept !== undefined) response[key] = kept;
  }
  return response;
}

/**
 * Whether an answer approves a command gate: `permission.allow: true` (live
 * 1.0.10) or `runCommand.confirm: true`, the command approval of agy's own
 * schema (spike-notes §10.7, §11.3). agy accepts either kind on the ids; that
 * the command then runs is our reading (inferred). Anything else declines.
 */
export function approvesCommand(interaction: JsonObject): boolean {
  return asObject(interaction.permission)?.allow === true || asObject(interaction.runCommand)?.confirm === true;
}

/** Whether an answer approves a file-permission gate: `filePermission.allow: true`. */
export function approvesFileRead(interaction: JsonObject): boolean {
  return asObject(interaction.filePermission)?.allow === true;
}

/** A JSON value as proto3 JSON writes it: zero-valued fields left out, list items kept as they are (recursing into objects). */
function withoutZeroValues(value: unknown): unknown {
  if (value === null || value === false || value === 0 || value === "") return undefined;
  if (Array.isArray(value)) return value.length === 0 ? undefined : value.map((item) => (isObject(item) ? withoutZeroValues(item) : item));
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [key, field] of Object.entries(value)) {
    const kept = withoutZeroValues(field);
    if (kept !== undefined) out[key] = kept;
  }
  return out;
}
