/**
 * agy-bridge: supervise attended Google Antigravity `agy` sessions from code.
 *
 * This is the supported surface, listed by name so that every export is a
 * choice (test/architecture/public-api.test.ts holds the list). Importing it
 * has no side effects. Wire internals (envelope codec, schemas, method table,
 * wire names) are in `agy-bridge/protocol`; the simulator is `agy-bridge/sim`.
 * See docs/architecture.md.
 */

// Errors: one root class with a fixed code union; subclasses where callers branch.
export {
  /** The root of every error agy-bridge throws; branch on `code`. */
  AgyBridgeError,
  /** A failed RPC call: HTTP status, Connect code and the server's message (secrets scrubbed). */
  RpcError,
  /** A tmux command failed or the pane is gone; branch on `failure`. */
  TmuxError,
  /** True when `value` is an {@link AgyBridgeError}, optionally with the given code. */
  isAgyBridgeError,
} from "./errors.js";
export type { AgyBridgeErrorOptions, ErrorCode, RpcErrorDetails, TmuxFailure } from "./errors.js";

// The RPC client for agy's language server (loopback only).
export {
  /** Creates a Connect JSON client for one language server; refuses non-loopback URLs. */
  createAgyRpcClient,
  /** Throws `not_loopback` unless the URL's host is a loopback address. */
  assertLoopbackUrl,
  /** True for `localhost`, 127/8 and `::1`. */
  isLoopbackHost,
  /** Follows `StreamAgentStateUpdates` across disconnects, with backoff and a read-idle timeout. */
  watchAgentStateUpdates,
  /** The watcher's default reconnect backoff. */
  DEFAULT_WATCH_BACKOFF,
} from "./rpc/index.js";
export type {
  AgyRpcClient,
  AgyRpcClientOptions,
  CallOptions,
  CancelInvocationInput,
  CancelStepsInput,
  ConversationInput,
  FilePermissionAnswer,
  HandleInteractionInput,
  InteractionTarget,
  PermissionAnswer,
  QuestionAnswer,
  QuestionResponse,
  RunCommandAnswer,
  SendMessageInput,
  StartCascadeInput,
  StepsInput,
  StreamAgentStateUpdatesInput,
  StreamCallOptions,
  StreamSource,
  WatchBackoff,
  WatchEvent,
  WatchOptions,
  WatchTimers,
} from "./rpc/index.js";

// What the client returns: agy's wire shapes, loosely typed (unknown fields survive).
export type {
  AllTrajectoriesResponse,
  ConversationMetadataResponse,
  JsonObject,
  ModelCatalog,
  Step,
  StreamUpdate,
  TrajectoryResponse,
} from "./protocol/wire-schemas.js";

// The mapper: steps in, documented events out (docs/events.md). Pure.
export {
  /** Creates the per-conversation tracker that turns snapshots and stream frames into events. */
  createTrajectoryTracker,
  /** The zod schema of every event, for consumers that validate what they receive. */
  MapperEventSchema,
  /** The deterministic `callId` of a tool step. */
  callIdFor,
  /** The deterministic `interactionId` of a WAITING step. */
  interactionIdFor,
  /** The deterministic `messageId` of a planner step. */
  messageIdFor,
  /** What a session waits for (`waitingFor`) when this request opens the wait. */
  waitingForRequest,
  /** The `waitingFor` word of the oldest request still open for a person, if any. */
  currentWaitingFor,
} from "./mapper/index.js";
export type {
  DiagnosticCode,
  EventOf,
  InteractionOutcome,
  InteractionRequest,
  MapperEvent,
  MapperEventType,
  PendingInteraction,
  RunStatusInput,
  SnapshotInput,
  Status,
  StatusReason,
  TrajectoryTracker,
  TrajectoryTrackerOptions,
  WaitingFor,
} from "./mapper/index.js";

// Discovery: find agy's language servers (process, listeners, transport, CSRF token).
export {
  /** Lists every agy language server on this machine; what it could not see goes into the report, never a throw. */
  discoverServers,
  /** Finds one server: a given URL, the conversation's owner, the pane's agy, or the only one; else throws `DiscoveryError`. */
  findServer,
  /** Discovery could not settle on one server; lists the candidates it saw. */
  DiscoveryError,
} from "./discovery/index.js";
export type {
  DiscoverOptions,
  DiscoveredConversation,
  DiscoveredListener,
  DiscoveredServer,
  DiscoveryCandidate,
  DiscoveryFailure,
  DiscoveryResult,
  ListenerSource,
  ListenerTransport,
  PaneRef,
  ProcRead,
  ProcSource,
  RunCommand,
  RunResult,
  ServerBinding,
  ServerQuery,
} from "./discovery/index.js";

// tmux: type turns into agy's TUI and press its prompt keys (spawn with argv, never a shell).
export {
  /** Creates a driver for one tmux server; nothing runs until a method is called. */
  createTmuxDriver,
  /** Reads one `capture-pane` text of agy's TUI into a {@link ScreenModel}; pure over text. */
  readScreen,
} from "./tmux/index.js";
export type {
  CommandOptions,
  ComposerState,
  DeliverTurnOptions,
  PaneInfo,
  PermissionMode,
  ClosePromptResult,
  TuiAnswerResult,
  TuiChoice,
  ScreenModel,
  ScreenOption,
  ScreenPrompt,
  ScreenPromptKind,
  ScreenState,
  TmuxDriver,
  TmuxDriverOptions,
  TmuxExec,
  TmuxExecOptions,
  TmuxExecResult,
  TmuxSocket,
  TurnDeliveryResult,
} from "./tmux/index.js";

// Sessions: supervise one attended agy conversation end to end.
export {
  /** `AgySession.attach(options)`: bind to a conversation, follow it as events, send turns, answer, interrupt. */
  AgySession,
  /** Applies a policy to a session's requests as they appear (`attach({ policy })` does this for you). */
  runPolicy,
  /** A board of run-status readings of its own (`attach({ summariesBoard })`); sessions share one per process by default. */
  createSummariesBoard,
  /** The interaction ledger (`session.interactions` is one): a pure fold of events into open requests and resolutions. */
  createInteractionLedger,
} from "./session/index.js";
export type {
  AgySessionApi,
  AnswerOptions,
  AnswerResult,
  ApproveOptions,
  AttachOptions,
  ClientFactory,
  DenyOptions,
  EventsOptions,
  InterruptResult,
  Locate,
  PendingSummary,
  ProbeKind,
  PolicyOutcome,
  PolicyRun,
  PolicyRunOptions,
  ReadMode,
  SessionInteractions,
  InteractionLedger,
  LedgerChange,
  LedgerEntry,
  LedgerSnapshot,
  OpenRequest,
  SummariesBoard,
  SummariesReading,
  TurnDriver,
} from "./session/index.js";

// Policy files are read and decided by `agy-bridge/policy` (parsePolicy, decide,
// analyseCommandLine): its shell parser loads only for programs that use it.
export type { Policy, PolicyDecision } from "./policy/index.js";

// The audit log of decisions (docs/policy.md#the-audit-log).
export {
  /** An append-only, fsynced, size-rotated JSON-lines log of decisions. */
  createAuditLog,
  /** Reads the log and its rotated files, oldest first. */
  readAuditLog,
  /** `$XDG_STATE_HOME/agy-bridge/audit.jsonl`, else under `~/.local/state`. */
  defaultAuditPath,
  /** Records what a supervising process sees: policy decisions, its own answers, answers given in the TUI. */
  createSessionAuditor,
} from "./audit/index.js";
export type { AuditEntry, AuditLog, AuditRecord, SessionAuditor } from "./audit/index.js";
