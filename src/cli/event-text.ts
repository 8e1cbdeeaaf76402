/**
 * One human line per event, for terminals. Deltas are left out: the committed
 * message that follows carries the same text.
 */
import type { MapperEvent } from "../mapper/index.js";

function clip(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

export function formatEvent(event: MapperEvent): string | undefined {
  switch (event.type) {
    case "user_message":
      return `> user: ${clip(event.text)}`;
    case "message":
      return `  ${event.failed ? "assistant (failed)" : "assistant"}: ${clip(event.text)}`;
    case "function_call":
      return `  tool call ${event.name} ${clip(event.arguments, 100)}`;
    case "function_call_output":
      return `  tool ${event.isError ? "failed" : "output"} (${event.name}): ${clip(event.output, 100) || "(empty)"}`;
    case "interaction_requested":
      return event.request.kind === "permission"
        ? `  [approval needed] step ${event.stepIndex}: ${event.request.action} ${clip(event.request.target, 80)}`
        : `  [question] step ${event.stepIndex}: ${event.request.questions
            .map((q) => `${q.question} (${q.options.map((o) => `${o.id}=${o.text}`).join(", ")})`)
            .join("; ")}`;
    case "interaction_resolved":
      return `  [resolved] step ${event.stepIndex}: ${event.outcome}`;
    case "status":
      return `  [status] ${event.status} (${event.reason.replaceAll("_", " ")})`;
    case "usage":
      return `  [usage] in ${event.inputTokens}, out ${event.outputTokens}, cache ${event.cacheReadTokens}`;
    case "model_changed":
      return `  [model] ${event.model}`;
    case "conversation_rotated":
      return `  [rotated] now ${event.conversationId}`;
    case "diagnostic":
      return `  [diagnostic ${event.code}] ${event.message}`;
    case "message_delta":
    case "reasoning_delta":
      return undefined;
  }
}
