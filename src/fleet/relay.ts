/**
 * The relay: one per host. It follows every agy conversation the host has
 * (the CLI finds and attaches them, and the session layer's supervisor keeps
 * them in step, as for `serve` and `mcp`), publishes each one's
 * events to Redis Streams, keeps the fleet index, and runs the commands bots
 * send for this host through the sessions' own answer path.
 */
import type { Redis } from "ioredis";
import type { AgySessionApi } from "../session/index.js";
import { respond } from "../session/respond.js";
import { createSupervisor, type DropReason, type Supervisor } from "../session/supervisor.js";
import type { Verdict } from "../session/verdict.js";
import { createCommandRunner, type CommandResult, type CommandRunner } from "./command-runner.js";
import type { FleetCommand } from "./fleet-command.js";
import { startPublisher, type FleetState, type Publisher } from "./conversation-publisher.js";
import { eventsStream, SESSIONS_STREAM } from "./stream-names.js";
import type { MapperEvent } from "../mapper/index.js";

/** What the relay needs of a session: follow it and act on it. */
export type FleetSession = Pick<AgySessionApi, "conversationId" | "events" | "approve" | "deny" | "answer" | "sendTurn" | "interrupt" | "close">;

/** An answer the relay delivered, for the audit log. */
export interface RelayAnswer {
  conversationId: string;
  interactionId: string;
  decision: "approve" | "deny" | "answer";
  decidedBy: string;
  delivery: string;
  instruction?: string;
}

export interface RelayOptions {
  /** Writes and non-blocking reads; the relay makes its own duplicate for blocking reads. */
  redis: Redis;
  host: string;
  /** This relay's id: its consumer name in the command group. */
  instanceId: string;
  /** The conversations to follow now (called by `refresh`). */
  list(signal: AbortSignal): Promise<string[]>;
  attach(conversationId: string): Promise<FleetSession>;
  /** Default 30,000 ms. */
  claimIdleMs?: number;
  /**
   * Default true. false: a standby — it follows the sessions and takes
   * commands (and claims what another relay of the host left pending), but
   * publishes no events and no index entries, so the host's one publishing
   * relay is not doubled.
   */
  publish?: boolean;
  /** Approximate length of each events stream and of the index (`MAXLEN ~`); default 10,000. */
  maxLen?: number;
  /** Events held per conversation while Redis is away; default 10,000. */
  bufferLimit?: number;
  /** How long one blocking read of commands lasts (ms); default 1000. */
  blockMs?: number;
  now?: () => Date;
  /** How long `close` waits for a write or a command in flight when Redis does not answer (ms); default 3000. */
  stopWaitMs?: number;
  onProblem?: (message: string) => void;
  /** Every event read from a session (for the audit log's view of requests). */
  observe?: (event: MapperEvent) => void;
  /** Every answer delivered through a command (for the audit log). */
  onAnswered?: (answer: RelayAnswer) => void;
  /** After a command's result is written and acknowledged. */
  onResult?: (commandId: string, result: CommandResult) => void;
}

export interface Relay {
  /** Follows what `list` returns, then starts taking commands. */
  start(): Promise<void>;
  /** Attaches new conversations and detaches those `list` no longer returns. */
  refresh(): Promise<void>;
  /** The conversations followed now. */
  following(): string[];
  /** Stops taking commands, detaches every session (index: `session.detached`), and closes its own connections. */
  close(): Promise<void>;
}

interface Followed {
  session: FleetSession;
  publisher: Publisher;
  gap?: string;
}

/** One relay's state, shared by the steps below. */
interface RelayState {
  readonly options: RelayOptions;
  readonly redis: Redis;
  readonly host: string;
  readonly now: () => Date;
  readonly maxLen: number;
  /** False for a standby (see {@link RelayOptions.publish}). */
  readonly publish: boolean;
  readonly problem: (message: string) => void;
  /** The conversations followed, kept in step with `list` (session/supervisor.ts). */
  readonly followed: Supervisor<{ conversationId: string }, FleetSession, Followed>;
  /** Detaches under way (each waits, bounded, for its publisher's queue): `close` waits for them. */
  readonly detaching: Set<Promise<void>>;
  /** Conversations being followed again after a gap (see {@link followAgain}). */
  readonly resyncing: Map<string, Promise<void>>;
  runner: CommandRunner | undefined;
  reader: Redis | undefined;
  closed: boolean;
}

type IndexEntry = "session.attached" | "session.state" | "session.detached";

export function createRelay(options: RelayOptions): Relay {
  const state: RelayState = {
    options,
    redis: options.redis,
    host: options.host,
    now: options.now ?? (() => new Date()),
    maxLen: options.maxLen ?? 10_000,
    publish: options.publish ?? true,
    problem: (message) => options.onProblem?.(message),
    followed: undefined as unknown as RelayState["followed"],
    detaching: new Set(),
    resyncing: new Map(),
    runner: undefined,
    reader: undefined,
    closed: false,
  };
  (state as { followed: RelayState["followed"] }).followed = createSupervisor({
    list: async (signal) => (await options.list(signal)).map((conversationId) => ({ conversationId })),
    async attach({ conversationId }) {
      // Being followed again after a gap: its resync marker goes first, and this attach is then the second one (closed).
      await state.resyncing.get(conversationId);
      return options.attach(conversationId);
    },
    follow: (descriptor, session, signal) => {
      const entry: Followed = { session, publisher: undefined as unknown as Publisher };
      entry.publisher = state.publish ? publisherOf(state, descriptor.conversationId, entry) : standbyReader(session, options.observe);
      signal.addEventListener("abort", () => entry.publisher.stop(), { once: true });
      return { state: entry, reading: entry.publisher.done };
    },
    onDropped: ({ conversationId, state: entry }, why) => detached(state, conversationId, entry, why),
    onProblem: state.problem,
  });
  const relay: Relay = {
    async start() {
      await relay.refresh();
      await startRunner(state);
    },
    async refresh() {
      if (!state.closed) await state.followed.refresh();
    },
    following: () => state.followed.list().map((s) => s.conversationId),
    async close() {
      if (state.closed) return;
      state.closed = true;
      await Promise.all([within(state.runner?.stop() ?? Promise.resolve(), options.stopWaitMs ?? 3000), state.followed.close()]);
      await Promise.all([...state.detaching]);
    },
  };
  return relay;
}

/**
 * After a session stopped being followed: a gap follows it again (with a
 * `resync` marker); otherwise, once its queue is written (bounded: with Redis
 * away it cannot be), the index says it is detached.
 */
function detached(state: RelayState, conversationId: string, entry: Followed, why: DropReason): void {
  const work = (async () => {
    if (why === "ended" && entry.gap !== undefined && !state.closed) {
      const again = followAgain(state, conversationId, entry.gap).catch((error: unknown) =>
        state.problem(`${conversationId} could not be followed again after the gap (${(error as Error).message}); the next refresh tries again`),
      );
      state.resyncing.set(conversationId, again);
      await again.finally(() => state.resyncing.delete(conversationId));
      return;
    }
    // With Redis away the queue cannot be written: stopping does not wait for it forever.
    if (why !== "ended") await within(entry.publisher.done, state.options.stopWaitMs ?? 3000);
    if (state.publish) index(state, "session.detached", conversationId, "gone");
  })();
  state.detaching.add(work);
  void work.finally(() => state.detaching.delete(work));
}

/** Marks the gap in the conversation's stream, attaches it again and publishes it from there. */
async function followAgain(state: RelayState, conversationId: string, resync: string): Promise<void> {
  await markResync(state, conversationId, resync);
  const session = await state.options.attach(conversationId);
  if (state.closed) {
    await session.close();
    return;
  }
  await state.followed.adopt({ conversationId }, session);
}

/** Starts taking this host's commands, on a connection of its own for the blocking reads. */
async function startRunner(state: RelayState): Promise<void> {
  const { options, redis } = state;
  const reader = redis.duplicate();
  state.reader = reader;
  // Its failures surface as failed reads, reported by the runner.
  reader.on("error", () => undefined);
  const runner = createCommandRunner({
    redis,
    reader,
    host: state.host,
    consumer: options.instanceId,
    claimIdleMs: options.claimIdleMs ?? 30_000,
    ...(options.blockMs === undefined ? {} : { blockMs: options.blockMs }),
    resultsMaxLen: state.maxLen,
    execute: (command, context) => execute(state, command, context),
    now: state.now,
    onProblem: state.problem,
    ...(options.onResult === undefined ? {} : { onResult: options.onResult }),
  });
  state.runner = runner;
  await runner.start();
}

/** Writes one entry of the fleet index; a failure is reported, never thrown. */
function index(state: RelayState, type: IndexEntry, conversationId: string, fleetState: FleetState): void {
  state.redis
    .xadd(
      SESSIONS_STREAM,
      "MAXLEN",
      "~",
      state.maxLen,
      "*",
      "type",
      type,
      "host",
      state.host,
      "conversationId",
      conversationId,
      "state",
      fleetState,
      "time",
      state.now().toISOString(),
    )
    .catch((error: unknown) => state.problem(`the fleet index entry for ${conversationId} could not be written (${(error as Error).message})`));
}

/** Marks where events were lost; what the conversation still holds is filled in by the replay that follows. */
async function markResync(state: RelayState, conversationId: string, reason: string): Promise<void> {
  const event = JSON.stringify({ type: "resync", reason });
  await state.redis.xadd(
    eventsStream(state.host, conversationId),
    "MAXLEN",
    "~",
    state.maxLen,
    "*",
    "key",
    `resync:${state.now().toISOString()}`,
    "type",
    "resync",
    "event",
    event,
  );
}

/** Publishes the session's events and index entries; a gap sets `entry.gap` and stops reading. */
function publisherOf(state: RelayState, conversationId: string, entry: Followed): Publisher {
  const { session } = entry;
  const { options } = state;
  return startPublisher({
    redis: state.redis,
    host: state.host,
    conversationId,
    events: session.events({ history: true }),
    maxLen: state.maxLen,
    bufferLimit: options.bufferLimit ?? 10_000,
    onState: (fleetState, phase) => index(state, phase === "attached" ? "session.attached" : "session.state", session.conversationId, fleetState),
    onGap: (reason) => {
      entry.gap = reason;
      // Stop reading this session; once its queue is written Redis is back, and the conversation is read again.
      void session.close();
    },
    onProblem: state.problem,
    ...(options.observe === undefined ? {} : { observe: options.observe }),
  });
}

function sessionFor(state: RelayState, conversationId: string): FleetSession | undefined {
  const direct = state.followed.get(conversationId);
  if (direct !== undefined) return direct.session;
  // After a `/clear` rotation the session follows a new id.
  for (const { session } of state.followed.list()) if (session.conversationId === conversationId) return session;
  return undefined;
}

/** Runs one command through the session's own answer path. */
async function execute(state: RelayState, command: FleetCommand, context: { retry: boolean }): Promise<CommandResult> {
  const session = sessionFor(state, command.conversationId);
  if (session === undefined) {
    return {
      result: "unknown_conversation",
      reason: `the relay of host ${state.host} follows no conversation ${command.conversationId}; send the command to the host agy:sessions lists it under (a detached session takes no commands)`,
    };
  }
  switch (command.type) {
    case "approve":
    case "deny":
    case "answer":
      return answer(session, command, state.options.onAnswered);
    case "send_turn": {
      if (context.retry) {
        // Typing is not idempotent: the earlier attempt may have typed it, so it is never typed twice.
        return {
          result: "unverified",
          reason:
            "a relay took this turn before and stopped before reporting, so it may already have been typed; it was not typed again — look for its user_message in the conversation's events and send it again with a new requestId if it is missing",
        };
      }
      try {
        const result = await session.sendTurn(command.text);
        return { result: result.result, reason: result.reason, ...(result.screen === undefined ? {} : { screen: result.screen }) };
      } catch (error) {
        // As `send --json` reports a refusal: the sentence says why (no pane, a prompt waiting, …).
        return { result: "failed", reason: (error as Error).message };
      }
    }
    case "interrupt":
      return { ...(await session.interrupt()) };
  }
}

/** Approve, deny or answer, decided by the command's principal, through the one answer path (recorded to `onAnswered`). */
async function answer(
  session: FleetSession,
  command: Extract<FleetCommand, { type: "approve" | "deny" | "answer" }>,
  onAnswered: RelayOptions["onAnswered"],
): Promise<CommandResult> {
  const result = await respond(session, command.interactionId, verdictOf(command), {
    decidedBy: `relay:${command.principal}`,
    ...(onAnswered === undefined ? {} : { onAnswered }),
  });
  return { interactionId: command.interactionId, ...result };
}

/** The command's answer as the one `Verdict` every door speaks. */
function verdictOf(command: Extract<FleetCommand, { type: "approve" | "deny" | "answer" }>): Verdict {
  switch (command.type) {
    case "approve":
      return { action: "approve", ...(command.scope === undefined ? {} : { scope: command.scope }) };
    case "deny":
      return { action: "deny", ...(command.instruction === undefined ? {} : { instruction: command.instruction }) };
    case "answer":
      return { action: "answer", optionIds: command.optionIds, ...(command.writeIn === undefined ? {} : { writeIn: command.writeIn }) };
  }
}

/** A standby's reader: keeps the session's events flowing (to the audit log) without publishing them. */
function standbyReader(session: FleetSession, observe: ((event: MapperEvent) => void) | undefined): Publisher {
  const done = (async () => {
    for await (const event of session.events({ history: false, background: true })) observe?.(event);
  })().catch(() => undefined);
  return { published: 0, done, stop: () => undefined };
}

/** Settles when `work` does or after `ms`, whichever comes first. */
async function within(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([work.catch(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
