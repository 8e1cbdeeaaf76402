/**
 * The `interaction` payload of `HandleCascadeUserInteraction` for an answer
 * to a pending interaction (spike-notes §5.5, §11). Pure: the session layer
 * sends it. Kinds agy-bridge cannot answer over RPC are refused with a
 * sentence that says to answer in the agy TUI.
 */
import { AgyBridgeError } from "../errors.js";
import type { JsonObject } from "../protocol/json.js";
import type { InteractionRequest } from "./events.js";

/** Approve or deny a `permission` kind (`permission`, `runCommand`, `filePermission` variants). */
export interface PermissionDecision {
  allow: boolean;
  /** `permission` and `filePermission`: a permission scope name, e.g. `PERMISSION_SCOPE_ONCE` (newer builds). */
  scope?: string;
  /** `permission` only: on a deny, an instruction for the model (newer builds). */
  userDenyInstruction?: string;
}

/** One question's answer: option ids (`"1".."N"`, never option text) and/or a write-in. */
export interface QuestionChoice {
  selectedOptionIds: readonly string[];
  writeInResponse?: string;
}

/** Answers to a `question` kind, by question position; an empty list declines. */
export interface QuestionDecision {
  responses: readonly QuestionChoice[];
}

export type InteractionDecision = PermissionDecision | QuestionDecision;

/** What the payload is built for: a pending interaction (or its `interaction_requested` event). */
export interface AnswerTarget {
  trajectoryId: string;
  stepIndex: number;
  request: InteractionRequest;
}

function invalid(message: string): AgyBridgeError {
  return new AgyBridgeError("invalid_argument", message);
}

function withOptional(fields: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) out[key] = value;
  return out;
}

/**
 * Builds `{ trajectoryId, stepIndex, <variant>: … }`: `permission { allow }`,
 * `runCommand { confirm }`, `filePermission { allow, scope? }` or
 * `askQuestion { responses[] }`. Throws `invalid_argument` for a kind
 * agy-bridge cannot answer and for a decision that does not fit the kind.
 */
export function interactionAnswer(target: AnswerTarget, decision: InteractionDecision): JsonObject {
  const { trajectoryId, stepIndex, request } = target;
  const at = { trajectoryId, stepIndex };
  if (request.kind === "other") {
    const what = request.variant === "" ? "an interaction of no known kind" : `the ${request.variant} interaction`;
    throw invalid(`Step ${stepIndex} waits on ${what}, which agy-bridge cannot answer over RPC; answer it in the agy TUI.`);
  }
  if (request.kind === "permission") {
    if (!("allow" in decision) || typeof decision.allow !== "boolean") {
      throw invalid(`Step ${stepIndex} asks for a permission; answer it with { allow: true } or { allow: false }.`);
    }
    if (request.variant === "runCommand") return { ...at, runCommand: { confirm: decision.allow } };
    if (request.variant === "filePermission") {
      return { ...at, filePermission: withOptional({ allow: decision.allow, scope: decision.scope }) };
    }
    return {
      ...at,
      permission: withOptional({ allow: decision.allow, scope: decision.scope, userDenyInstruction: decision.userDenyInstruction }),
    };
  }
  if (!("responses" in decision) || !Array.isArray(decision.responses)) {
    throw invalid(`Step ${stepIndex} asks a question; answer it with { responses: [...] }, one entry per question (empty to decline).`);
  }
  if (decision.responses.length > request.questions.length) {
    throw invalid(`Step ${stepIndex} asks ${request.questions.length} question(s) but ${decision.responses.length} answers were given; give one per question.`);
  }
  const responses = decision.responses.map((choice, i) =>
    withOptional({
      question: request.questions[i]?.question ?? "",
      selectedOptionIds: [...choice.selectedOptionIds],
      writeInResponse: choice.writeInResponse,
    }),
  );
  return { ...at, askQuestion: { responses } };
}
