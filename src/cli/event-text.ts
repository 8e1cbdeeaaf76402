/**
 * One human line per event, for terminals, optionally coloured. Deltas are
 * left out: the committed message that follows carries the same text.
 */
import type { MapperEvent } from "../mapper/index.js";

export interface EventTextOptions {
  /** ANSI colours (a TTY). */
  color?: boolean;
}

const STYLE = {
  user: "\x1b[1;36m",
  assistant: "\x1b[0m",
  tool: "\x1b[2m",
  gate: "\x1b[1;33m",
  resolved: "\x1b[32m",
  status: "\x1b[35m",
  failure: "\x1b[31m",
  reset: "\x1b[0m",
} as const;

function clip(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

function plain(event: MapperEvent): [keyof typeof STYLE, string] | undefined {
  switch (event.type) {
    case "user_message":
      return ["user", `> user: ${clip(event.text)}`];
    case "message":
      return [event.failed ? "failure" : "assistant", `  ${event.failed ? "assistant (failed)" : "assistant"}: ${clip(event.text)}`];
    case "function_call":
      return ["tool", `  tool call ${event.name} ${clip(event.arguments, 100)}`];
    case "function_call_output":
      return [event.isError ? "failure" : "tool", `  tool ${event.isError ? "failed" : "output"} (${event.name}): ${clip(event.output, 100) || "(empty)"}`];
    case "interaction_requested": {
      const r = event.request;
      const text =
        r.kind === "permission"
          ? `  [approval needed] step ${event.stepIndex}: ${r.action} ${clip(r.target, 80)}`
          : r.kind === "question"
            ? `  [question] step ${event.stepIndex}: ${r.questions
                .map((q) => `${q.question} (${q.options.map((o) => `${o.id}=${o.text}`).join(", ")})`)
                .join("; ")}`
            : `  [gate ${r.variant || "unknown"}] step ${event.stepIndex}: answer it in the agy TUI`;
      return ["gate", `${text}  [${event.interactionId}]`];
    }
    case "interaction_resolved":
      return ["resolved", `  [resolved] step ${event.stepIndex}: ${event.outcome.replaceAll("_", " ")}`];
    case "status":
      return [event.status === "failed" ? "failure" : "status", `  [status] ${event.status} (${event.reason.replaceAll("_", " ")})`];
    case "usage":
      return ["tool", `  [usage] in ${event.inputTokens}, out ${event.outputTokens}, cache ${event.cacheReadTokens}`];
    case "model_changed":
      return ["status", `  [model] ${event.displayName ?? event.model}`];
    case "conversation_rotated":
      return ["status", `  [rotated] now ${event.conversationId}`];
    case "diagnostic":
      return ["failure", `  [diagnostic ${event.code}] ${event.message}`];
    case "message_delta":
    case "reasoning_delta":
      return undefined;
  }
}

/** The line for `event`, or undefined for events a terminal reader does not need (deltas). */
export function formatEvent(event: MapperEvent, options: EventTextOptions = {}): string | undefined {
  const line = plain(event);
  if (line === undefined) return undefined;
  const [style, text] = line;
  return options.color === true ? `${STYLE[style]}${text}${STYLE.reset}` : text;
}
