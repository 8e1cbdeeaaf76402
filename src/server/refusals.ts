/**
 * The answers a bot acts on when the session did not do what it asked: the
 * interaction was already answered or timed out (409), the action does not
 * fit the interaction (422, naming the body that fits), or a turn was not
 * typed (409, naming the interaction to answer first or the missing pane).
 */
import type { ServerResponse } from "node:http";
import type { AnswerResult, InteractionAction } from "./contract.js";
import { HttpProblem, sendJson, sendProblem } from "./http-problem.js";
import type { HubSession, InteractionRequested, TurnOutcome } from "./session-hub.js";
import { instructionAllowed } from "../session/index.js";
import { type AnswerPlace, describeAnswer } from "../session/answer-text.js";

/** The answer's result: 200 when delivered, else a problem whose `detail` is the sentence every door gives (session/answer-text.ts). */
export function sendAnswer(res: ServerResponse, result: AnswerResult, place: AnswerPlace): void {
  if (result.result === "delivered") return sendJson(res, 200, result);
  const status = result.result === "not_found" ? 404 : 409;
  sendProblem(res, new HttpProblem(status, status === 404 ? "Not Found" : "Conflict", describeAnswer(result, place), result.result));
}

/** A refused turn is a 409 that says what to do: answer the waiting interaction, or give serve a pane. */
export function sendTurnOutcome(res: ServerResponse, outcome: TurnOutcome, session: HubSession): void {
  if (outcome.result !== "refused") return sendJson(res, 200, outcome);
  if (outcome.refusal === "interaction_pending") {
    const interactionId = outcome.interactionId ?? session.pending()[0]?.interactionId;
    const answer = interactionId === undefined ? "" : ` POST /v1/sessions/${session.conversationId}/interactions/${interactionId} answers it.`;
    throw new HttpProblem(409, "Conflict", `${outcome.reason}${answer}`, "interaction_pending", interactionId);
  }
  throw new HttpProblem(409, "Conflict", outcome.reason, outcome.refusal);
}

/**
 * The action must fit the interaction's kind: a permission takes approve or
 * deny, a question takes answer (or deny to decline), and a gate of another
 * kind only a person in the TUI can answer.
 */
export function refuseWrongAction(waiting: InteractionRequested, action: InteractionAction, conversationId: string): void {
  const kind = waiting.request.kind;
  const route = `POST /v1/sessions/${conversationId}/interactions/${waiting.interactionId}`;
  if (kind === "other") {
    throw new HttpProblem(
      422,
      "Unprocessable Content",
      `interaction ${waiting.interactionId} is a ${waiting.request.variant || "gate of no known kind"} that agy-bridge cannot answer over RPC; answer it in the agy TUI`,
      "not_answerable",
    );
  }
  if (kind === "permission" && action.action === "answer") {
    throw new HttpProblem(
      422,
      "Unprocessable Content",
      `interaction ${waiting.interactionId} is a permission, not a question: ${route} with {"action":"approve"} or {"action":"deny"}`,
      "wrong_action",
    );
  }
  if (kind === "question" && action.action === "approve") {
    throw new HttpProblem(
      422,
      "Unprocessable Content",
      `interaction ${waiting.interactionId} is a question, not a permission: ${route} with {"action":"answer","optionIds":[…]} (or {"action":"deny"} to decline it)`,
      "wrong_action",
    );
  }
  if ("instruction" in action && action.instruction !== undefined && !instructionAllowed(kind, action.action)) {
    throw new HttpProblem(
      422,
      "Unprocessable Content",
      `interaction ${waiting.interactionId}: agy's ${action.action} of a ${kind} carries no instruction, so it would never reach agy; send {"action":"${action.action}"} without one (only a deny of a permission takes an instruction)`,
      "invalid_argument",
    );
  }
}
