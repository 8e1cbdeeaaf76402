/**
 * Redacts agy's JSON (steps, stream frames, summaries, answers) by what each
 * string is, decided from its key and the keys above it:
 *
 * - ids (`conversationId`, `trajectoryId`, `executionId`, tool call `id`, …)
 *   and every UUID anywhere, object keys included → consistent placeholders;
 * - signatures (`thinkingSignature`, `signature`, any `…Signature`) → masked
 *   always;
 * - command lines and outputs (under `runCommand`, a `permission` request,
 *   `combinedOutput`, a `CommandLine` argument, …) → masked unless commands
 *   are kept;
 * - names agy chose (types, statuses, enums, tool and model names,
 *   `argumentsOrder`), timestamps and numbers → kept;
 * - every other string (prompts, replies, thinking, questions, summaries,
 *   tool results) → masked unless text is kept.
 *
 * Whatever is kept is still scrubbed of credentials, e-mails, home paths,
 * user and host names (`scrubText`). `argumentsJson` is JSON in a string: it
 * is parsed, redacted by the same rules, and written back.
 */
import { maskWords, wordsOf } from "./screen-redaction.js";
import { scrubText, type ScrubContext } from "./secret-patterns.js";
import { maskOpaque, maskText } from "./text-mask.js";

export interface JsonRedaction {
  keepText: boolean;
  keepCommands: boolean;
  /**
   * Words of every command line and output seen so far, this value's
   * included (filled before anything is redacted): kept text and screens
   * mask them too unless commands are kept.
   */
  commandWords: Set<string>;
}

type Kind = "text" | "command";

const ID_KEYS = new Set([
  "conversationId", "cascadeId", "trajectoryId", "executionId", "messageId", "rootConversationId", "parentConversationId",
  "subscriberId", "responseId", "sessionID", "sessionId", "errorId", "providerAssignedMessageId", "approvalId", "interactionId",
  "callId", "toolCallId", "requestId",
]);

const KEEP_KEYS = new Set([
  "type", "status", "source", "originalName", "model", "generatorModel", "planModel", "apiProvider", "stopReason",
  "typeName", "role", "shellName", "trajectoryType", "persistSuggestionType", "action", "scope", "kind", "icon", "code",
  "connectCode", "errorCode", "updatedStatus", "executableStatus", "executorLoopStatus", "lastStepType", "verbosity",
  "trajectoryVerbosity", "outcome", "decidedBy", "via", "by", "defaultAgentModelId", "displayName",
]);

/** `name` is agy's (a tool's, a sub-agent's) only inside these; elsewhere (directory entries) it is the user's. */
const NAMED_BY_AGY = new Set(["toolCall", "toolCalls", "subagents", "subagentSpec", "mcp"]);

const COMMAND_KEYS = new Set([
  "runCommand", "commandStatus", "sendCommandInput", "combinedOutput", "commandLine", "proposedCommandLine",
  "submittedCommandLine", "CommandLine", "command", "Command", "cwd", "Cwd", "stdout", "stderr", "output",
]);

/** Keys whose subtree is a permission request: its `target` is the command (or path) asked about. */
const PERMISSION_KEYS = new Set(["permission", "runCommand"]);

/** Redacts a JSON value (not modified; a new value is returned). */
export function redactJson(value: unknown, ctx: ScrubContext, options: JsonRedaction): unknown {
  // A command also shows up in text (`toolAction: "Running kubectl …"`): learn its words first.
  if (!options.keepCommands) walk(value, "", "", "text", ctx, { ...options, collectOnly: true });
  return walk(value, "", "", "text", ctx, options);
}

type WalkOptions = JsonRedaction & { collectOnly?: boolean };

function walk(value: unknown, key: string, parent: string, kind: Kind, ctx: ScrubContext, options: WalkOptions): unknown {
  if (typeof value === "string") return redactString(value, key, parent, kind, ctx, options);
  if (Array.isArray(value)) {
    if (key === "argumentsOrder") return value.map((v) => (typeof v === "string" ? v : walk(v, key, parent, kind, ctx, options)));
    return value.map((v) => walk(v, key, parent, kind, ctx, options));
  }
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const childKind: Kind = kind === "command" || COMMAND_KEYS.has(k) || (PERMISSION_KEYS.has(key) && k === "target") ? "command" : "text";
      out[scrubText(k, ctx)] = walk(v, k, key, childKind, ctx, options);
    }
    return out;
  }
  return value;
}

function redactString(value: string, key: string, parent: string, kind: Kind, ctx: ScrubContext, options: WalkOptions): string {
  if (key === "argumentsJson") return redactArgumentsJson(value, kind, ctx, options);
  if (/signature$/i.test(key)) return maskOpaque(value);
  if (ID_KEYS.has(key) || (key === "id" && !/^[0-9]+$/.test(value))) return redactId(value, ctx);
  const agyName = key === "name" ? NAMED_BY_AGY.has(parent) : KEEP_KEYS.has(key);
  if (isStructural(value) || (agyName && kind === "text")) return scrubText(value, ctx);
  if (kind === "command") {
    if (options.collectOnly === true) {
      for (const word of wordsOf(value)) options.commandWords.add(word);
      return value;
    }
    return options.keepCommands ? scrubText(value, ctx) : maskText(value);
  }
  return options.keepText ? keptText(value, ctx, options) : maskText(value);
}

function keptText(value: string, ctx: ScrubContext, options: WalkOptions): string {
  const scrubbed = scrubText(value, ctx);
  return options.keepCommands ? scrubbed : maskWords(scrubbed, options.commandWords);
}

/** Timestamps, numbers in strings (int64) and enum names carry nothing of the user's. */
function isStructural(value: string): boolean {
  return value === "" || /^-?[0-9]+(\.[0-9]+)?$/.test(value) || /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z?$/.test(value) || /^[A-Z][A-Z0-9_]*$/.test(value);
}

function redactId(value: string, ctx: ScrubContext): string {
  const scrubbed = scrubText(value, ctx);
  // A UUID (alone or inside, as `bot-<uuid>`) already has its placeholder.
  return scrubbed !== value ? scrubbed : ctx.placeholders.id(value);
}

function redactArgumentsJson(value: string, kind: Kind, ctx: ScrubContext, options: WalkOptions): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    if (options.collectOnly === true) return value;
    return options.keepText ? keptText(value, ctx, options) : maskText(value);
  }
  return JSON.stringify(walk(parsed, "", "", kind, ctx, options));
}
