/**
 * The mapper's event contract: one discriminated union on `type`, with zod
 * schemas so other layers (the HTTP server) can validate what they forward.
 * Field-by-field documentation with examples lives in `docs/events.md`.
 */
import { z } from "zod";

const base = {
  /** The agy conversation (cascade) the event belongs to. */
  conversationId: z.string(),
};

/** Fields of events that come from one trajectory step. */
const fromStep = {
  ...base,
  /** The step's trajectory; the conversation id when agy sent none. */
  trajectoryId: z.string(),
  /** The step's index; absent only for a USER_INPUT step whose position is unknown. */
  stepIndex: z.number().int().nonnegative().optional(),
};

export const UserMessageEventSchema = z.object({
  type: z.literal("user_message"),
  ...fromStep,
  text: z.string(),
});

export const MessageDeltaEventSchema = z.object({
  type: z.literal("message_delta"),
  ...fromStep,
  /** Equals the `messageId` of the committed `message` of the same step. */
  messageId: z.string(),
  /** Per-step chunk counter: starts at 0, strictly increases, never a byte offset. */
  index: z.number().int().nonnegative(),
  /** Text to append, or with `replace` the whole text so far. */
  text: z.string(),
  /** True when `text` replaces everything received so far for this message (agy rewrote it). */
  replace: z.boolean(),
  /** True on the last delta of the step, sent when the step commits (text may be empty). */
  final: z.boolean(),
});

export const ReasoningDeltaEventSchema = z.object({
  type: z.literal("reasoning_delta"),
  ...fromStep,
  messageId: z.string(),
  index: z.number().int().nonnegative(),
  text: z.string(),
  replace: z.boolean(),
  /** True on the first reasoning delta of the step. */
  started: z.boolean(),
});

export const MessageEventSchema = z.object({
  type: z.literal("message"),
  ...fromStep,
  messageId: z.string(),
  role: z.literal("assistant"),
  text: z.string(),
  /** True when the text is our marker for a planner that ended in ERROR, or an error agy showed the user. */
  failed: z.boolean(),
  /**
   * agy's `plannerResponse.stopReason` when it is not a normal end (e.g.
   * `STOP_REASON_MAX_TOKENS`, `STOP_REASON_CONTENT_FILTER`): the text may be cut short.
   */
  stopReason: z.string().optional(),
  /**
   * True when the planner was stopped (CANCELED, INTERRUPTED or CLEARED) before it finished:
   * `text` is what agy had committed of the answer when it stopped. Absent otherwise.
   */
  interrupted: z.literal(true).optional(),
});

export const FunctionCallEventSchema = z.object({
  type: z.literal("function_call"),
  ...fromStep,
  /** `agy_call_<trajectoryId>_<stepIndex>`: identical for the poll and stream projections of a step. */
  callId: z.string(),
  /** agy's tool name, e.g. `run_command`, `list_dir`, `manage_subagents`. */
  name: z.string(),
  /**
   * Compact JSON object text of the arguments, without `toolAction`/`toolSummary` —
   * or, with `argumentsError`, the model's raw text that is not valid JSON.
   */
  arguments: z.string(),
  /** agy's parse error when the model's arguments were not valid JSON (`arguments` is then the raw text). */
  argumentsError: z.string().optional(),
  /**
   * Not set by the tracker: agy's own short tool-call id is in the poll projection only, so a
   * live event and its replay could not agree on it. Kept so that older events still validate.
   */
  agyToolCallId: z.string().optional(),
  /** agy's human description of what the tool does (`toolAction`), when present. */
  description: z.string().optional(),
});

export const FunctionCallOutputEventSchema = z.object({
  type: z.literal("function_call_output"),
  ...fromStep,
  callId: z.string(),
  name: z.string(),
  output: z.string(),
  /** True unless the step ended DONE and ran: a failed, cancelled or declined call is an error. */
  isError: z.boolean(),
  /** The step's terminal status suffix, e.g. `DONE`, `ERROR`. */
  stepStatus: z.string(),
  /**
   * True when the user declined the call at its gate, so it did not run (the step records a
   * deny: an answer or permission grant without `allow`/`confirm`). Absent otherwise.
   */
  declined: z.literal(true).optional(),
});

/** The `requestedInteraction` variants answered with allow/deny, besides `permission` itself. */
export const PermissionVariantSchema = z.enum(["runCommand", "filePermission"]);
export type PermissionVariant = z.infer<typeof PermissionVariantSchema>;

export const PermissionRequestSchema = z.object({
  kind: z.literal("permission"),
  /** The `requestedInteraction` variant when it is not `permission` (absent for `permission`). */
  variant: PermissionVariantSchema.optional(),
  /** e.g. `command`, `file`. */
  action: z.string(),
  /** e.g. the command line. */
  target: z.string(),
  description: z.string(),
  /** Where a command runs (`runCommand.cwd`), which may differ from agy's own directory; absent when agy sends none. */
  cwd: z.string().optional(),
  suggestedPersistPattern: z.string().optional(),
  persistSuggestionType: z.string().optional(),
});

export const QuestionOptionSchema = z.object({ id: z.string(), text: z.string() });

export const QuestionRequestSchema = z.object({
  kind: z.literal("question"),
  questions: z.array(
    z.object({
      question: z.string(),
      options: z.array(QuestionOptionSchema),
      multiSelect: z.boolean(),
    }),
  ),
});

/** Plain JSON (what agy sent, copied with bounded depth and size). */
export const JsonRecordSchema = z.record(z.string(), z.json());
export type JsonRecord = z.infer<typeof JsonRecordSchema>;

/** A gate agy-bridge cannot answer over RPC: a person answers it in the agy TUI. */
export const OtherRequestSchema = z.object({
  kind: z.literal("other"),
  /** The `requestedInteraction` variant's name, e.g. `elicitation`, `mcp`; `""` when the block names none. */
  variant: z.string(),
  /** The variant's block as agy sent it (plain JSON; `{}` when it could not be copied). */
  spec: JsonRecordSchema,
});

export const InteractionRequestSchema = z.discriminatedUnion("kind", [PermissionRequestSchema, QuestionRequestSchema, OtherRequestSchema]);
export type InteractionRequest = z.infer<typeof InteractionRequestSchema>;

export const InteractionRequestedEventSchema = z.object({
  type: z.literal("interaction_requested"),
  ...fromStep,
  stepIndex: z.number().int().nonnegative(),
  /** `int_` + FNV-1a 64 hex of (conversationId, trajectoryId, stepIndex): a retry step gets a new id. */
  interactionId: z.string(),
  /** The step type suffix, e.g. `RUN_COMMAND`, `ASK_QUESTION`. */
  stepType: z.string(),
  /** The function_call id the step will have once it settles. */
  callId: z.string(),
  request: InteractionRequestSchema,
  /**
   * Set by a session that applies a policy (docs/policy.md): the policy's
   * verdict, decided before the event was published. `approve` and `deny`
   * are the policy's to deliver: nobody else may answer the request, and it
   * is not pending for a person. Absent without a policy (the mapper never sets it).
   */
  policy: z.object({ decision: z.enum(["approve", "deny", "ask"]), rule: z.string().nullable() }).optional(),
});

/**
 * How a wait ended, from what the step records: `approved`/`denied` for a permission gate whose
 * verdict the step shows, `answered` for a question (or a gate whose verdict it does not show),
 * `timed_out` for agy's own timeout, `cancelled` for a step stopped or replaced while waiting.
 */
export const InteractionOutcomeSchema = z.enum(["approved", "denied", "answered", "timed_out", "cancelled"]);
export type InteractionOutcome = z.infer<typeof InteractionOutcomeSchema>;

export const InteractionResolvedEventSchema = z.object({
  type: z.literal("interaction_resolved"),
  ...fromStep,
  stepIndex: z.number().int().nonnegative(),
  interactionId: z.string(),
  kind: z.enum(["permission", "question", "other"]),
  outcome: InteractionOutcomeSchema,
  /** The step status suffix that ended the wait, e.g. `DONE`, `RUNNING`, `ERROR`. */
  stepStatus: z.string(),
  /** agy's echo of the delivered answer (`completedInteractions[].response`), when present. */
  response: JsonRecordSchema.optional(),
  /**
   * Who answered, when this agy-bridge session delivered the answer:
   * `policy:<rule id>`, `policy:default`, `cli`, `http:<token name>`, `page`.
   * Absent when the answer came from elsewhere (agy's TUI, another process)
   * or the resolution was read from history.
   */
  decidedBy: z.string().optional(),
});

/**
 * Session layer, with a policy: what delivering the policy's approve or deny
 * came to — the second of the two policy stages an interaction goes through
 * (the first is `interaction_requested.policy`, decided before the request
 * was published). Once per request the policy approved or denied, after agy
 * answered the delivery (docs/events.md).
 */
export const PolicyDeliveredEventSchema = z.object({
  type: z.literal("policy_delivered"),
  ...fromStep,
  stepIndex: z.number().int().nonnegative(),
  interactionId: z.string(),
  decision: z.enum(["approve", "deny"]),
  /** The rule that decided; null for the policy's default. */
  rule: z.string().nullable(),
  /** `policy:<rule id>` or `policy:default`, as on the resolution it causes. */
  decidedBy: z.string(),
  /**
   * `delivered`: agy took the answer. `already_resolved`, `timed_out`,
   * `not_found`: nothing was sent (answered elsewhere first, timed out,
   * gone). `failed`: the delivery itself failed (agy's server refused it or
   * could not be reached), so the request may still be waiting: only agy's
   * own TUI can answer it now, as nobody else may answer what the policy decided.
   */
  result: z.enum(["delivered", "already_resolved", "timed_out", "not_found", "failed"]),
  /** One sentence for any result but `delivered`. */
  reason: z.string().optional(),
});

export const StatusSchema = z.enum(["running", "waiting", "idle", "failed"]);
export type Status = z.infer<typeof StatusSchema>;

export const StatusReasonSchema = z.enum([
  "turn_started",
  "turn_completed",
  "turn_failed",
  "interaction_pending",
  "interaction_resolved",
  "run_idle",
  /** Session layer (status `failed`): agy's language server is gone (exited, or unreachable and not found again). */
  "server_gone",
  /**
   * Session layer (status `waiting`, `waitingFor` `background_task`): the wire says idle while agy's
   * status row shows `N task(s)`, read off its pane (docs/events.md).
   */
  "background_task_running",
  /** Session layer (status `idle`): the status row's `N task(s)` went away after `background_task_running`. */
  "background_task_ended",
]);
export type StatusReason = z.infer<typeof StatusReasonSchema>;

/**
 * What a `waiting` session waits for: `permission` (a command or other allow/deny gate), `file`
 * (agy's file gate), `question` (agy asks and offers options), `tui_prompt` (a gate only agy's TUI
 * can answer), `background_task` (the wire says idle while agy's TUI status row shows `N task(s)`).
 */
export const WaitingForSchema = z.enum(["permission", "file", "question", "tui_prompt", "background_task"]);
export type WaitingFor = z.infer<typeof WaitingForSchema>;

export const StatusEventSchema = z.object({
  type: z.literal("status"),
  ...base,
  trajectoryId: z.string().optional(),
  stepIndex: z.number().int().nonnegative().optional(),
  status: StatusSchema,
  reason: StatusReasonSchema,
  /** With status `waiting`: what the session waits for, from the interaction that opened the wait (`background_task`: from agy's status row). Absent otherwise. */
  waitingFor: WaitingForSchema.optional(),
});

export const UsageEventSchema = z.object({
  type: z.literal("usage"),
  ...fromStep,
  /** Running totals for this tracker (set semantics: replace, do not add). */
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  thinkingOutputTokens: z.number().int().nonnegative(),
  cacheReadTokens: z.number().int().nonnegative(),
  /** The model enum of the step that moved the totals, e.g. `MODEL_PLACEHOLDER_M20`. */
  model: z.string().optional(),
});

export const ModelChangedEventSchema = z.object({
  type: z.literal("model_changed"),
  ...fromStep,
  /** agy's model enum name (the display name is the session layer's business). */
  model: z.string(),
  previousModel: z.string().optional(),
  /** The name agy's model catalog gives the enum, added by the session layer when agy offers one. */
  displayName: z.string().optional(),
});

export const ConversationRotatedEventSchema = z.object({
  type: z.literal("conversation_rotated"),
  /** The new conversation. */
  ...base,
  previousConversationId: z.string(),
});

/**
 * Session layer: the boundary between what was already there when a consumer
 * started (the replayed history, or the interactions open then) and what
 * happens live. Each consumer of `AgySession.events()` gets it exactly once.
 */
export const HistoryEndEventSchema = z.object({
  type: z.literal("history_end"),
  ...base,
  /** agy's version as the session knows it then (`1.2.10`); absent when unknown (null is accepted and means the same). */
  agyVersion: z.string().nullable().optional(),
});

/** Where a session learned agy's version: its process, its language server, or the banner on its screen. */
export const AgyVersionSourceSchema = z.enum(["process", "server", "screen"]);

/**
 * Session layer: the agy behind the session is another version than before
 * (a self-update restarted it), read again after a reconnect. Once per
 * change; `from`/`to` null when unknown.
 */
export const AgyVersionChangedEventSchema = z.object({
  type: z.literal("agy_version_changed"),
  ...base,
  from: z.string().nullable(),
  to: z.string().nullable(),
  /** Where `to` was read (null when it is unknown). */
  source: AgyVersionSourceSchema.nullable(),
  /** The agy process read, when known (a restart gives a new one). */
  pid: z.number().int().positive().optional(),
});

export const DiagnosticCodeSchema = z.enum([
  "invalid_step",
  "unknown_step_type",
  "frame_length_mismatch",
  "foreign_conversation",
  "non_prefix_rewrite",
  "index_mismatch",
  "interaction_unusable",
  "invalid_index",
  "invalid_number",
  "invalid_tool_arguments",
  "unserializable_value",
  "agy_error",
  /** Session layer: a step from the stream lacked fields its events need and could not be read in full. */
  "incomplete_step",
  /** Session layer: a consumer fell too far behind; its backlog was dropped and a resync follows. */
  "events_dropped",
  /** Session layer: the stream or a read failed; the session keeps trying. */
  "connection_lost",
  /**
   * Session layer: agy kept its dialog drawn after an answer over RPC and no
   * key is known to close it safely on this agy version; it was left for a
   * person, and `sendTurn` refuses until it is gone (docs/tmux.md).
   */
  "stale_dialog",
  /** Session layer: agy's tmux pane vanished (or could not be read, again and again); its screen is no longer read for background tasks. */
  "pane_gone",
  /** Fleet: an entry of agy:events:<host>:<conversationId> that is not a valid event; it was skipped, the entries after it are read (docs/fleet.md). */
  "invalid_entry",
]);
export type DiagnosticCode = z.infer<typeof DiagnosticCodeSchema>;

export const DiagnosticEventSchema = z.object({
  type: z.literal("diagnostic"),
  ...base,
  trajectoryId: z.string().optional(),
  stepIndex: z.number().int().nonnegative().optional(),
  code: DiagnosticCodeSchema,
  /** One human sentence. */
  message: z.string(),
});

/** Every event the mapper emits. */
export const MapperEventSchema = z.discriminatedUnion("type", [
  UserMessageEventSchema,
  MessageDeltaEventSchema,
  ReasoningDeltaEventSchema,
  MessageEventSchema,
  FunctionCallEventSchema,
  FunctionCallOutputEventSchema,
  InteractionRequestedEventSchema,
  InteractionResolvedEventSchema,
  PolicyDeliveredEventSchema,
  StatusEventSchema,
  UsageEventSchema,
  ModelChangedEventSchema,
  ConversationRotatedEventSchema,
  HistoryEndEventSchema,
  DiagnosticEventSchema,
  AgyVersionChangedEventSchema,
]);

export type MapperEvent = z.infer<typeof MapperEventSchema>;
export type MapperEventType = MapperEvent["type"];
/** The member of the union with the given `type`. */
export type EventOf<T extends MapperEventType> = Extract<MapperEvent, { type: T }>;
