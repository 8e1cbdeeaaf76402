/**
 * A conversation's events as readable text for the transcript resource: one
 * block per settled thing (turns, answers, tool calls, gates, status edges).
 * Deltas and usage are left out: the settled `message` carries the text.
 */
import type { MapperEvent } from "../mapper/index.js";

const MAX_OUTPUT_CHARS = 4000;

/** The text of one event, or undefined for events the transcript leaves out. */
export function transcriptLine(event: MapperEvent): string | undefined {
  switch (event.type) {
    case "user_message":
      return `user: ${event.text}`;
    case "message":
      return `${event.failed ? "agy (failed)" : "agy"}: ${event.text}${event.interrupted === true ? " [interrupted]" : ""}`;
    case "function_call":
      return `tool call ${event.name} ${event.arguments}`;
    case "function_call_output": {
      const output =
        event.output.length > MAX_OUTPUT_CHARS
          ? `${event.output.slice(0, MAX_OUTPUT_CHARS)}… [${event.output.length - MAX_OUTPUT_CHARS} more characters]`
          : event.output;
      return `tool output ${event.name}${event.isError ? ` (${event.declined === true ? "declined" : `error, ${event.stepStatus}`})` : ""}:\n${output}`;
    }
    case "interaction_requested": {
      const r = event.request;
      const what =
        r.kind === "permission"
          ? `permission to ${r.action} ${r.target}`
          : r.kind === "question"
            ? `question: ${r.questions.map((q) => `${q.question} [${q.options.map((o) => `${o.id}. ${o.text}`).join("; ")}]`).join(" / ")}`
            : `a ${r.variant || "TUI-only"} prompt (answer it in agy's TUI)`;
      return `waiting for ${what} — ${event.interactionId}`;
    }
    case "interaction_resolved":
      return `${event.interactionId} ${event.outcome}${event.decidedBy === undefined ? "" : ` by ${event.decidedBy}`}`;
    case "status":
      return `[${event.status}: ${event.reason}]`;
    case "model_changed":
      return `[model ${event.displayName ?? event.model}]`;
    case "conversation_rotated":
      return `[conversation continues as ${event.conversationId}]`;
    case "diagnostic":
      return `[diagnostic ${event.code}: ${event.message}]`;
    default:
      return undefined;
  }
}

export function transcriptText(events: readonly MapperEvent[]): string {
  const lines: string[] = [];
  for (const event of events) {
    const line = transcriptLine(event);
    if (line !== undefined) lines.push(line);
  }
  return lines.length === 0 ? "(nothing in this conversation yet)\n" : `${lines.join("\n")}\n`;
}
