/**
 * One sentence per answer result, the same at every door: the CLI's stderr,
 * an MCP tool error, an HTTP problem's `detail`. A door adds only its own
 * next step (a command to run, a tool to call, a route).
 */

/** An answer's result as any door holds it: the session's `AnswerResult`, or serve's (which may carry a `reason`). */
export interface DescribedAnswer {
  result: "delivered" | "already_resolved" | "timed_out" | "not_found" | "decided_by_policy";
  stepIndex?: number | undefined;
  /** Why, when the one who answered knows more than the result (serve: "another request answered it first"). */
  reason?: string | undefined;
  via?: "tui" | undefined;
  /** What closing agy's own dialog did after an RPC answer. */
  prompt?: { result: string; reason: string } | undefined;
  decision?: "approve" | "deny" | undefined;
  rule?: string | null | undefined;
}

export interface AnswerPlace {
  interactionId: string;
  /** Named in a `not_found` sentence when given. */
  conversationId?: string | undefined;
}

/** The sentence for `answer` (no closing period: a door may add its next step after a semicolon or a period). */
export function describeAnswer(answer: DescribedAnswer, place: AnswerPlace): string {
  const id = place.interactionId;
  const step = answer.stepIndex === undefined ? "" : ` (step ${answer.stepIndex})`;
  const why = answer.reason === undefined ? "" : ` (${answer.reason})`;
  switch (answer.result) {
    case "delivered": {
      const how = answer.via === "tui" ? " in the TUI" : "";
      const prompt = answer.prompt;
      const closed = prompt === undefined || prompt.result === "closed" || prompt.result === "none" ? "" : `; ${prompt.reason}`;
      return `delivered${how} to step ${answer.stepIndex ?? "?"} (${id})${closed}`;
    }
    case "already_resolved":
      return `interaction ${id}${step} was already answered, here, in agy's TUI or by another client${why}; nothing was sent`;
    case "timed_out":
      return `agy timed interaction ${id}${step} out and no retry of it is waiting${why}; nothing was sent`;
    case "not_found":
      return `no interaction ${id} exists in ${place.conversationId === undefined ? "this conversation" : `conversation ${place.conversationId}`}${why}`;
    case "decided_by_policy": {
      const rule = answer.rule === undefined || answer.rule === null ? "its default" : `rule ${answer.rule}`;
      return `the policy (${rule}) decided interaction ${id}${answer.decision === undefined ? "" : ` (${answer.decision})`} and answers it itself; nothing was sent`;
    }
  }
}

/** `describeAnswer` as a sentence that starts a message (capitalised). */
export function describeAnswerSentence(answer: DescribedAnswer, place: AnswerPlace): string {
  const text = describeAnswer(answer, place);
  return text.charAt(0).toUpperCase() + text.slice(1);
}
