/**
 * The words a notification shows: a title saying what agy wants, and the
 * request itself (the command line, the file, the question and its options).
 * Plain text; each channel escapes it for its own format.
 */
import { type InteractionOutcome, type InteractionRequest, waitingForRequest } from "../mapper/index.js";

/** Notification bodies stay short: push payloads are capped near 4 KB. */
const MAX_BODY = 1000;

/** What agy wants, then the session's `waitingFor` word: `agy asks to run a command · permission`. */
export function noticeTitle(request: InteractionRequest): string {
  return `${askText(request)} · ${waitingForRequest(request)}`;
}

function askText(request: InteractionRequest): string {
  switch (request.kind) {
    case "permission":
      if (request.action === "command") return "agy asks to run a command";
      if (request.action === "file") return "agy asks to change a file";
      return `agy asks permission: ${request.action}`;
    case "question":
      return "agy asks a question";
    case "other":
      return `agy waits in its TUI${request.variant === "" ? "" : ` (${request.variant})`}`;
  }
}

/** What agy asked, in plain text. */
export function noticeBody(request: InteractionRequest): string {
  let text: string;
  switch (request.kind) {
    case "permission":
      text = request.description !== "" && request.description !== request.target ? `${request.target}\n${request.description}` : request.target;
      break;
    case "question":
      text = request.questions
        .map((q) => [q.question, ...q.options.map((o) => `• ${o.text}`)].join("\n") + (q.multiSelect ? "\n(choose any)" : ""))
        .join("\n\n");
      break;
    case "other":
      text = "Only agy's own TUI can answer this gate.";
      break;
  }
  return text.length > MAX_BODY ? `${text.slice(0, MAX_BODY - 1)}…` : text;
}

const OUTCOME_WORDS: Record<InteractionOutcome, string> = {
  approved: "Approved",
  denied: "Denied",
  answered: "Answered",
  timed_out: "Timed out",
  cancelled: "Cancelled",
};

/** "Approved by page", "Denied", "Timed out". */
export function outcomeText(outcome: InteractionOutcome, decidedBy?: string): string {
  return decidedBy === undefined ? OUTCOME_WORDS[outcome] : `${OUTCOME_WORDS[outcome]} by ${decidedBy}`;
}
