/**
 * The session runner's contract: how a session is attached, what its effects
 * are (discovery, tmux, RPC client) and the typed results of its actions.
 */
import type { SummariesBoard } from "./summaries-board.js";
import type { PaneRef, ServerBinding, ServerQuery } from "../discovery/types.js";
import type {
  ClosePromptOptions,
  ClosePromptResult,
  DeliverTurnOptions,
  PromptActionOptions,
  TuiAnswerResult,
  TuiChoice,
  TurnDeliveryResult,
} from "../tmux/types.js";
import type { ScreenModel } from "../tmux/screen-types.js";
import type { AgyRpcClient, AgyRpcClientOptions } from "../rpc/client.js";
import type { MapperEvent } from "../mapper/index.js";
import type { Policy } from "../policy/index.js";
import type { PolicyRunOptions } from "./policy-runner.js";
import type { LedgerChange, LedgerSnapshot } from "./interaction-ledger.js";

/** Finds the language server for a query (discovery's `findServer`). */
export type Locate = (query: ServerQuery) => Promise<ServerBinding>;

/** Types turns into agy's TUI and acts on its dialogs (the tmux driver). */
export interface TurnDriver {
  deliverTurn(target: PaneRef, text: string, options: DeliverTurnOptions): Promise<TurnDeliveryResult>;
  /** Closes the dialog agy may keep open after an RPC answer, only with a key the key table marks safe for a settled step (spike-notes §5.4, K7). */
  closePrompt(target: PaneRef, options?: ClosePromptOptions): Promise<ClosePromptResult>;
  /** Answers the dialog on screen with the keys the key table gives the agy version: a digit alone, or pointer moves and Enter; "No" by its label. */
  answerPrompt(target: PaneRef, choice: TuiChoice, options?: PromptActionOptions): Promise<TuiAnswerResult>;
  /** Reads the pane as the screen model (`readScreen`, spike-notes §13); optional so older fakes still fit. */
  readScreen?(target: PaneRef, options?: { signal?: AbortSignal }): Promise<ScreenModel>;
}

/** Which agy a session talks to: its version (null when unknown), where that came from, the pid read. */
export interface AgyVersionState {
  agyVersion: string | null;
  agyVersionSource: "process" | "server" | "screen" | null;
  /** The agy process the version was read from, when known. */
  pid?: number;
  /** The process is agy-bridge's simulator. */
  simulator: boolean;
}

/**
 * Reads agy's version for a session without starting agy (discovery's
 * `lookUpAgyVersion`): by the bound pid, else the URL's listener, else the
 * pane's banner. Never throws for "unknown".
 */
export type LocateVersion = (query: { pid?: number; url: string; pane?: PaneRef }, signal: AbortSignal) => Promise<AgyVersionState>;

/** The tmux pane that runs the agy with this pid, or undefined when none does (discovery's `findAgyPane`). */
export type LocatePane = (pid: number, signal?: AbortSignal) => Promise<PaneRef | undefined>;

/** Where an answer goes: over RPC (then agy's own dialog is closed with Escape), or typed in the TUI by moving its pointer. */
export type AnswerVia = "rpc" | "tui";

/** Makes an RPC client for a located server. */
export type ClientFactory = (options: AgyRpcClientOptions) => AgyRpcClient;

/** How the session reads the conversation: the stream (with fallbacks), or polling only. */
export type ReadMode = "stream" | "poll";

/** Which cheap call finds a gate that parked without a stream frame. */
export type ProbeKind = "summaries" | "tail";

export interface AttachOptions {
  /** The conversation to follow; default: the one discovery binds (the server's only or most recent). */
  conversationId?: string;
  /**
   * The tmux pane running agy: needed for `sendTurn`, to close the TUI's
   * prompt after an answer and to answer in the TUI. Without it, a session
   * bound by discovery finds the pane of the agy that owns the conversation.
   */
  pane?: PaneRef;
  /** Finds the pane of an agy pid when no `pane` is given; default discovery's tmux lookup; `false` never looks. */
  locatePane?: LocatePane | false;
  /** The language server's URL: skips discovery (it must be loopback). */
  url?: string | undefined;
  csrfToken?: string;
  /** Default `findServer` from discovery. */
  locate?: Locate;
  /**
   * Reads agy's version at attach and after every reconnect (a self-update
   * restarts agy); default discovery's `lookUpAgyVersion`; `false` never
   * reads it (the version stays what `agyVersion` or discovery's binding said).
   */
  locateVersion?: LocateVersion | false;
  /** agy's version as the caller's own discovery found it (with `url`, which skips discovery). */
  agyVersion?: string | null;
  /** Default the tmux driver. */
  turnDriver?: TurnDriver;
  /** Default `createAgyRpcClient`. */
  clientFactory?: ClientFactory;
  /** Default "stream". */
  mode?: ReadMode;
  /**
   * Default "tail": one `stepOffset` page from the first unsettled step, flat
   * in the history length (bench/session.bench.ts); "summaries" reads
   * `GetAllCascadeTrajectories.waitingSteps` and reconciles on a hit.
   */
  probe?: ProbeKind;
  /** How often a running turn that has been quiet this long is probed for a parked gate (ms); default 40. */
  probeIntervalMs?: number;
  /** Poll interval when the stream is down or `mode` is "poll" (ms); default 250. */
  pollIntervalMs?: number;
  /** Run-status / rotation check while no turn runs (ms); default 3000 (spike-notes §4.7, §4.10). */
  idleCheckIntervalMs?: number;
  /**
   * Where the run-status / rotation check's `GetAllCascadeTrajectories`
   * readings are shared with other sessions on the same agy server (one
   * reading per server per interval instead of one per session; never one
   * older than the session's latest events). Default: one board per process;
   * `createSummariesBoard()` gives a session readings of its own.
   */
  summariesBoard?: SummariesBoard;
  /** Events a consumer may fall behind by before it is resynchronised; default 10,000. */
  consumerBuffer?: number;
  /** Stream disconnects in a row (without a frame) before polling covers the gap; default 2. */
  pollAfterFailures?: number;
  /** Transport failures in a row before the server is located again; default 3. */
  relocateAfterFailures?: number;
  /**
   * Transport failures in a row (failed stream reconnects and reads, with no
   * call reaching agy between them) after which the server counts as gone;
   * default 10 (about 2 s after agy exits). It also counts as gone as soon as
   * `locate` finds no server for the conversation. Either way every consumer
   * gets a `status` `failed` with reason `server_gone`.
   */
  goneAfterFailures?: number;
  /**
   * After `server_gone`, keep following: go on retrying and asking `locate`
   * until the server is back (default false: the session stops following and
   * `events()` ends after the `status`; `close()` it).
   */
  relocate?: boolean;
  /**
   * A policy (docs/policy.md) applied to every request as it appears, from
   * the ones open at attach on: `approve` and `deny` are delivered through
   * the answer path, `ask` is left for a person.
   */
  policy?: Policy | Omit<PolicyRunOptions, "signal">;
  /**
   * Start following at attach (default true): the conversation so far is read
   * then, and events from that moment on are kept for the first consumer.
   * false defers reading to the first `events()` call (one-shot answers).
   */
  follow?: boolean;
  /**
   * Watch agy's status row for background tasks (default on; it needs the
   * pane, given or found, and a turn driver that reads the screen): while
   * the wire says `idle`, the pane is read every `intervalMs` (default
   * 2000), and `· N task(s)` there makes a `status` `waiting` with
   * `waitingFor: "background_task"`, `idle` again when it goes
   * (docs/events.md). `false` never reads the screen for it.
   */
  backgroundTasks?: boolean | { intervalMs?: number };
  /** Ends every reader and pending call. */
  signal?: AbortSignal;
}

/** The typed outcome of approve / deny / answer. */
export type AnswerResult =
  /**
   * The answer reached agy for the WAITING step at `stepIndex` (the captured
   * step or its timeout retry): over RPC, or with `via: "tui"` in agy's
   * dialog. `prompt` says what closing agy's own dialog did after an RPC
   * answer (absent when no pane is known).
   */
  | { result: "delivered"; stepIndex: number; via?: "tui"; prompt?: { result: ClosePromptResult["result"]; reason: string } }
  /** The step had already left WAITING by an answer (here, in the TUI, or by another caller); nothing was sent. */
  | { result: "already_resolved"; stepIndex: number }
  /** agy timed the prompt out and no retry of it is waiting; nothing was delivered. */
  | { result: "timed_out"; stepIndex: number }
  /** No interaction with that id exists in this conversation. */
  | { result: "not_found" }
  /**
   * The session's policy decided this request (`interaction_requested.policy`)
   * and delivers that answer itself: nobody else may answer it; nothing was sent.
   */
  | { result: "decided_by_policy"; decision: "approve" | "deny"; rule: string | null; reason: string };

/** The outcome of `interrupt()`. */
export type InterruptResult = { result: "cancelled" } | { result: "denied"; stepIndices: number[] } | { result: "idle" };

export interface ApproveOptions {
  /** Who decided (`cli`, `http:<token name>`, `page`, `policy:<rule id>`): carried on the `interaction_resolved` this delivery causes. */
  decidedBy?: string;
  /** A permission scope name, e.g. `PERMISSION_SCOPE_CONVERSATION` (newer builds). */
  scope?: string;
  /** Default `rpc` (a gate of kind `other`, which RPC cannot answer, goes to the TUI); `tui` answers in agy's dialog. */
  via?: AnswerVia;
  /** Not delivered: agy's approval carries no instruction (the front doors refuse one; see `instructionAllowed`). */
  instruction?: string;
}

export interface DenyOptions {
  /** Who decided (`cli`, `http:<token name>`, `page`, `policy:<rule id>`): carried on the `interaction_resolved` this delivery causes. */
  decidedBy?: string;
  /** An instruction for the model, sent with the deny (newer builds; not with `via: "tui"`). */
  instruction?: string;
  /** Default `rpc`; `tui` declines agy's dialog with Escape. */
  via?: AnswerVia;
}

export interface AnswerOptions {
  /** Who decided (`cli`, `http:<token name>`, `page`, `policy:<rule id>`): carried on the `interaction_resolved` this delivery causes. */
  decidedBy?: string;
  /** Option ids (`"1".."N"`) for the first question. */
  optionIds: string[];
  /** Free text for the first question (not with `via: "tui"`). */
  writeIn?: string;
  /** Default `rpc`; `tui` moves the dialog's pointer to the one chosen option and presses Enter. */
  via?: AnswerVia;
}

/** An interaction waiting on the user, as the session sees it now. */
export interface PendingSummary {
  interactionId: string;
  /** `other`: a gate only a person can answer, in the agy TUI. */
  kind: "permission" | "question" | "other";
  stepIndex: number;
  trajectoryId: string;
  stepType: string;
  /** The command line, or the first question's text. */
  summary: string;
}

export interface EventsOptions {
  signal?: AbortSignal;
  /**
   * The first consumer starts with the conversation as read at attach
   * (default true); false starts it at that moment, with the interactions
   * open then. Later consumers start at the present, with the open
   * interactions. Every consumer then gets one `history_end` event:
   * everything after it is live.
   */
  history?: boolean;
  /**
   * A background consumer (a policy runner, an audit writer) starts at the
   * present with the open interactions and leaves the conversation as read
   * at attach for the first foreground consumer.
   */
  background?: boolean;
}

/** An attached agy conversation: follow it, type into it, answer it, interrupt it. */
/**
 * The interactions a session has published, as the interaction ledger folds
 * them (docs/session.md, "Interactions"): what is open now, each request by id
 * (the last 1,000 resolved kept), its resolution, who decided it and the
 * policy's verdict.
 */
export interface SessionInteractions {
  /** A copy of the state now; changing it changes nothing in the session. */
  snapshot(): LedgerSnapshot;
  /** Hears each request opened and each resolution, as the session publishes them; returns the unsubscribe. */
  subscribe(listener: (change: LedgerChange) => void): () => void;
}

export interface AgySession {
  /** The conversation followed now (changes after a `/clear` rotation). */
  readonly conversationId: string;
  /**
   * The interactions this session has published (the ledger's fold). Present
   * on every session `AgySession.attach` returns; a stand-in may leave it out.
   */
  readonly interactions?: SessionInteractions;
  /** The server's URL now (changes when it is re-located). */
  readonly url: string;
  /** How discovery bound it, in a few words. */
  readonly how: string;
  /**
   * agy's version (`1.2.10`), learned without starting agy: from its process,
   * else its pane's banner; null when unknown. Read again after every
   * reconnect; a change is an `agy_version_changed` event (docs/events.md).
   */
  readonly agyVersion?: string | null;
  /** Where {@link agyVersion} came from, null when it is unknown. */
  readonly agyVersionSource?: AgyVersionState["agyVersionSource"];
  /** The agy is agy-bridge's simulator, not a real agy. */
  readonly simulator?: boolean;
  /**
   * Told each time the version changes (after `agy_version_changed` is
   * published); returns an unsubscribe. Optional on the interface so test
   * fakes need not implement it; `AgySession.attach` always does.
   */
  onVersion?(listener: (state: AgyVersionState) => void): () => void;
  /**
   * Mapper events: each transition once, across stream, reconnects, probes and
   * polls. Several consumers may iterate at once; a slow one gets a
   * `diagnostic` and a resync instead of blocking the others.
   */
  events(options?: EventsOptions): AsyncIterable<MapperEvent>;
  /**
   * Types a turn into the pane; refused while a step is WAITING or a prompt
   * holds the keyboard, and for a turn starting with `/` unless `slash`.
   */
  /**
   * `closeStale`: the person's explicit choice to close a dialog agy left
   * open for an answered step with Escape, where the key table knows no safe
   * key for it on this agy version (docs/tmux.md).
   */
  sendTurn(text: string, options?: { signal?: AbortSignal; slash?: boolean; closeStale?: boolean }): Promise<TurnDeliveryResult>;
  approve(interactionId: string, options?: ApproveOptions): Promise<AnswerResult>;
  deny(interactionId: string, options?: DenyOptions): Promise<AnswerResult>;
  answer(interactionId: string, options: AnswerOptions): Promise<AnswerResult>;
  /** Interactions WAITING right now (a fresh read). */
  pending(): Promise<PendingSummary[]>;
  /**
   * The whole conversation read afresh from agy through a new tracker, as a
   * replay gives it (no deltas, every gate requested and resolved or still
   * open): what a consumer that lost its place rebuilds from. The session
   * keeps no history itself (issue 23).
   */
  readConversation(options?: { signal?: AbortSignal }): Promise<MapperEvent[]>;
  /** agy's workspace root for the conversation (`GetConversationMetadata`), or undefined when agy names none. */
  workspace(): Promise<string | undefined>;
  /** Cancels running work, or denies what is WAITING. */
  interrupt(): Promise<InterruptResult>;
  /** agy's pane read as the screen model (what `agy-bridge screen` prints); fails without a pane. */
  screen(options?: { signal?: AbortSignal }): Promise<ScreenModel>;
  close(): Promise<void>;
}
