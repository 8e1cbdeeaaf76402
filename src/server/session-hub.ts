/**
 * Every supervised conversation the server offers, kept in step with what is
 * running by the session layer's supervisor (session/supervisor.ts): a
 * refresh lists the sessions (discovery, or the fleet), attaches the new ones
 * and drops the ones that went away. Each attached session's events
 * are pumped into its own {@link EventLog}; pending interactions and status
 * are read off that same stream, so `/pending` and `/events` always agree.
 *
 * The hub knows sessions only through {@link SupervisedSession}, which
 * `session/` implements: the server layer never talks RPC itself.
 */
import { currentWaitingFor, type EventOf, type MapperEvent, type WaitingFor } from "../mapper/index.js";
import type { AnswerResult, InteractionAction, InterruptResult, SessionSummary, TurnResult } from "./contract.js";
import { createInteractionLedger } from "../session/interaction-ledger.js";
import { createSupervisor } from "../session/supervisor.js";
import { newEpoch } from "./event-id.js";
import { createEventLog, type EventLog } from "./event-log.js";

/** What the server needs from an attached session. */
export interface SupervisedSession {
  readonly conversationId: string;
  /** agy's version now (null when unknown); absent when the session cannot say (the fleet's). */
  readonly agyVersion?: string | null;
  /** The agy is agy-bridge's simulator. */
  readonly simulator?: boolean;
  /** The conversation so far, then live events, until `signal` aborts or the session closes. */
  events(options: { signal: AbortSignal }): AsyncIterable<MapperEvent>;
  /**
   * The same events, each with the id its source gave it: a stream entry id
   * (`<ms>-<seq>`, strictly increasing), the same whenever and by whoever the
   * conversation is read — `serve --redis`, whose events are the entries of a
   * Redis stream. When present, the hub reads this instead of `events`, and
   * these ids are the SSE ids, so a client resumes across restarts of `serve`.
   * `history_end` has no entry and comes without an id, once the source has
   * read what it held when reading began: the log records the position
   * (`EventLog.historyEnd`) instead of appending it.
   */
  eventEntries?(options: { signal: AbortSignal }): AsyncIterable<{ id?: string | undefined; event: MapperEvent }>;
  /**
   * The newest id the source has issued now (undefined: none), for
   * {@link eventEntries}: tells an id `serve` has not read up to yet from one
   * never issued.
   */
  newestEntryId?(signal: AbortSignal): Promise<string | undefined>;
  /**
   * A fresh read of the conversation as events (its settled history and open
   * interactions), for an SSE client whose position fell out of the replay
   * window. Without it, such a client is resynchronised with the open
   * interactions only.
   */
  snapshot?(signal: AbortSignal): Promise<MapperEvent[]>;
  /** `decidedBy` says who answered (`page`, `http:<token name>`): it rides on the resolution and the audit log. */
  respond(interactionId: string, action: InteractionAction, decidedBy?: string): Promise<AnswerResult>;
  sendTurn(text: string): Promise<TurnOutcome>;
  interrupt(): Promise<InterruptResult>;
  close(): Promise<void>;
}

/**
 * A turn the session would not type, for a reason the caller can act on: a
 * step waits for an answer (Enter could answer its prompt), or the session
 * has no tmux pane to type into.
 */
export interface TurnRefused {
  result: "refused";
  refusal: "interaction_pending" | "no_pane";
  /** One sentence saying what is missing and what to do. */
  reason: string;
  /** With `interaction_pending`: the interaction to answer first. */
  interactionId?: string;
}

export type TurnOutcome = TurnResult | TurnRefused;

/** One conversation a refresh found. */
export interface SessionDescriptor {
  conversationId: string;
  pid?: number;
  title?: string;
  /** The fleet host it runs on (`serve --redis`). */
  host?: string;
}

export type InteractionRequested = EventOf<"interaction_requested">;

export interface HubSession {
  readonly conversationId: string;
  readonly pid: number | undefined;
  readonly title: string | undefined;
  readonly log: EventLog;
  /** See {@link SupervisedSession.snapshot}; always answers (the open interactions and status at least). */
  snapshot(signal: AbortSignal): Promise<MapperEvent[]>;
  /** See {@link SupervisedSession.newestEntryId}; undefined when the session has no source ids, or does not say. */
  newestEntryId?(signal: AbortSignal): Promise<string | undefined>;
  status(): SessionSummary["status"];
  pending(): InteractionRequested[];
  summary(): SessionSummary;
  respond(interactionId: string, action: InteractionAction, decidedBy?: string): Promise<AnswerResult>;
  sendTurn(text: string): Promise<TurnOutcome>;
  interrupt(): Promise<InterruptResult>;
}

export interface SessionHubOptions {
  /** This run's event-id epoch (`event-id.ts`); default a new one. */
  epoch?: string;
  /** Events each conversation's log keeps for SSE replay (`serve --replay-window`); default `DEFAULT_REPLAY_WINDOW`. */
  replayWindow?: number;
  /** Sessions attached at once by a refresh (each reads its history while attaching); default 8. */
  attachConcurrency?: number;
  list(signal: AbortSignal): Promise<SessionDescriptor[]>;
  /**
   * Keeps a session a refresh did not list (its server was busy and a probe
   * timed out) while this says it is still there, e.g. its agy process lives.
   * Default: a session not listed is dropped.
   */
  retain?: (descriptor: SessionDescriptor) => boolean;
  attach(descriptor: SessionDescriptor, signal: AbortSignal): Promise<SupervisedSession>;
  /** Told about failures to list, attach or pump, one sentence each (no secrets). */
  onProblem?: (message: string) => void;
}

export interface SessionHub {
  /** The epoch of every event id this hub's logs issue. */
  readonly epoch: string;
  /** Lists, attaches new sessions, drops vanished ones. Concurrent calls share one run. */
  refresh(): Promise<void>;
  /**
   * Resolves once the first refresh has finished (every session it listed
   * attached or failed), or after `timeoutMs`, whichever is first: a request
   * for a session that a just-started serve is still attaching waits for it
   * instead of being told it does not exist.
   */
  firstRefresh(timeoutMs: number): Promise<void>;
  list(): HubSession[];
  get(conversationId: string): HubSession | undefined;
  /** Called when a session is added or removed. */
  onChange(listener: () => void): () => void;
  close(): Promise<void>;
}

interface HubState extends HubSession {
  readonly session: SupervisedSession;
}

export function createSessionHub(options: SessionHubOptions): SessionHub {
  // Ids stay unique per conversation for the hub's life, even across a re-attach.
  const lastIds = new Map<string, number>();
  const epoch = options.epoch ?? newEpoch();
  const supervisor = createSupervisor<SessionDescriptor, SupervisedSession, HubState>({
    list: options.list,
    ...(options.retain === undefined ? {} : { retain: options.retain }),
    attach: options.attach,
    follow(descriptor, session, signal) {
      const state = createEntry(descriptor, session, epoch, lastIds.get(descriptor.conversationId) ?? 0, options.replayWindow);
      return { state, reading: pump(state, signal) };
    },
    onDropped: ({ conversationId, state }) => lastIds.set(conversationId, state.log.lastId),
    ...(options.attachConcurrency === undefined ? {} : { attachConcurrency: options.attachConcurrency }),
    ...(options.onProblem === undefined ? {} : { onProblem: options.onProblem }),
  });
  return {
    epoch,
    refresh: () => supervisor.refresh(),
    firstRefresh: (timeoutMs) => supervisor.firstRefresh(timeoutMs),
    list: () => supervisor.list().map((s) => s.state),
    get: (id) => supervisor.get(id)?.state,
    onChange: (listener) => supervisor.onChange(listener),
    close: () => supervisor.close(),
  };
}

function createEntry(descriptor: SessionDescriptor, session: SupervisedSession, epoch: string, afterId: number, window: number | undefined): HubState {
  // A session whose source ids its events has those ids on the wire (`event-log.ts`).
  const log = createEventLog({ epoch, afterId, sourced: session.eventEntries !== undefined, ...(window === undefined ? {} : { window }) });
  // What is open is the ledger's fold of this log (docs/architecture.md): a request the policy approved or denied is never pending.
  const ledger = createInteractionLedger();
  const inflight = new Map<string, Promise<AnswerResult>>();
  let status: SessionSummary["status"] = "unknown";
  // What the last `waiting` edge said; the open interactions say it better while there are any (currentWaitingFor).
  let waitedFor: WaitingFor | undefined;
  log.subscribe(({ event }) => {
    if (event.type === "interaction_requested" || event.type === "interaction_resolved") ledger.apply(event);
    else if (event.type === "status") {
      status = event.status;
      waitedFor = event.status === "waiting" ? event.waitingFor : undefined;
    }
  });

  return {
    conversationId: descriptor.conversationId,
    pid: descriptor.pid,
    title: descriptor.title,
    log,
    session,
    status: () => status,
    pending: () => ledger.open(),
    async snapshot(signal) {
      if (session.snapshot !== undefined) return session.snapshot(signal);
      return ledger.open();
    },
    ...(session.newestEntryId === undefined ? {} : { newestEntryId: (signal: AbortSignal) => session.newestEntryId!(signal) }),
    summary() {
      const open = ledger.open();
      const out: SessionSummary = { conversationId: descriptor.conversationId, status, pending: open.length };
      const waiting = currentWaitingFor(status, open, waitedFor);
      if (waiting !== undefined) out.waitingFor = waiting;
      if (descriptor.pid !== undefined) out.pid = descriptor.pid;
      if (descriptor.title !== undefined) out.title = descriptor.title;
      if (descriptor.host !== undefined) out.host = descriptor.host;
      if (session.agyVersion !== undefined) out.agyVersion = session.agyVersion;
      if (session.simulator === true) out.simulator = true;
      return out;
    },
    respond(interactionId, action, decidedBy) {
      // Two concurrent answers to one interaction: the second waits for the first
      // and never delivers (the session also re-reads, this makes it certain).
      const earlier = inflight.get(interactionId);
      if (earlier !== undefined) {
        return earlier.then((first) => (first.result === "delivered" ? { result: "already_resolved", reason: "another request answered it first" } : first));
      }
      const attempt = session.respond(interactionId, action, decidedBy);
      inflight.set(interactionId, attempt);
      void attempt.finally(() => inflight.delete(interactionId)).catch(() => undefined);
      return attempt;
    },
    sendTurn: (text) => session.sendTurn(text),
    interrupt: () => session.interrupt(),
  };
}

async function pump(entry: HubState, signal: AbortSignal): Promise<void> {
  const { session } = entry;
  if (session.eventEntries !== undefined) {
    for await (const { id, event } of session.eventEntries({ signal })) {
      // A boundary, not an entry of the source: each SSE client is sent it at this position (event-stream.ts).
      if (event.type === "history_end") entry.log.endHistory();
      else entry.log.append(event, id);
    }
    return;
  }
  for await (const event of session.events({ signal })) {
    entry.log.append(event);
  }
}
