/**
 * The mapper's events as ACP `session/update`s: deltas become message and
 * thought chunks, tool calls become `tool_call` / `tool_call_update` with
 * their kind, title, files and output, and turns a person typed in the TUI
 * become user message chunks. One translator per ACP session: it remembers
 * what each message has sent so far, so a replayed or committed message is
 * never sent twice, and which tool calls the editor has already been shown.
 */
import type { SessionUpdate, ToolCallContent } from "@agentclientprotocol/sdk";
import type { EventOf, MapperEvent } from "../mapper/index.js";
import { argumentsObject, toolKind, toolLocations, toolTitle } from "./tool-calls.js";

/** The newest characters of a tool's output an editor gets (the rest stays in agy). */
const OUTPUT_LIMIT = 32_000;

type Requested = EventOf<"interaction_requested">;

export interface UpdateMapper {
  /** The updates one event gives. `user_message` is mapped too: the caller drops its own turn's. */
  map(event: MapperEvent): SessionUpdate[];
  /** The `tool_call` that shows a gate's step as pending, once per call. */
  announceGate(event: Requested): SessionUpdate[];
  /** The title the editor was shown for a call, to reuse in a permission request. */
  titleOf(callId: string): string | undefined;
}

export function createUpdateMapper(): UpdateMapper {
  /** Text sent as chunks per message id; `diverged` once agy rewrote it in a way chunks cannot follow. */
  const sent = new Map<string, { text: string; diverged: boolean }>();
  const thought = new Map<string, string>();
  const shown = new Map<string, string>();

  const text = (kind: "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk", body: string): SessionUpdate => ({
    sessionUpdate: kind,
    content: { type: "text", text: body },
  });

  const delta = (event: EventOf<"message_delta">): SessionUpdate[] => {
    const record = sent.get(event.messageId) ?? { text: "", diverged: false };
    sent.set(event.messageId, record);
    if (record.diverged) return [];
    const next = event.replace ? event.text : record.text + event.text;
    if (!next.startsWith(record.text)) {
      // Chunks only append: a rewrite is shown whole when the message commits.
      record.diverged = true;
      return [];
    }
    const add = next.slice(record.text.length);
    record.text = next;
    return add === "" ? [] : [text("agent_message_chunk", add)];
  };

  const reasoning = (event: EventOf<"reasoning_delta">): SessionUpdate[] => {
    const before = thought.get(event.messageId) ?? "";
    const next = event.replace ? event.text : before + event.text;
    thought.set(event.messageId, next);
    if (!next.startsWith(before)) return [text("agent_thought_chunk", `\n${next}`)];
    const add = next.slice(before.length);
    return add === "" ? [] : [text("agent_thought_chunk", add)];
  };

  const message = (event: EventOf<"message">): SessionUpdate[] => {
    const record = sent.get(event.messageId);
    sent.delete(event.messageId);
    thought.delete(event.messageId);
    if (record === undefined || record.text === "") return event.text === "" ? [] : [text("agent_message_chunk", event.text)];
    if (!record.diverged && event.text.startsWith(record.text)) {
      const rest = event.text.slice(record.text.length);
      return rest === "" ? [] : [text("agent_message_chunk", rest)];
    }
    return [text("agent_message_chunk", `\n\n${event.text}`)];
  };

  const call = (event: EventOf<"function_call">): SessionUpdate[] => {
    const args = argumentsObject(event.arguments);
    const title = toolTitle(event.name, args, event.description);
    const fields = {
      toolCallId: event.callId,
      title,
      kind: toolKind(event.name),
      status: "in_progress" as const,
      rawInput: args ?? { text: event.arguments },
      locations: toolLocations(args),
    };
    const known = shown.has(event.callId);
    shown.set(event.callId, title);
    return [known ? { sessionUpdate: "tool_call_update", ...fields } : { sessionUpdate: "tool_call", ...fields }];
  };

  const output = (event: EventOf<"function_call_output">): SessionUpdate[] => {
    const body = event.output.length > OUTPUT_LIMIT ? `…${event.output.slice(-OUTPUT_LIMIT)}` : event.output;
    const content: ToolCallContent[] = body === "" ? [] : [{ type: "content", content: { type: "text", text: body } }];
    const fields = {
      toolCallId: event.callId,
      status: event.isError ? ("failed" as const) : ("completed" as const),
      content,
      rawOutput: { stepStatus: event.stepStatus, ...(event.declined === true ? { declined: true } : {}) },
    };
    if (shown.has(event.callId)) return [{ sessionUpdate: "tool_call_update", ...fields }];
    shown.set(event.callId, event.name);
    return [{ sessionUpdate: "tool_call", title: event.name, kind: toolKind(event.name), ...fields }];
  };

  return {
    map(event) {
      switch (event.type) {
        case "user_message":
          return event.text === "" ? [] : [text("user_message_chunk", event.text)];
        case "message_delta":
          return delta(event);
        case "reasoning_delta":
          return reasoning(event);
        case "message":
          return message(event);
        case "function_call":
          return call(event);
        case "function_call_output":
          return output(event);
        default:
          return [];
      }
    },
    announceGate(event) {
      if (shown.has(event.callId)) return [];
      const request = event.request;
      const title =
        request.kind === "permission"
          ? request.target !== ""
            ? request.target
            : request.description
          : request.kind === "question"
            ? (request.questions[0]?.question ?? "A question")
            : `agy asks in its TUI (${request.variant === "" ? "a gate" : request.variant})`;
      shown.set(event.callId, title);
      const kind = request.kind === "permission" ? (request.action === "command" ? "execute" : request.action === "file" ? "read" : "other") : "other";
      return [{ sessionUpdate: "tool_call", toolCallId: event.callId, title, kind, status: "pending", rawInput: { ...request } }];
    },
    titleOf: (callId) => shown.get(callId),
  };
}
