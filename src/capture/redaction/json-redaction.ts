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
 * user and host names (`scrubText`); a value under a key that names a
 * credential (`password`, `apiKey`, `clientSecret`, `…Token`) is masked
 * whole. `argumentsJson` is JSON in a string: it is parsed, redacted by the
 * same rules, and written back.
 *
 * Prefix-stable across frames: agy streams a step's text while the step is
 * GENERATING, each frame carrying a longer prefix of it. A prefix is
 * redacted as the committed part of what it will be — its last, possibly
 * unfinished token held back until the whitespace after it or the step's end
 * (`committedText`) — so every frame's redacted text is a prefix of the
 * next's, and no frame carries a fragment of a secret that only the whole
 * token would reveal. A running command's output grows the same way, and is
 * held back the same way. The streamed fields (`response`, `modifiedResponse`,
 * `thinking`) are never kept as "structural", since a prefix (`12`) may look
 * like a number that the whole text (`12 files changed`) is not.
 */
import { maskWords, wordsOf } from "./screen-redaction.js";
import { STEP_STATUS } from "../../protocol/wire-names.js";
import { committedText, scrubText, type ScrubContext } from "./secret-patterns.js";
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

/** The planner fields agy streams and the mapper follows as deltas (docs/events.md `message_delta`). */
const LIVE_TEXT_KEYS = new Set(["response", "modifiedResponse", "thinking"]);

/** A key that names a credential: its string value is masked whole. `…Tokens` (counts) is not one. */
const SECRET_KEY = /(?:password|passwd|passphrase|secret|token|api_?key|access_?key|private_?key|credentials?|authorization)$/i;

const ID_KEYS = new Set([
  "conversationId",
  "cascadeId",
  "trajectoryId",
  "executionId",
  "messageId",
  "rootConversationId",
  "parentConversationId",
  "subscriberId",
  "responseId",
  "sessionID",
  "sessionId",
  "errorId",
  "providerAssignedMessageId",
  "approvalId",
  "interactionId",
  "callId",
  "toolCallId",
  "requestId",
]);

const KEEP_KEYS = new Set([
  "type",
  "status",
  "source",
  "originalName",
  "model",
  "generatorModel",
  "planModel",
  "apiProvider",
  "stopReason",
  "typeName",
  "role",
  "shellName",
  "trajectoryType",
  "persistSuggestionType",
  "action",
  "scope",
  "kind",
  "icon",
  "code",
  "connectCode",
  "errorCode",
  "updatedStatus",
  "executableStatus",
  "executorLoopStatus",
  "lastStepType",
  "verbosity",
  "trajectoryVerbosity",
  "outcome",
  "decidedBy",
  "via",
  "by",
  "defaultAgentModelId",
  "displayName",
]);

/** `name` is agy's (a tool's, a sub-agent's) only inside these; elsewhere (directory entries) it is the user's. */
const NAMED_BY_AGY = new Set(["toolCall", "toolCalls", "subagents", "subagentSpec", "mcp"]);

const COMMAND_KEYS = new Set([
  "runCommand",
  "commandStatus",
  "sendCommandInput",
  "combinedOutput",
  "commandLine",
  "proposedCommandLine",
  "submittedCommandLine",
  "CommandLine",
  "command",
  "Command",
  "cwd",
  "Cwd",
  "stdout",
  "stderr",
  "output",
]);

/** Keys whose subtree is a permission request: its `target` is the command (or path) asked about. */
const PERMISSION_KEYS = new Set(["permission", "runCommand"]);

/** Redacts a JSON value (not modified; a new value is returned). */
export function redactJson(value: unknown, ctx: ScrubContext, options: JsonRedaction): unknown {
  // A command also shows up in text (`toolAction: "Running kubectl …"`): learn its words first.
  if (!options.keepCommands) walk(value, "", "", "text", ctx, { ...options, collectOnly: true });
  return walk(value, "", "", "text", ctx, options);
}

type WalkOptions = JsonRedaction & {
  collectOnly?: boolean;
  /** Inside a step agy is still generating: its kept texts may grow, so only their committed part is written. */
  generating?: boolean;
  /** Inside a command step still running: its output may grow, so only its committed part is written. */
  running?: boolean;
};

/** Where a running command's output grows: `combinedOutput.full` and its kin. */
const OUTPUT_KEYS = new Set(["full", "stdout", "stderr", "output", "combinedOutput"]);

function walk(value: unknown, key: string, parent: string, kind: Kind, ctx: ScrubContext, options: WalkOptions): unknown {
  if (typeof value === "string") return redactString(value, key, parent, kind, ctx, options);
  if (Array.isArray(value)) {
    if (key === "argumentsOrder") return value.map((v) => (typeof v === "string" ? v : walk(v, key, parent, kind, ctx, options)));
    return value.map((v) => walk(v, key, parent, kind, ctx, options));
  }
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    const step = typeof record["type"] === "string";
    const inner =
      step && record["status"] === STEP_STATUS.GENERATING
        ? { ...options, generating: true }
        : step && record["status"] === STEP_STATUS.RUNNING
          ? { ...options, running: true }
          : options;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(record)) {
      const childKind: Kind = kind === "command" || COMMAND_KEYS.has(k) || (PERMISSION_KEYS.has(key) && k === "target") ? "command" : "text";
      out[scrubText(k, ctx)] = walk(v, k, key, childKind, ctx, inner);
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
  if (SECRET_KEY.test(key) && !agyName && value !== "") return options.collectOnly === true ? value : maskOpaque(value);
  if ((isStructural(value) && !LIVE_TEXT_KEYS.has(key)) || (agyName && kind === "text")) return scrubText(value, ctx);
  if (kind === "command") {
    if (options.collectOnly === true) {
      for (const word of wordsOf(value)) options.commandWords.add(word);
      return value;
    }
    return options.keepCommands ? scrubText(growing(value, key, options), ctx) : maskText(value);
  }
  return options.keepText ? keptText(growing(value, key, options), ctx, options) : maskText(value);
}

/**
 * A kept text that may still grow — the streamed text of a step still
 * generating (its partial tool-call JSON too), the output of a command still
 * running: its committed part only (see the file comment). A command line, a
 * cwd, a parsed argument is whole when agy sends it and stays whole.
 */
function growing(value: string, key: string, options: WalkOptions): string {
  const grows = (options.generating === true && (LIVE_TEXT_KEYS.has(key) || key === "argumentsJson")) || (options.running === true && OUTPUT_KEYS.has(key));
  return grows ? committedText(value) : value;
}

function keptText(value: string, ctx: ScrubContext, options: WalkOptions): string {
  const scrubbed = scrubText(value, ctx);
  return options.keepCommands ? scrubbed : maskWords(scrubbed, options.commandWords);
}

/**
 * Timestamps, numbers in strings (int64) and enum names carry nothing of the
 * user's. An enum name is capitals in `_`-separated words (`CASCADE_RUN_STATUS_IDLE`,
 * `DONE`); a run of capitals and digits without `_` longer than 12
 * (`AKIAIOSFODNN7EXAMPLE`, a base32 secret) is not one.
 */
function isStructural(value: string): boolean {
  return (
    value === "" ||
    /^-?[0-9]+(\.[0-9]+)?$/.test(value) ||
    /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z?$/.test(value) ||
    (/^[A-Z]+(?:_[A-Z0-9]+)*$/.test(value) && (value.includes("_") || value.length <= 12))
  );
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
    return options.keepText ? keptText(growing(value, "argumentsJson", options), ctx, options) : maskText(value);
  }
  return JSON.stringify(walk(parsed, "", "", kind, ctx, options));
}
