/**
 * Reads what a WAITING step asks of the user (agy 1.0.10
 * `requestedInteraction`), and how the wait ended. Never mutates the step.
 */
import type { InteractionOutcome, InteractionRequest } from "./events.js";
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

/** The request, or undefined when the block names a kind we cannot answer. */
export function interactionRequest(step: JsonObject): InteractionRequest | undefined {
  const requested = asObject(step["requestedInteraction"]);
  const question = asObject(requested?.["askQuestion"]);
  if (question !== undefined) return questionRequest(question, step);
  const permission = asObject(requested?.["permission"]);
  if (permission !== undefined) return permissionRequest(permission);
  return undefined;
}

/**
 * How a wait ended, from the status the step left WAITING for: agy moves an
 * answered step to RUNNING/DONE, a timed-out one to ERROR (and retries at a
 * higher index).
 */
export function interactionOutcome(statusSuffix: string): InteractionOutcome {
  if (statusSuffix === "ERROR") return "timed_out";
  if (["DONE", "RUNNING", "PENDING", "GENERATING"].includes(statusSuffix)) return "answered";
  return "cancelled";
}

/** agy's echo of the delivered answer: the last `completedInteractions[].response`. */
export function echoedResponse(step: JsonObject): JsonObject | undefined {
  const completed = step["completedInteractions"];
  if (!Array.isArray(completed) || completed.length === 0) return undefined;
  return asObject(asObject(completed[completed.length - 1])?.["response"]);
}
