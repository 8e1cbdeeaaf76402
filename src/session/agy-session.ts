/**
 * `AgySession.attach`: binds to an attended agy conversation (through
 * discovery unless a URL is given) and supervises it — events, turns typed
 * through tmux, answers over RPC, interrupts.
 */
import { AgyBridgeError } from "../errors.js";
import { createAgyRpcClient, type AgyRpcClient } from "../rpc/client.js";
import type { EventOf, MapperEvent } from "../mapper/index.js";
import type { PaneRef } from "../discovery/types.js";
import type { ClosePromptResult, TurnDeliveryResult } from "../tmux/types.js";
import type { SettledAnswer } from "../tmux/key-plans.js";
import type { ScreenModel } from "../tmux/screen-types.js";
import { createConversationReader, type ConversationReader } from "./conversation-reader.js";
import { deliverVerdict, findInteraction, readPending, type CapturedInteraction, type DeliveryContext, type Verdict } from "./interaction-delivery.js";
import { ServerLink, versionOfBinding } from "./server-link.js";
import { conversationWorkspace, isIdle, onlyConversation, userInputLanded, userInputMark } from "./conversation-queries.js";
import { defaultLocate, defaultLocatePane, defaultTurnDriver } from "./session-effects.js";
import { answerInTui } from "./tui-answer.js";
import { attachPolicyJudge, type PolicyJudge } from "./policy-runner.js";
import { PolicyStage } from "./policy-stage.js";
import { AnswerOnce } from "./answer-once.js";
import { GateLookup } from "./gate-lookup.js";
import { LedgerFeed } from "./ledger-feed.js";
import { SessionEvents } from "./session-events.js";
import { createInteractionLedger } from "./interaction-ledger.js";
import { createBackgroundTaskWatch, type BackgroundTaskWatch } from "./background-tasks.js";
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
  DenyOptions,
  EventsOptions,
  InterruptResult,
  PendingSummary,
  SessionInteractions,
  TurnDriver,
} from "./types.js";

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
      // Before the first read: every request is decided before it is published (docs/policy.md).
      if (options.policy !== undefined) session.usePolicy(await attachPolicyJudge(options.policy, () => session.workspace()));
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
  readonly #pane: PaneRef | undefined;
  /** The pane found for the bound agy's pid when none was given (looked up once per pid). */
  #foundPane: { pid: number; pane: Promise<PaneRef | undefined> } | undefined;
  readonly #closed = new AbortController();
  readonly #events: SessionEvents;
  #turnDriver: TurnDriver | undefined;
  /** The server talked to, found again when it moves (server-link.ts). */
  readonly #link: ServerLink;
  #conversationId!: string;
  #reader: ConversationReader | undefined;
  #readerStart: Promise<void> | undefined;
  /** The events of the read at attach, until the first consumer takes them (then dropped: a long history costs nothing idle). */
  #history: MapperEvent[] | undefined;
  /** The gate each answer is for (gate-lookup.ts). */
  readonly #gates: GateLookup;
  /** One delivery per interaction (answer-once.ts). */
  readonly #once = new AnswerOnce();
  /** Who decided each interaction this session delivered an answer to (`decidedBy` on its resolution). */
  readonly #attribution: ResolutionAttribution;
  /** The policy attached, if any: it decides each request before the request is published (policy-stage.ts). */
  readonly #policy = new PolicyStage();
  /** Every interaction this session has published, folded (ledger-feed.ts); what `interactions` reads. */
  readonly #ledger = new LedgerFeed();
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
    this.#link = new ServerLink({
      locate: options.locate ?? defaultLocate,
      clientFactory: options.clientFactory ?? createAgyRpcClient,
      signal: this.#closed.signal,
      // Discovery's binding carries the version it read; the reconnect that follows reads it again anyway.
      moved: (binding) => {
        if (binding.agyVersion !== undefined || binding.pid !== undefined) this.#version.offer(versionOfBinding(binding, undefined));
      },
    });
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
        return {
          url: this.#link.binding.url,
          ...(this.#link.binding.pid === undefined ? {} : { pid: this.#link.binding.pid }),
          ...(pane === undefined ? {} : { pane }),
        };
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
    this.#gates = new GateLookup({
      request: (id) => this.#ledger.request(id),
      find: (id) => findInteraction(this.#delivery(), this.conversationId, id),
    });
    this.#tasks =
      options.backgroundTasks === false
        ? undefined
        : createBackgroundTaskWatch(options.backgroundTasks, DEFAULTS.backgroundTaskIntervalMs, {
            ownDriver: this.#turnDriver !== undefined,
            pane: () => this.#paneRef(),
            driver: () => this.#driver(),
            conversationId: () => this.conversationId,
            publish: (events) => this.#events.publish(events),
            signal: this.#closed.signal,
          });
    if (options.signal !== undefined) {
      // Removed on close: a caller (serve) may hand one signal to many sessions.
      const signal = options.signal;
      const onAbort = () => void this.close();
      signal.addEventListener("abort", onAbort, { once: true });
      this.#closed.signal.addEventListener("abort", () => signal.removeEventListener("abort", onAbort), { once: true });
    }
  }

  /** Every event of the wire on its way to consumers: the background-task fold sees its status edges. */
  #pass(events: MapperEvent[]): MapperEvent[] {
    return this.#tasks === undefined ? events : this.#tasks.pass(events);
  }

  get conversationId(): string {
    return this.#reader?.conversationId ?? this.#conversationId;
  }

  get url(): string {
    return this.#link.binding.url;
  }

  get how(): string {
    return this.#link.binding.how;
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
    return this.#link.client;
  }

  async bind(): Promise<void> {
    const o = this.#o;
    const binding = await this.#link.bind(o);
    this.#conversationId = o.conversationId ?? binding.conversationId ?? (await onlyConversation(this.#rpc, binding.url, this.#closed.signal));
    const known = versionOfBinding(binding, o.agyVersion);
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
      relocate: () => this.#link.relocate(this.conversationId),
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
    this.#policy.use(judge);
  }

  /** With a policy: decides `event` before anyone sees it; an approve or deny is then the session's own to deliver. */
  #decide(event: EventOf<"interaction_requested">): void {
    const own = {
      approve: (id: string, options: ApproveOptions) => this.#approve(id, options),
      deny: (id: string, options: DenyOptions) => this.#deny(id, options),
    };
    this.#policy.decide(event, own, (delivered) => {
      if (this.#closed.signal.aborted) return;
      this.#fold(delivered);
      this.#events.publish(this.#pass([delivered]));
    });
  }

  #fold(event: MapperEvent): void {
    this.#ledger.fold(event);
  }

  get interactions(): SessionInteractions {
    return this.#ledger.view;
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
    return this.#policy.withVerdicts(this.#events.subscribe(options, signal, this.#ensureReader(), takeHistory));
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
    const pid = this.#link.binding.pid;
    if (locate === false || pid === undefined) return Promise.resolve(undefined);
    if (this.#foundPane?.pid !== pid) this.#foundPane = { pid, pane: locate(pid, this.#closed.signal).catch(() => undefined) };
    return this.#foundPane.pane;
  }

  async #driver(): Promise<TurnDriver> {
    this.#turnDriver ??= await defaultTurnDriver();
    return this.#turnDriver;
  }

  approve(interactionId: string, options: ApproveOptions = {}): Promise<AnswerResult> {
    const refused = this.#policy.refusal(interactionId);
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
    const refused = this.#policy.refusal(interactionId);
    if (refused !== undefined) return Promise.resolve(refused);
    return this.#deny(interactionId, options);
  }

  async #deny(interactionId: string, options: DenyOptions): Promise<AnswerResult> {
    const captured = await this.#gates.get(interactionId);
    if (captured === undefined) return { result: "not_found" };
    const verdict: Verdict =
      captured.kind === "permission"
        ? { kind: "permission", allow: false, ...(options.instruction === undefined ? {} : { instruction: options.instruction }) }
        : { kind: "question", decline: true };
    return this.#answer(interactionId, verdict, options.via, options.decidedBy);
  }

  answer(interactionId: string, options: AnswerOptions): Promise<AnswerResult> {
    const refused = this.#policy.refusal(interactionId);
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

  /** One delivery per interaction: a second call waits for the first and reports `already_resolved`. */
  #answer(interactionId: string, verdict: Verdict, via?: AnswerVia, decidedBy?: string): Promise<AnswerResult> {
    return this.#once.run(interactionId, async () => {
      const captured = await this.#gates.get(interactionId);
      if (captured === undefined) return { result: "not_found" };
      const pane = await this.#paneRef();
      // A gate RPC cannot answer goes to the TUI whenever its pane is known.
      return via === "tui" || (captured.kind === "other" && pane !== undefined)
        ? await this.#answerInTui(pane, captured, verdict, decidedBy)
        : await deliverVerdict(this.#delivery(pane, decidedBy), captured, verdict);
    });
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

  workspace(): Promise<string | undefined> {
    return conversationWorkspace(this.#rpc, this.conversationId, this.#closed.signal);
  }

  /** A fresh read from the frontier: below it every step has settled, so none waits. */
  pending(): Promise<PendingSummary[]> {
    const reader = this.#reader;
    const from = reader !== undefined && reader.conversationId === this.conversationId ? reader.frontier : 0;
    // With a policy, pending is what the policy left to a person.
    return this.#policy.leftToPerson(readPending(this.#delivery(), this.conversationId, from));
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
    if (await isIdle(this.#rpc, id, this.#closed.signal)) return { result: "idle" };
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
    const before = await userInputMark(this.#rpc, id, this.#closed.signal);
    this.#reader?.expectTurn(TURN_EXPECT_MS);
    return driver.deliverTurn(pane, text, {
      signal: anySignal(options.signal, this.#closed.signal),
      ...(options.slash === undefined ? {} : { slash: options.slash }),
      ...(options.closeStale === true ? { closeStale: true } : {}),
      agyVersion: this.agyVersion,
      hasWaitingStep: async () => (await this.pending()).length > 0,
      verifyStarted: (signal) => userInputLanded(() => this.#rpc, id, before, VERIFY_TURN_MS, signal, this.#closed.signal),
    });
  }

  async close(): Promise<void> {
    if (this.#closed.signal.aborted) return;
    this.#closed.abort();
    this.#reader?.stop();
    this.#attribution.release();
    this.#events.close();
    await this.#link.close();
  }
}

function anySignal(...signals: Array<AbortSignal | undefined>): AbortSignal {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  return present.length === 1 ? present[0]! : AbortSignal.any(present);
}
