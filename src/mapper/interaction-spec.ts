/**
 * Reads what a WAITING step asks of the user (agy 1.0.10
 * `requestedInteraction`), and how the wait ended. Never mutates the step.
 */
import type { InteractionRequest, JsonRecord } from "./events.js";
import { plainObjectCopy } from "./plain-json.js";
import { asObject, asString, isObject, metadata, type JsonObject } from "./step-access.js";

/**
 * Pending means `status == WAITING` **and** `requestedInteraction` is an
 * object: DONE and ERROR steps still carry the block (agy 1.0.10).
 */
export function isPendingInteraction(step: JsonObject, statusSuffix: string): boolean {
  return statusSuffix === "WAITING" && isObject(step["requestedInteraction"]);
}

/** `questions[i].is_multi_select` lives only in `toolCall.argumentsJson` (poll projection, agy 1.0.10). */
function multiSelectFlags(step: JsonObject): boolean[] {
  const text = asString(asObject(metadata(step)?.["toolCall"])?.["argumentsJson"]);
  if (text === undefined) return [];
  try {
    const parsed = asObject(JSON.parse(text) as unknown);
    const questions = parsed?.["questions"];
    if (!Array.isArray(questions)) return [];
    return questions.map((q) => asObject(q)?.["is_multi_select"] === true);
  } catch {
    return [];
  }
}

/**
 * A question step read from a projection without its multi-select flags: no
 * `toolCall.argumentsJson` (the stream projection, agy 1.0.10) and a spec
 * without `isMultiSelect` on some question. Its request needs the full step.
 */
export function lacksMultiSelect(step: JsonObject): boolean {
  const question = asObject(asObject(step["requestedInteraction"])?.["askQuestion"]);
  if (question === undefined) return false;
  if (asString(asObject(metadata(step)?.["toolCall"])?.["argumentsJson"]) !== undefined) return false;
  const questions = Array.isArray(question["questions"]) ? (question["questions"] as unknown[]) : [];
  return questions.some((q) => typeof asObject(q)?.["isMultiSelect"] !== "boolean");
}

function questionRequest(block: JsonObject, step: JsonObject): InteractionRequest {
  const flags = multiSelectFlags(step);
  const questions = Array.isArray(block["questions"]) ? (block["questions"] as unknown[]) : [];
  return {
    kind: "question",
    questions: questions.map((raw, i) => {
      const q = asObject(raw);
      const options = Array.isArray(q?.["options"]) ? (q["options"] as unknown[]) : [];
      return {
        question: asString(q?.["question"]) ?? "",
        options: options.map((o, j) => ({
          id: asString(asObject(o)?.["id"]) ?? String(j + 1),
          text: asString(asObject(o)?.["text"]) ?? "",
        })),
        // Newer builds put the flag on the spec itself (`isMultiSelect`).
        multiSelect: flags[i] ?? q?.["isMultiSelect"] === true,
      };
    }),
  };
}

function permissionRequest(block: JsonObject): InteractionRequest {
  const resource = asObject(block["resource"]);
  const pattern = asString(block["suggestedPersistPattern"]);
  const suggestion = asString(block["persistSuggestionType"]);
  return {
    kind: "permission",
    action: asString(resource?.["action"]) ?? "",
    target: asString(resource?.["target"]) ?? "",
    description: asString(block["actionDescription"]) ?? "",
    ...(pattern === undefined ? {} : { suggestedPersistPattern: pattern }),
    ...(suggestion === undefined ? {} : { persistSuggestionType: suggestion }),
  };
}

/** `runCommand { proposedCommandLine }`: approved with `confirm` (agy's schema, spike-notes §11). */
function runCommandRequest(block: JsonObject, step: JsonObject): InteractionRequest {
  const body = asObject(step["runCommand"]);
  const target = asString(block["proposedCommandLine"]) ?? asString(body?.["proposedCommandLine"]) ?? asString(body?.["commandLine"]) ?? "";
  const cwd = asString(body?.["cwd"]);
  return {
    kind: "permission",
    variant: "runCommand",
    action: "command",
    target,
    description: toolDescription(step),
    ...(cwd === undefined || cwd === "" ? {} : { cwd }),
  };
}

/** `filePermission { absolutePathUri }`: answered with `allow` and a `scope` (agy's schema, spike-notes §11). */
function filePermissionRequest(block: JsonObject, step: JsonObject): InteractionRequest {
  const target = asString(block["absolutePathUri"]) ?? "";
  return { kind: "permission", variant: "filePermission", action: "file", target, description: toolDescription(step) };
}

function toolDescription(step: JsonObject): string {
  return asString(metadata(step)?.["toolAction"]) ?? "";
}

/** The variant a `requestedInteraction` block names: its first object-valued key (a proto oneof has one). */
function variantOf(requested: JsonObject): string {
  let first: string | undefined;
  for (const key of Object.keys(requested)) {
    if (isObject(requested[key])) return key;
    first ??= key;
  }
  return first ?? "";
}

/**
 * What a WAITING step asks. Every gate is reported: variants agy-bridge
 * cannot answer over RPC become kind `other` with the block as sent, so a
 * supervisor still knows a person is needed. `report` hears why a block could
 * not be copied.
 */
export function interactionRequest(step: JsonObject, report: (problem: string) => void): InteractionRequest {
  const requested = asObject(step["requestedInteraction"]) ?? {};
  const question = asObject(requested["askQuestion"]);
  if (question !== undefined) return questionRequest(question, step);
  const permission = asObject(requested["permission"]);
  if (permission !== undefined) return permissionRequest(permission);
  const runCommand = asObject(requested["runCommand"]);
  if (runCommand !== undefined) return runCommandRequest(runCommand, step);
  const filePermission = asObject(requested["filePermission"]);
  if (filePermission !== undefined) return filePermissionRequest(filePermission, step);
  const variant = variantOf(requested);
  const block = asObject(requested[variant]) ?? {};
  const copy = plainObjectCopy(block);
  if (!copy.ok) report(`the ${variant} block of its requestedInteraction was left out because ${copy.problem}`);
  return { kind: "other", variant, spec: (copy.ok ? copy.value : {}) as JsonRecord };
}

/**
 * agy's echo of the delivered answer — the last `completedInteractions[].response` —
 * as a plain-JSON copy; undefined when absent, with `report` told when it could not be copied.
 */
export function echoedResponse(step: JsonObject, report: (problem: string) => void): JsonRecord | undefined {
  const completed = step["completedInteractions"];
  if (!Array.isArray(completed) || completed.length === 0) return undefined;
  const response = asObject(asObject(completed[completed.length - 1])?.["response"]);
  if (response === undefined) return undefined;
  const copy = plainObjectCopy(response);
  if (copy.ok) return copy.value as JsonRecord;
  report(`agy's echo of the answer was left out because ${copy.problem}`);
  return undefined;
}
