/**
 * One human line per event (a few for tool output), for terminals,
 * optionally coloured. Deltas are left out: the committed message that
 * follows carries the same text. Everything agy sent passes through
 * {@link terminalText} before our own colours are added, so a model's
 * escape sequences show as text and never act on the terminal.
 */
import type { MapperEvent } from "../mapper/index.js";
import { TERMINAL_STYLE, terminalText } from "./terminal-text.js";

export interface EventTextOptions {
  /** ANSI colours (a TTY). */
  color?: boolean;
}

const STYLE = TERMINAL_STYLE;

/** One line of at most `max` characters (whitespace runs, newlines included, become one space). */
function clip(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** Lines of tool output shown under its header; the rest is counted, not printed. */
const OUTPUT_LINES = 12;

/**
 * Tool output as a person reads it: a JSON body pretty-printed, pty `\r\n`
 * as plain lines, at most {@link OUTPUT_LINES} lines of at most 160
 * characters, each indented under the header.
 */
function outputBlock(output: string): string {
  const text = prettyJson(output) ?? output;
  const lines = text.replace(/\r\n?/g, "\n").replace(/\n+$/, "").split("\n");
  const shown = lines.slice(0, OUTPUT_LINES).map((line) => `    ${clipLine(line)}`);
  if (lines.length > OUTPUT_LINES)
    shown.push(`    … ${lines.length - OUTPUT_LINES} more line${lines.length - OUTPUT_LINES === 1 ? "" : "s"} (--json has all of it)`);
  return shown.join("\n");
}

function clipLine(line: string, max = 160): string {
  const trimmed = line.trimEnd();
  return trimmed.length <= max ? trimmed : `${trimmed.slice(0, max - 1)}…`;
}

/** A JSON object or array, indented; undefined for anything else (plain text stays as it is). */
function prettyJson(text: string): string | undefined {
  const start = text.trimStart()[0];
  if (start !== "{" && start !== "[") return undefined;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return undefined;
  }
}

/** A tool call's arguments as `key=value` pairs when they are a JSON object, else the raw text. */
function argumentsText(text: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) {
      return Object.entries(parsed)
        .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`)
        .join(" ");
    }
  } catch {
    // Not JSON (agy's parse error case): shown as sent.
  }
  return text;
}

/** The word for how a wait ended: a deny of a question declines it. */
function outcomeText(outcome: string, kind: string): string {
  if (outcome === "denied" && kind === "question") return "declined";
  return outcome.replaceAll("_", " ");
}

function plain(event: MapperEvent): [keyof typeof STYLE, string] | undefined {
  switch (event.type) {
    case "user_message":
      return ["user", `> user: ${clip(event.text)}`];
    case "message":
      return [event.failed ? "failure" : "assistant", `  ${event.failed ? "assistant (failed)" : "assistant"}: ${clip(event.text)}`];
    case "function_call":
      return ["tool", `  tool call ${clip(event.name, 80)} ${clip(argumentsText(event.arguments))}`];
    case "function_call_output": {
      // `declined`: the person (or a bot) refused the call; not the tool's failure.
      const declined = event.declined === true;
      const what = declined ? "declined" : event.isError ? "failed" : "output";
      const header = `  tool ${what} (${clip(event.name, 80)})`;
      return [event.isError && !declined ? "failure" : "tool", event.output.trim() === "" ? `${header}: (empty)` : `${header}:\n${outputBlock(event.output)}`];
    }
    case "interaction_requested": {
      const r = event.request;
      const text =
        r.kind === "permission"
          ? `  [approval needed] step ${event.stepIndex}: ${clip(r.action, 40)} ${clip(r.target, 80)}`
          : r.kind === "question"
            ? `  [question] step ${event.stepIndex}: ${r.questions
                .map((q) => `${clip(q.question)} (${q.options.map((o) => `${clip(o.id, 20)}=${clip(o.text, 80)}`).join(", ")})`)
                .join("; ")}`
            : `  [gate ${clip(r.variant, 40) || "unknown"}] step ${event.stepIndex}: answer it in the agy TUI`;
      return ["gate", `${text}  [${event.interactionId}]`];
    }
    case "interaction_resolved":
      return ["resolved", `  [resolved] step ${event.stepIndex}: ${outcomeText(event.outcome, event.kind)}`];
    case "policy_delivered":
      // A delivered verdict was already told by the decision's own line; one that did not get through needs a person.
      return event.result === "delivered"
        ? undefined
        : [
            event.result === "failed" ? "failure" : "status",
            `  [policy] step ${event.stepIndex}: the ${event.decision} of ${clip(event.decidedBy, 80)} was not delivered (${event.result.replaceAll("_", " ")})${event.reason === undefined ? "" : `: ${clip(event.reason, 300)}`}`,
          ];
    case "status":
      return [event.status === "failed" ? "failure" : "status", `  [status] ${event.status} (${event.reason.replaceAll("_", " ")})`];
    case "usage":
      return ["tool", `  [usage] in ${event.inputTokens}, out ${event.outputTokens}, cache ${event.cacheReadTokens}`];
    case "model_changed":
      return ["status", `  [model] ${clip(event.displayName ?? event.model, 80)}`];
    case "conversation_rotated":
      return ["status", `  [rotated] now ${clip(event.conversationId, 80)}`];
    case "diagnostic":
      return ["failure", `  [diagnostic ${event.code}] ${clip(event.message, 500)}`];
    case "agy_version_changed":
      return [
        "status",
        `  [agy] version ${clip(event.from ?? "unknown", 40)} → ${clip(event.to ?? "unknown", 40)}${event.pid === undefined ? "" : ` (pid ${event.pid})`}`,
      ];
    case "message_delta":
    case "reasoning_delta":
    case "history_end":
      return undefined;
    default: {
      // A new event type fails to compile here until watch knows how to show it.
      const unshown: never = event;
      return unshown;
    }
  }
}

/** The line for `event`, or undefined for events a terminal reader does not need (deltas). */
export function formatEvent(event: MapperEvent, options: EventTextOptions = {}): string | undefined {
  const line = plain(event);
  if (line === undefined) return undefined;
  const [style, raw] = line;
  const text = terminalText(raw, { keepNewlines: true });
  return options.color === true ? `${STYLE[style]}${text}${STYLE.reset}` : text;
}
