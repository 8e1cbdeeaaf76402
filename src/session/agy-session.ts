/**
 * `AgySession.attach`: binds to an attended agy conversation (through
 * discovery unless a URL is given) and supervises it — events, turns typed
 * through tmux, answers over RPC, interrupts.
 */
import { AgyBridgeError } from "../errors.js";
import { asObject, asString } from "../protocol/json.js";
import { RUN_STATUS } from "../protocol/wire-names.js";
import { createAgyRpcClient, type AgyRpcClient } from "../rpc/client.js";
import type { EventOf, MapperEvent } from "../mapper/index.js";
import type { PaneRef, ServerBinding } from "../discovery/types.js";
import type { ClosePromptResult, TurnDeliveryResult } from "../tmux/types.js";
import type { SettledAnswer } from "../tmux/key-plans.js";
import type { ScreenModel } from "../tmux/screen-types.js";
import { createConversationReader, type ConversationReader, type RelocateOutcome } from "./conversation-reader.js";
import {
  deliverVerdict,
  findInteraction,
  readPending,
  variantOf,
  type CapturedInteraction,
  type DeliveryContext,
  type Verdict,
} from "./interaction-delivery.js";
import { gateIdentity } from "./gate-identity.js";
import { activityOf, isChildConversation } from "./rotation.js";
import { defaultLocate, defaultLocatePane, defaultTurnDriver } from "./session-effects.js";
import { answerInTui } from "./tui-answer.js";
import { loadPolicyJudge, policyDeliveredEvent, type PolicyJudge } from "./policy-runner.js";
import { SessionEvents } from "./session-events.js";
import { createInteractionLedger, type LedgerChange } from "./interaction-ledger.js";
import { BackgroundTaskWatch, paneKey, SharedRowReadings } from "./background-tasks.js";
import { ResolutionAttribution } from "./resolution-attribution.js";
import { defaultLocateVersion, VersionWatch } from "./version-watch.js";
import type {
  AgySession as AgySessionApi,
  AnswerOptions,
  AnswerResult,
  AnswerVia,
  ApproveOptions,
  AgyVersionState,
  AttachOptions,
  ClientFactory,
  DenyOptions,
  EventsOptions,
  InterruptResult,
  Locate,
  PendingSummary,
  SessionInteractions,
  TurnDriver,
} from "./types.js";

/** How many gates found by re-reading the conversation a session keeps (`#found`). */
const FOUND_KEPT = 64;

/** A gate as the answer path needs it, from its request. */
function capturedOf(event: EventOf<"interaction_requested">): CapturedInteraction {
  return {
    interactionId: event.interactionId,
    conversationId: event.conversationId,
    trajectoryId: event.trajectoryId,
    stepIndex: event.stepIndex,
    kind: event.request.kind,
    variant: variantOf(event.request),
    identity: gateIdentity(event.request),
  };
}

/** Status-row readings shared by every session of this process on the same pane (background-tasks.ts). */
const ROW_READINGS = new SharedRowReadings();

const DEFAULTS = {
  probeIntervalMs: 40,
  pollIntervalMs: 250,
  idleCheckIntervalMs: 3000,
  consumerBuffer: 10_000,
  pollAfterFailures: 2,
  relocateAfterFailures: 3,
  goneAfterFailures: 10,
  backgroundTaskIntervalMs: 2000,
} as const;

/** How long after typing a turn the reader probes even before the stream shows it. */
const TURN_EXPECT_MS = 10_000;
/** How long `verifyStarted` waits for the new USER_INPUT step. */
const VERIFY_TURN_MS = 5_000;

/** An attached agy conversation (see {@link AgySession.attach}). */
export type AgySession = AgySessionApi;

/** Attaches to a conversation. */
export const AgySession = {
  /**
   * Finds the server (discovery unless `url` is given), reads the
   * conversation and starts following it (unless `follow` is false).
   */
  async attach(options: AttachOptions = {}): Promise<AgySessionApi> {
    const session = new Session(options);
    try {
      await session.bind();
      if (options.policy !== undefined) {
        const policy = "policy" in options.policy ? options.policy : { policy: options.policy };
        // Without a workspace given, agy's own (GetConversationMetadata) is `{workspace}`.
        let workspace = policy.context?.workspace;
        if (workspace === undefined) workspace = await session.workspace().catch(() => undefined);
        const context = { ...policy.context, ...(workspace === undefined ? {} : { workspace }) };
        // Before the first read: every request is decided before it is published (docs/policy.md).
        session.usePolicy(await loadPolicyJudge({ ...policy, context }));
      }
      if (options.follow !== false) await session.follow();
    } catch (error) {
      await session.close();
      throw error;
    }
    return session;
  },
};

class Session implements AgySessionApi {
  readonly #o: AttachOptions;
  readonly #locate: Locate;
  readonly #clientFactory: ClientFactory;
  readonly #pane: PaneRef | undefined;
  /** The pane found for the bound agy's pid when none was given (looked up once per pid). */
  #foundPane: { pid: number; pane: Promise<PaneRef | undefined> } | undefined;
  readonly #closed = new AbortController();
  readonly #events: SessionEvents;
  #turnDriver: TurnDriver | undefined;
  #binding!: ServerBinding;
  #client: AgyRpcClient | undefined;
  #conversationId!: string;
  #reader: ConversationReader | undefined;
  #readerStart: Promise<void> | undefined;
  /** The events of the read at attach, until the first consumer takes them (then dropped: a long history costs nothing idle). */
  #history: MapperEvent[] | undefined;
  /**
   * Gates found by re-reading the conversation, for ids the ledger no longer
   * holds (the newest few): every other gate is read off the ledger's
   * request, so a long history costs no second copy of its gates.
   */
  readonly #found = new Map<string, CapturedInteraction>();
  readonly #settled = new Map<string, AnswerResult>();
  readonly #inFlight = new Map<string, Promise<AnswerResult>>();
  /** Who decided each interaction this session delivered an answer to (`decidedBy` on its resolution). */
  readonly #attribution: ResolutionAttribution;
  /** The policy attached, if any: it decides each request before the request is published. */
  #judge: PolicyJudge | undefined;
  /** The policy's verdict on each request it decided (`interaction_requested.policy`). */
  readonly #verdicts = new Map<string, NonNullable<EventOf<"interaction_requested">["policy"]>>();
  /** Every interaction this session has published, folded (interaction-ledger.ts); what `interactions` reads. */
  readonly #ledger = createInteractionLedger({ retain: 100 });
  readonly #ledgerListeners = new Set<(change: LedgerChange) => void>();
  /** Which agy this is, read at attach and after every reconnect (version-watch.ts). */
  readonly #version: VersionWatch;
  /** agy's status row read for background tasks while the wire says idle (background-tasks.ts); undefined when turned off. */
  readonly #tasks: BackgroundTaskWatch | undefined;
  /**
   * The first read of agy's version for a given URL (discovery's binding has
   * it already). A following session waits for it at attach; a one-shot one
   * (`follow: false`) starts it only when something needs the version — the
   * TUI's keys, closing a dialog, or following — so an RPC answer does not
   * wait ~100 ms for a scan of /proc it never uses (issue 36).
   */
  #versionRead: Promise<void> | undefined;

  constructor(options: AttachOptions) {
    this.#o = options;
    this.#locate = options.locate ?? defaultLocate;
    this.#clientFactory = options.clientFactory ?? createAgyRpcClient;
    this.#pane = options.pane;
    this.#turnDriver = options.turnDriver;
    this.#events = new SessionEvents({
      capacity: options.consumerBuffer ?? DEFAULTS.consumerBuffer,
      conversationId: () => this.conversationId,
      pending: () => this.#reader?.tracker.pendingInteractions() ?? [],
      agyVersion: () => this.#version.state.agyVersion,
    });
    this.#version = new VersionWatch({
      where: async () => {
        const pane = await this.#paneRef().catch(() => undefined);
        return { url: this.#binding.url, ...(this.#binding.pid === undefined ? {} : { pid: this.#binding.pid }), ...(pane === undefined ? {} : { pane }) };
      },
      locate: options.locateVersion ?? defaultLocateVersion,
      conversationId: () => this.conversationId,
      publish: (events) => this.#events.publish(events),
      signal: this.#closed.signal,
    });
    // What consumers are given is what the ledger folds: after attribution named who decided.
    this.#attribution = new ResolutionAttribution((events) => {
      for (const event of events) this.#fold(event);
      this.#events.publish(this.#pass(events));
    });
    this.#tasks = options.backgroundTasks === false ? undefined : this.#backgroundTasks(options.backgroundTasks);
    if (options.signal !== undefined) {
      // Removed on close: a caller (serve) may hand one signal to many sessions.
      const signal = options.signal;
      const onAbort = () => void this.close();
      signal.addEventListener("abort", onAbort, { once: true });
      this.#closed.signal.addEventListener("abort", () => signal.removeEventListener("abort", onAbort), { once: true });
    }
  }

  #backgroundTasks(option: true | { intervalMs?: number } | undefined): BackgroundTaskWatch {
    const intervalMs = (typeof option === "object" ? option.intervalMs : undefined) ?? DEFAULTS.backgroundTaskIntervalMs;
    if (typeof intervalMs !== "number" || !Number.isFinite(intervalMs) || intervalMs < 10) {
      throw new AgyBridgeError("invalid_argument", `backgroundTasks.intervalMs must be a number of milliseconds, at least 10; got ${String(intervalMs)}.`);
    }
    const ownDriver = this.#turnDriver !== undefined;
    return new BackgroundTaskWatch({
      intervalMs,
      // Only a pane the driver can read: a fake driver without readScreen reads nothing.
      pane: async () => {
        const pane = await this.#paneRef();
        return pane !== undefined && (await this.#driver()).readScreen !== undefined ? pane : undefined;
      },
      readTasks: async (pane, signal) => {
        const read = async (options: { signal?: AbortSignal }) => (await (await this.#driver()).readScreen!(pane, options)).backgroundTasks ?? 0;
        // On real tmux, one capture per pane about every half cadence, whichever of its sessions asks (no one session's signal ends it);
        // a driver of the caller's own is its own.
        return ownDriver ? read({ signal }) : ROW_READINGS.read(paneKey(pane), intervalMs / 2, () => read({}));
      },
      conversationId: () => this.conversationId,
      publish: (events) => this.#events.publish(events),
      signal: this.#closed.signal,
    });
  }

  /** Every event of the wire on its way to consumers: the background-task fold sees its status edges. */
  #pass(events: MapperEvent[]): MapperEvent[] {
    return this.#tasks === undefined ? events : this.#tasks.pass(events);
  }

  get conversationId(): string {
    return this.#reader?.conversationId ?? this.#conversationId;
  }

  get url(): string {
    return this.#binding.url;
  }

  get how(): string {
    return this.#binding.how;
  }

  get agyVersion(): string | null {
    return this.#version.state.agyVersion;
  }

  get agyVersionSource(): AgyVersionState["agyVersionSource"] {
    return this.#version.state.agyVersionSource;
  }

  get simulator(): boolean {
    return this.#version.state.simulator;
  }

  onVersion(listener: (state: AgyVersionState) => void): () => void {
    return this.#version.onChange(listener);
  }

  get #rpc(): AgyRpcClient {
    if (this.#client === undefined) throw new AgyBridgeError("internal", "The session is not bound to a server yet.");
    return this.#client;
  }

  async bind(): Promise<void> {
    const o = this.#o;
    this.#binding =
      o.url !== undefined
        ? { url: o.url, ...(o.csrfToken === undefined ? {} : { csrfToken: o.csrfToken }), how: "given URL" }
        : await this.#locate({
            ...(o.conversationId === undefined ? {} : { conversationId: o.conversationId }),
            ...(o.pane === undefined ? {} : { pane: o.pane }),
            ...(o.csrfToken === undefined ? {} : { csrfToken: o.csrfToken }),
            ...(o.signal === undefined ? {} : { signal: o.signal }),
          });
    this.#client = this.#makeClient(this.#binding);
    this.#conversationId = o.conversationId ?? this.#binding.conversationId ?? (await this.#onlyConversation());
    const known = versionOfBinding(this.#binding, o.agyVersion);
    this.#version.seed(known);
    // Discovery's binding has read the process already; else (a URL given) it is read now, bounded by tmux's own deadline.
    if (known.agyVersion !== null) this.#versionRead = Promise.resolve();
    else if (o.follow !== false) await this.#versionKnown();
  }

  /** The version read at attach has been applied (started now, for a one-shot session that had not needed it yet). */
  #versionKnown(): Promise<void> {
    this.#versionRead ??= this.#version.refresh(true);
    return this.#versionRead;
  }

  #makeClient(binding: ServerBinding): AgyRpcClient {
    return this.#clientFactory({ baseUrl: binding.url, ...(binding.csrfToken === undefined ? {} : { csrfToken: binding.csrfToken }) });
  }

  /** Without an id: the server's single root conversation, else its most recently active one. */
  async #onlyConversation(): Promise<string> {
    const answer = await this.#rpc.getAllCascadeTrajectories({}, { signal: this.#closed.signal });
    const roots = Object.entries(answer.trajectorySummaries ?? {}).filter(([id, s]) => !isChildConversation(id, s));
    if (roots.length === 0) {
      throw new AgyBridgeError("discovery", `The server at ${this.#binding.url} hosts no conversation; start one in agy or pass --conversation.`);
    }
    roots.sort((a, b) => (activityOf(b[1]) ?? 0) - (activityOf(a[1]) ?? 0));
    return roots[0]![0];
  }

  /** Finds the server again: `moved` when the session now talks to a different one, `missing` when none was found. */
  async #relocate(): Promise<RelocateOutcome> {
    if (this.#o.url !== undefined && this.#o.locate === undefined) return "same";
    try {
      const binding = await this.#locate({
        conversationId: this.conversationId,
        ...(this.#pane === undefined ? {} : { pane: this.#pane }),
        signal: this.#closed.signal,
      });
      if (binding.url === this.#binding.url && binding.csrfToken === this.#binding.csrfToken) return "same";
      const old = this.#client;
      this.#binding = binding;
      this.#client = this.#makeClient(binding);
      void old?.close();
      // Discovery's binding carries the version it read; the reconnect that follows reads it again anyway.
      if (binding.agyVersion !== undefined || binding.pid !== undefined) this.#version.offer(versionOfBinding(binding, undefined));
      return "moved";
    } catch {
      return this.#closed.signal.aborted ? "same" : "missing";
    }
  }

  /**
   * agy's server is gone: a `status` (`failed`, `server_gone`) for every
   * consumer; then, unless `relocate` asks to keep looking, the session stops
   * following and `events()` ends.
   */
  #serverGone(): void {
    this.#events.publish(this.#pass([{ type: "status", conversationId: this.conversationId, status: "failed", reason: "server_gone" }]));
    if (this.#o.relocate === true) return;
    this.#reader?.stop();
    this.#events.close();
  }

  /** Reads the conversation and starts following it. */
  async follow(): Promise<void> {
    await this.#ensureReader();
  }

  #ensureReader(): Promise<void> {
    if (this.#readerStart !== undefined) return this.#readerStart;
    const o = this.#o;
    const reader = createConversationReader({
      conversationId: this.#conversationId,
      named: o.conversationId !== undefined,
      client: () => this.#rpc,
      relocate: () => this.#relocate(),
      serverGone: () => this.#serverGone(),
      reconnected: () => void this.#version.refresh(),
      goneAfterFailures: o.goneAfterFailures ?? DEFAULTS.goneAfterFailures,
      publish: (events) => {
        for (const event of events) {
          if (event.type === "interaction_requested") this.#decide(event);
        }
        this.#attribution.offer(events);
      },
      mode: o.mode ?? "stream",
      probe: o.probe ?? "tail",
      probeIntervalMs: o.probeIntervalMs ?? DEFAULTS.probeIntervalMs,
      pollIntervalMs: o.pollIntervalMs ?? DEFAULTS.pollIntervalMs,
      idleCheckIntervalMs: o.idleCheckIntervalMs ?? DEFAULTS.idleCheckIntervalMs,
      ...(o.summariesBoard === undefined ? {} : { board: o.summariesBoard }),
      pollAfterFailures: o.pollAfterFailures ?? DEFAULTS.pollAfterFailures,
      relocateAfterFailures: o.relocateAfterFailures ?? DEFAULTS.relocateAfterFailures,
    });
    this.#reader = reader;
    // history_end says which agy it is: a one-shot session reads the version before it starts reading.
    this.#readerStart = this.#versionKnown()
      .then(() => reader.start())
      .then((history) => {
        // Only what is still open at the end of the history is the policy's to decide.
        const open = createInteractionLedger();
        for (const event of history) open.apply(event);
        for (const event of open.openAll()) this.#decide(event);
        for (const event of history) this.#fold(event);
        this.#history = history;
        // The wire's state at attach: no status edge has to come for an idle conversation's row to be read.
        this.#tasks?.seed(!reader.tracker.turnActive && reader.tracker.pendingInteractions().length === 0);
      });
    return this.#readerStart;
  }

  usePolicy(judge: PolicyJudge): void {
    this.#judge = judge;
  }

  /**
   * With a policy: decides `event` (once per interaction) and writes the
   * verdict on it, before anyone sees it; an approve or deny is then
   * delivered by the session itself, and refused to everyone else.
   */
  #decide(event: EventOf<"interaction_requested">): void {
    const judge = this.#judge;
    if (judge === undefined) return;
    const known = this.#verdicts.get(event.interactionId);
    if (known !== undefined) {
      event.policy = known;
      return;
    }
    let verdict: ReturnType<PolicyJudge["decide"]>;
    try {
      verdict = judge.decide(event);
    } catch {
      // A policy that cannot decide decides nothing: the request goes to a person.
      this.#verdicts.set(event.interactionId, { decision: "ask", rule: null });
      event.policy = { decision: "ask", rule: null };
      return;
    }
    // A question is never approved by a policy: it waits for a person like an ask.
    const decision = verdict.decision.decision === "approve" && event.request.kind === "question" ? "ask" : verdict.decision.decision;
    const mark = { decision, rule: verdict.decision.rule };
    this.#verdicts.set(event.interactionId, mark);
    event.policy = mark;
    const own = {
      approve: (id: string, options: ApproveOptions) => this.#approve(id, options),
      deny: (id: string, options: DenyOptions) => this.#deny(id, options),
    };
    // After the event is published: the delivery reads agy afresh, and the outcome goes to the audit log,
    // then to every consumer as `policy_delivered` (the ledger's second policy stage).
    queueMicrotask(
      () =>
        void judge.deliver(event, verdict, own).then(
          (outcome) => this.#delivered(policyDeliveredEvent(event, mark, outcome)),
          () => undefined,
        ),
    );
  }

  #delivered(event: EventOf<"policy_delivered"> | undefined): void {
    if (event === undefined || this.#closed.signal.aborted) return;
    this.#fold(event);
    this.#events.publish(this.#pass([event]));
  }

  /** The refusal for an answer to a request the policy decided; undefined when it may be answered. */
  #refusal(interactionId: string): AnswerResult | undefined {
    if (this.#judge === undefined) return undefined;
    const verdict = this.#verdicts.get(interactionId);
    if (verdict === undefined || verdict.decision === "ask") return undefined;
    const rule = verdict.rule === null ? "its default" : `rule ${verdict.rule}`;
    return {
      result: "decided_by_policy",
      decision: verdict.decision,
      rule: verdict.rule,
      reason: `the policy (${rule}) decided this request (${verdict.decision}) and delivers its answer itself; nobody else may answer it`,
    };
  }

  /** Folds a published event into the ledger and tells `interactions` subscribers what changed. */
  #fold(event: MapperEvent): void {
    const change = this.#ledger.apply(event);
    if (change === undefined) return;
    for (const listener of [...this.#ledgerListeners]) {
      try {
        listener(change);
      } catch {
        // A subscriber that throws loses nothing of the session's own state.
      }
    }
  }

  get interactions(): SessionInteractions {
    return {
      snapshot: () => this.#ledger.snapshot(),
      subscribe: (listener) => {
        this.#ledgerListeners.add(listener);
        return () => this.#ledgerListeners.delete(listener);
      },
    };
  }

  async readConversation(options: { signal?: AbortSignal } = {}): Promise<MapperEvent[]> {
    await this.#ensureReader();
    return this.#reader!.readWhole(anySignal(options.signal, this.#closed.signal));
  }

  events(options: EventsOptions = {}): AsyncIterable<MapperEvent> {
    const signal = anySignal(options.signal, this.#closed.signal);
    const takeHistory = () => {
      const history = this.#history ?? [];
      this.#history = undefined;
      return history;
    };
    const source = this.#events.subscribe(options, signal, this.#ensureReader(), takeHistory);
    if (this.#judge === undefined) return source;
    // The open interactions a consumer starts with are rebuilt from the tracker: they get their verdict here.
    const verdicts = this.#verdicts;
    return {
      async *[Symbol.asyncIterator]() {
        for await (const event of source) {
          const verdict = event.type === "interaction_requested" && event.policy === undefined ? verdicts.get(event.interactionId) : undefined;
          yield verdict === undefined ? event : { ...event, policy: verdict };
        }
      },
    };
  }

  /**
   * With a pane, an RPC answer is followed by closing agy's own dialog if it
   * stays, only with a key the key table marks safe for a settled step on
   * this agy version (spike-notes §5.4, K7); a dialog left open is a
   * `stale_dialog` diagnostic.
   */
  #delivery(pane?: PaneRef, decidedBy?: string): DeliveryContext {
    const attribution = this.#attribution;
    return {
      client: () => this.#rpc,
      signal: this.#closed.signal,
      agyVersion: this.agyVersion,
      ...(pane === undefined ? {} : { closePrompt: (answer: SettledAnswer | undefined) => this.#closeLeftover(pane, answer) }),
      ...(decidedBy === undefined
        ? {}
        : { sending: (id: string) => attribution.sending(id, decidedBy), sent: (id: string, took: boolean) => attribution.sent(id, took) }),
    };
  }

  async #closeLeftover(pane: PaneRef, answer: SettledAnswer | undefined): Promise<ClosePromptResult> {
    // Which keys are safe depends on the version.
    await this.#versionKnown();
    const result = await (await this.#driver()).closePrompt(pane, {
      signal: this.#closed.signal,
      agyVersion: this.agyVersion,
      ...(answer === undefined ? {} : { answer }),
      hasWaitingStep: async () => (await this.pending()).length > 0,
    });
    if (result.result === "left_open" || result.result === "still_open") {
      this.#events.publish([{ type: "diagnostic", conversationId: this.conversationId, code: "stale_dialog", message: result.reason }]);
    }
    return result;
  }

  /** The pane given at attach, else the one holding the bound agy (discovery's pid → pane), else undefined. */
  #paneRef(): Promise<PaneRef | undefined> {
    if (this.#pane !== undefined) return Promise.resolve(this.#pane);
    const locate = this.#o.locatePane ?? defaultLocatePane;
    const pid = this.#binding.pid;
    if (locate === false || pid === undefined) return Promise.resolve(undefined);
    if (this.#foundPane?.pid !== pid) this.#foundPane = { pid, pane: locate(pid, this.#closed.signal).catch(() => undefined) };
    return this.#foundPane.pane;
  }

  async #driver(): Promise<TurnDriver> {
    this.#turnDriver ??= await defaultTurnDriver();
    return this.#turnDriver;
  }

  approve(interactionId: string, options: ApproveOptions = {}): Promise<AnswerResult> {
    const refused = this.#refusal(interactionId);
    if (refused !== undefined) return Promise.resolve(refused);
    return this.#approve(interactionId, options);
  }

  #approve(interactionId: string, options: ApproveOptions): Promise<AnswerResult> {
    return this.#answer(
      interactionId,
      { kind: "permission", allow: true, ...(options.scope === undefined ? {} : { scope: options.scope }) },
      options.via,
      options.decidedBy,
    );
  }

  deny(interactionId: string, options: DenyOptions = {}): Promise<AnswerResult> {
    const refused = this.#refusal(interactionId);
    if (refused !== undefined) return Promise.resolve(refused);
    return this.#deny(interactionId, options);
  }

  async #deny(interactionId: string, options: DenyOptions): Promise<AnswerResult> {
    const captured = await this.#capturedFor(interactionId);
    if (captured === undefined) return { result: "not_found" };
    const verdict: Verdict =
      captured.kind === "permission"
        ? { kind: "permission", allow: false, ...(options.instruction === undefined ? {} : { instruction: options.instruction }) }
        : { kind: "question", decline: true };
    return this.#answer(interactionId, verdict, options.via, options.decidedBy);
  }

  answer(interactionId: string, options: AnswerOptions): Promise<AnswerResult> {
    const refused = this.#refusal(interactionId);
    if (refused !== undefined) return Promise.resolve(refused);
    return this.#answer(
      interactionId,
      {
        kind: "question",
        optionIds: [...options.optionIds],
        ...(options.writeIn === undefined ? {} : { writeIn: options.writeIn }),
      },
      options.via,
      options.decidedBy,
    );
  }

  async #capturedFor(interactionId: string): Promise<CapturedInteraction | undefined> {
    const request = this.#ledger.get(interactionId)?.request;
    if (request !== undefined) return capturedOf(request);
    const known = this.#found.get(interactionId);
    if (known !== undefined) return known;
    const found = await findInteraction(this.#delivery(), this.conversationId, interactionId);
    if (found !== undefined) {
      this.#found.set(interactionId, found);
      if (this.#found.size > FOUND_KEPT) this.#found.delete(this.#found.keys().next().value as string);
    }
    return found;
  }

  /** One delivery per interaction: a second call waits for the first and reports `already_resolved`. */
  #answer(interactionId: string, verdict: Verdict, via?: AnswerVia, decidedBy?: string): Promise<AnswerResult> {
    const settled = this.#settled.get(interactionId);
    if (settled !== undefined) return Promise.resolve(alreadyResolved(settled));
    const running = this.#inFlight.get(interactionId);
    if (running !== undefined) return running.then(alreadyResolved, () => this.#answer(interactionId, verdict, via, decidedBy));
    const attempt = (async (): Promise<AnswerResult> => {
      const captured = await this.#capturedFor(interactionId);
      if (captured === undefined) return { result: "not_found" };
      const pane = await this.#paneRef();
      // A gate RPC cannot answer goes to the TUI whenever its pane is known.
      const result =
        via === "tui" || (captured.kind === "other" && pane !== undefined)
          ? await this.#answerInTui(pane, captured, verdict, decidedBy)
          : await deliverVerdict(this.#delivery(pane, decidedBy), captured, verdict);
      if (result.result === "delivered" || result.result === "already_resolved") this.#settled.set(interactionId, result);
      return result;
    })();
    this.#inFlight.set(interactionId, attempt);
    void attempt.finally(() => this.#inFlight.delete(interactionId)).catch(() => undefined);
    return attempt;
  }

  /** Keys in agy's dialog; the resolution the keys cause waits for them, to carry `decidedBy` only when they answered. */
  async #answerInTui(pane: PaneRef | undefined, captured: CapturedInteraction, verdict: Verdict, decidedBy?: string): Promise<AnswerResult> {
    await this.#versionKnown();
    if (decidedBy === undefined) return answerInTui(this.#delivery(), await this.#driver(), pane, captured, verdict);
    this.#attribution.sending(captured.interactionId, decidedBy);
    let took = false;
    try {
      const result = await answerInTui(this.#delivery(), await this.#driver(), pane, captured, verdict);
      took = result.result === "delivered";
      return result;
    } finally {
      this.#attribution.sent(captured.interactionId, took);
    }
  }

  async workspace(): Promise<string | undefined> {
    const answer = await this.#rpc.getConversationMetadata({ conversationId: this.conversationId }, { signal: this.#closed.signal });
    const workspaces = asObject(answer.metadata)?.["workspaces"];
    const first = Array.isArray(workspaces) ? asObject(workspaces[0]) : undefined;
    const uri = asString(first?.["workspaceFolderAbsoluteUri"]);
    if (uri === undefined || uri === "") return undefined;
    if (!uri.startsWith("file://")) return uri;
    try {
      return decodeURIComponent(new URL(uri).pathname);
    } catch {
      return undefined;
    }
  }

  /** A fresh read from the frontier: below it every step has settled, so none waits. */
  pending(): Promise<PendingSummary[]> {
    const reader = this.#reader;
    const from = reader !== undefined && reader.conversationId === this.conversationId ? reader.frontier : 0;
    const read = readPending(this.#delivery(), this.conversationId, from);
    if (this.#judge === undefined) return read;
    // With a policy, pending is what the policy left to a person: a request it has not decided yet is not shown either.
    return read.then((all) => all.filter((p) => this.#verdicts.get(p.interactionId)?.decision === "ask"));
  }

  async interrupt(): Promise<InterruptResult> {
    const waiting = await this.pending();
    if (waiting.length > 0) {
      // CancelCascadeSteps does nothing to a parked gate; a deny unblocks it (spike-notes §3.6, §5.8).
      const denied: number[] = [];
      for (const p of waiting) {
        const result = await this.deny(p.interactionId);
        if (result.result === "delivered") denied.push(result.stepIndex);
      }
      return { result: "denied", stepIndices: denied };
    }
    const id = this.conversationId;
    const answer = await this.#rpc.getAllCascadeTrajectories({}, { signal: this.#closed.signal });
    if (asObject(answer.trajectorySummaries?.[id])?.["status"] === RUN_STATUS.IDLE) return { result: "idle" };
    await this.#rpc.cancelCascadeSteps({ conversationId: id }, { signal: this.#closed.signal });
    return { result: "cancelled" };
  }

  async screen(options: { signal?: AbortSignal } = {}): Promise<ScreenModel> {
    const pane = await this.#paneRef();
    if (pane === undefined)
      throw new AgyBridgeError("invalid_argument", "This session has no tmux pane and none was found for its agy; attach with a pane to read its screen.");
    const driver = await this.#driver();
    if (driver.readScreen === undefined)
      throw new AgyBridgeError("invalid_argument", "This session's turn driver cannot read the screen; attach with the default tmux driver.");
    return driver.readScreen(pane, { signal: anySignal(options.signal, this.#closed.signal) });
  }

  async sendTurn(text: string, options: { signal?: AbortSignal; slash?: boolean; closeStale?: boolean } = {}): Promise<TurnDeliveryResult> {
    const pane = await this.#paneRef();
    if (pane === undefined)
      throw new AgyBridgeError("invalid_argument", "This session has no tmux pane and none was found for its agy; attach with a pane to type turns.");
    const driver = await this.#driver();
    await this.#versionKnown();
    const id = this.conversationId;
    const before = await this.#userInputMark(id);
    this.#reader?.expectTurn(TURN_EXPECT_MS);
    return driver.deliverTurn(pane, text, {
      signal: anySignal(options.signal, this.#closed.signal),
      ...(options.slash === undefined ? {} : { slash: options.slash }),
      ...(options.closeStale === true ? { closeStale: true } : {}),
      agyVersion: this.agyVersion,
      hasWaitingStep: async () => (await this.pending()).length > 0,
      verifyStarted: async (signal) => {
        const deadline = Date.now() + VERIFY_TURN_MS;
        while (!signal.aborted && Date.now() < deadline) {
          if ((await this.#userInputMark(id)) !== before) return true;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        return false;
      },
    });
  }

  /** Changes when a new USER_INPUT lands: agy's `lastUserInputTime` / index for the conversation. */
  async #userInputMark(id: string): Promise<string> {
    const answer = await this.#rpc.getAllCascadeTrajectories({}, { signal: this.#closed.signal });
    const s = asObject(answer.trajectorySummaries?.[id]);
    return `${asString(s?.["lastUserInputTime"]) ?? ""}|${String(s?.["lastUserInputStepIndex"] ?? "")}`;
  }

  async close(): Promise<void> {
    if (this.#closed.signal.aborted) return;
    this.#closed.abort();
    this.#reader?.stop();
    this.#attribution.release();
    this.#events.close();
    await this.#client?.close();
  }
}

/** What a binding (or the caller's hint, with a URL) says of agy's version. */
function versionOfBinding(binding: ServerBinding, hint: string | null | undefined): AgyVersionState {
  const state: AgyVersionState = {
    agyVersion: binding.agyVersion ?? hint ?? null,
    agyVersionSource: binding.agyVersion !== undefined ? (binding.agyVersionSource ?? "process") : null,
    simulator: binding.simulator === true,
  };
  if (binding.pid !== undefined) state.pid = binding.pid;
  return state;
}

function alreadyResolved(result: AnswerResult): AnswerResult {
  if (result.result === "delivered" || result.result === "already_resolved") return { result: "already_resolved", stepIndex: result.stepIndex };
  return result;
}

function anySignal(...signals: Array<AbortSignal | undefined>): AbortSignal {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  return present.length === 1 ? present[0]! : AbortSignal.any(present);
}
