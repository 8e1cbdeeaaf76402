/**
 * agy's files under a HOME, written as the simulated conversations play
 * (docs/spike-notes.md §16), so clients that
 * read agy's files instead of (or beside) its RPC can be tested:
 *
 * - `<home>/.gemini/antigravity-cli/brain/<id>/.system_generated/logs/transcript.jsonl`:
 *   one JSON record per step, appended when the step settles (USER_INPUT at
 *   once), so the file grows during a turn and its step indexes can arrive
 *   out of order, as agy's did (a gate's step settles after the planner
 *   before it was created). Record: `{step_index, source, type, status,
 *   created_at, content, thinking?, tool_calls?}` — the names file-reading
 *   clients of agy's transcript parse, with agy's enum values stripped of
 *   their `CORTEX_STEP_SOURCE_` / `CORTEX_STEP_TYPE_` / `CORTEX_STEP_STATUS_`
 *   prefixes and a user turn wrapped in `<USER_REQUEST>` as those clients
 *   unwrap it.
 * - `<home>/.gemini/antigravity-cli/cache/last_conversations.json`: `{ "<cwd>":
 *   "<conversation id>" }`, rewritten (atomically, other directories' entries
 *   kept) when a turn starts in a conversation the TUI shows.
 *
 * Writes are synchronous appends of whole lines (a reader never sees half a
 * record) and a failure is reported once to `onError`, never thrown into a
 * turn. Directories are made 0700 and files 0600, as private as agy's.
 */
import { randomUUID } from "node:crypto";
import { appendFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { AgyBridgeError } from "../../errors.js";
import { asObject, asString } from "../../protocol/json.js";
import { STEP_STATUS, STEP_TYPE } from "../../protocol/wire-names.js";
import type { SimConversation } from "./conversation.js";
import type { SimEngine } from "./engine.js";
import type { JsonObject, WireStep } from "./step-factory.js";

export interface AgyFilesOptions {
  /** The simulated HOME: files go under `<home>/.gemini/antigravity-cli`. */
  home: string;
  /** The absolute directory agy "runs in": the key of `last_conversations.json`. */
  cwd: string;
  /** Told once if a file cannot be written (the simulation goes on). */
  onError?: (error: AgyBridgeError) => void;
  /**
   * The transcript's file name, disputed between sources (spike-notes §16 #1):
   * `transcript.jsonl` (default) or `transcript_full.jsonl`.
   */
  transcriptName?: AgyTranscriptName;
}

export type AgyTranscriptName = "transcript.jsonl" | "transcript_full.jsonl";
export const AGY_TRANSCRIPT_NAMES: readonly AgyTranscriptName[] = ["transcript.jsonl", "transcript_full.jsonl"];

export interface AgyFiles {
  /** `<home>/.gemini/antigravity-cli`. */
  readonly root: string;
  /** The transcript path of a conversation. */
  transcriptPath(conversationId: string): string;
  /** Stops writing. */
  close(): void;
}

const SETTLED = new Set<string>([STEP_STATUS.DONE, STEP_STATUS.ERROR, STEP_STATUS.CANCELED]);

/** Writes agy's files for every conversation `engine` creates from now on, and for the active one. */
export function writeAgyFiles(engine: SimEngine, options: AgyFilesOptions): AgyFiles {
  const root = join(options.home, ".gemini", "antigravity-cli");
  const transcriptPath = (id: string): string => join(root, "brain", id, ".system_generated", "logs", options.transcriptName ?? "transcript.jsonl");
  const offs: (() => void)[] = [];
  let failed = false;
  const guard = (what: string, write: () => void): void => {
    try {
      write();
    } catch (error) {
      if (failed) return;
      failed = true;
      options.onError?.(
        new AgyBridgeError(
          "internal",
          `The simulator could not write agy's ${what} under ${root} (${(error as Error).message}); later file writes are skipped — give --home a writable directory.`,
          { cause: error },
        ),
      );
    }
  };
  const lastConversations = join(root, "cache", "last_conversations.json");
  let lastId: string | undefined;
  const remember = (conversation: SimConversation): void => {
    if (conversation.headless || lastId === conversation.id) return;
    lastId = conversation.id;
    guard("last_conversations.json", () => {
      mkdirSync(dirname(lastConversations), { recursive: true, mode: 0o700 });
      const tmp = `${lastConversations}.${randomUUID()}.tmp`;
      // Other directories' entries are kept: the file maps every cwd to its last conversation.
      writeFileSync(tmp, `${JSON.stringify({ ...readMap(lastConversations), [options.cwd]: conversation.id })}\n`, { mode: 0o600 });
      renameSync(tmp, lastConversations);
    });
  };

  const follow = (conversation: SimConversation): void => {
    const written = new Set<number>();
    const path = transcriptPath(conversation.id);
    let started = conversation.turnsStarted;
    const flush = (indices: readonly number[]): void => {
      if (conversation.turnsStarted !== started) {
        started = conversation.turnsStarted;
        remember(conversation);
      }
      const lines: string[] = [];
      for (const index of indices) {
        const step = conversation.steps[index];
        if (step === undefined || written.has(index) || !SETTLED.has(step.status)) continue;
        written.add(index);
        lines.push(JSON.stringify(transcriptRecord(step, index)));
      }
      if (lines.length === 0) return;
      guard("transcript", () => {
        mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
        appendFileSync(path, `${lines.join("\n")}\n`, { mode: 0o600 });
      });
    };
    offs.push(conversation.subscribe((indices) => flush(indices)));
    flush(conversation.steps.map((_, i) => i));
  };

  follow(engine.conversation(engine.activeConversationId) as SimConversation);
  offs.push(engine.onConversation((conversation) => follow(conversation)));
  return {
    root,
    transcriptPath,
    close() {
      for (const off of offs.splice(0)) off();
    },
  };
}

/** The string entries of a JSON object file; {} when it is missing or not one. */
function readMap(path: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return {};
  }
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(asObject(parsed) ?? {})) if (typeof value === "string") out[key] = value;
  return out;
}

function strip(value: unknown, prefix: string): string {
  const text = typeof value === "string" ? value : "";
  return text.startsWith(prefix) ? text.slice(prefix.length) : text;
}

/** One transcript line for a settled step. */
export function transcriptRecord(step: WireStep, index: number): JsonObject {
  const record: JsonObject = {
    step_index: index,
    source: strip(step.metadata.source, "CORTEX_STEP_SOURCE_"),
    type: strip(step.type, "CORTEX_STEP_TYPE_"),
    status: strip(step.status, "CORTEX_STEP_STATUS_"),
    created_at: asString(step.metadata.createdAt) ?? "",
    content: contentOf(step),
  };
  const planner = asObject(step.plannerResponse);
  const thinking = asString(planner?.thinking);
  if (thinking !== undefined && thinking !== "") record.thinking = thinking;
  const calls = (planner?.toolCalls ?? []) as JsonObject[];
  if (calls.length > 0) {
    record.tool_calls = calls.map((call) => ({ name: asString(call.name) ?? "", args: parseArgs(asString(call.argumentsJson)) }));
  }
  return record;
}

function parseArgs(json: string | undefined): unknown {
  try {
    return JSON.parse(json ?? "{}") as unknown;
  } catch {
    return {};
  }
}

function contentOf(step: WireStep): string {
  switch (step.type) {
    case STEP_TYPE.USER_INPUT:
      return `<USER_REQUEST>\n${String(asObject(step.userInput)?.userResponse ?? "")}\n</USER_REQUEST>`;
    case STEP_TYPE.PLANNER_RESPONSE: {
      const planner = asObject(step.plannerResponse);
      return asString(planner?.response) ?? asString(planner?.modifiedResponse) ?? "";
    }
    case STEP_TYPE.RUN_COMMAND: {
      const run = asObject(step.runCommand);
      const output = asString(asObject(run?.combinedOutput)?.full) ?? "";
      return `${asString(run?.commandLine) ?? ""}${output === "" ? "" : `\n${output}`}`;
    }
    default: {
      const error = asObject(step.error);
      return asString(error?.userErrorMessage) ?? "";
    }
  }
}
