/**
 * The relay: one per host. It follows every agy conversation the host has
 * (the CLI finds and attaches them, as `serve` does), publishes each one's
 * events to Redis Streams, keeps the fleet index, and runs the commands bots
 * send for this host through the sessions' own answer path.
 */
import type { Redis } from "ioredis";
import type { AgySessionApi } from "../session/index.js";
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

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: one of the functions over 100 lines that #35 splits; listed so no new one is added
export function createRelay(options: RelayOptions): Relay {
  const { redis, host } = options;
  const now = options.now ?? (() => new Date());
  const maxLen = options.maxLen ?? 10_000;
  const publish = options.publish ?? true;
  const problem = (message: string): void => options.onProblem?.(message);
  const followed = new Map<string, Followed>();
  const attaching = new Set<string>();
  const lifetime = new AbortController();
  let runner: CommandRunner | undefined;
  let reader: Redis | undefined;
  let closed = false;

  const index = (type: "session.attached" | "session.state" | "session.detached", conversationId: string, state: FleetState): void => {
    redis
      .xadd(
        SESSIONS_STREAM,
        "MAXLEN",
        "~",
        maxLen,
        "*",
        "type",
        type,
        "host",
        host,
        "conversationId",
        conversationId,
        "state",
        state,
        "time",
        now().toISOString(),
      )
      .catch((error: unknown) => problem(`the fleet index entry for ${conversationId} could not be written (${(error as Error).message})`));
  };

  const follow = async (conversationId: string, resync?: string): Promise<void> => {
    if (closed || followed.has(conversationId) || attaching.has(conversationId)) return;
    attaching.add(conversationId);
    try {
      if (resync !== undefined) {
        // Marks where events were lost; what the conversation still holds is filled in by the replay below.
        const event = JSON.stringify({ type: "resync", reason: resync });
        await redis.xadd(
          eventsStream(host, conversationId),
          "MAXLEN",
          "~",
          maxLen,
          "*",
          "key",
          `resync:${now().toISOString()}`,
          "type",
          "resync",
          "event",
          event,
        );
      }
      const session = await options.attach(conversationId);
      if (closed) {
        await session.close();
        return;
      }
      const entry: Followed = { session, publisher: undefined as unknown as Publisher };
      entry.publisher = !publish
        ? standbyReader(session, options.observe)
        : startPublisher({
            redis,
            host,
            conversationId,
            events: session.events({ history: true }),
            maxLen,
            bufferLimit: options.bufferLimit ?? 10_000,
            onState: (state, phase) => index(phase === "attached" ? "session.attached" : "session.state", session.conversationId, state),
            onGap: (reason) => {
              entry.gap = reason;
              // Stop reading this session; once its queue is written Redis is back, and the conversation is read again.
              void session.close();
            },
            onProblem: problem,
            ...(options.observe === undefined ? {} : { observe: options.observe }),
          });
      followed.set(conversationId, entry);
      void entry.publisher.done.then(async () => {
        if (followed.get(conversationId) !== entry) return;
        followed.delete(conversationId);
        await session.close().catch(() => undefined);
        if (closed) return;
        if (entry.gap !== undefined)
          await follow(conversationId, entry.gap).catch((error: unknown) =>
            problem(`${conversationId} could not be followed again after the gap (${(error as Error).message}); the next refresh tries again`),
          );
        else if (publish) index("session.detached", conversationId, "gone");
      });
    } finally {
      attaching.delete(conversationId);
    }
  };

  const unfollow = async (conversationId: string): Promise<void> => {
    const entry = followed.get(conversationId);
    if (entry === undefined) return;
    followed.delete(conversationId);
    entry.publisher.stop();
    await entry.session.close().catch(() => undefined);
    // With Redis away the queue cannot be written: stopping does not wait for it forever.
    await within(entry.publisher.done, options.stopWaitMs ?? 3000);
    if (publish) index("session.detached", conversationId, "gone");
  };

  const sessionFor = (conversationId: string): FleetSession | undefined => {
    const direct = followed.get(conversationId);
    if (direct !== undefined) return direct.session;
    // After a `/clear` rotation the session follows a new id.
    for (const entry of followed.values()) if (entry.session.conversationId === conversationId) return entry.session;
    return undefined;
  };

  const execute = async (command: FleetCommand, context: { retry: boolean }): Promise<CommandResult> => {
    const session = sessionFor(command.conversationId);
    if (session === undefined) {
      return {
        result: "unknown_conversation",
        reason: `the relay of host ${host} follows no conversation ${command.conversationId}; send the command to the host agy:sessions lists it under (a detached session takes no commands)`,
      };
    }
    const decidedBy = `relay:${command.principal}`;
    const audited = async (
      decision: RelayAnswer["decision"],
      interactionId: string,
      outcome: Promise<Awaited<ReturnType<FleetSession["approve"]>>>,
      instruction?: string,
    ): Promise<CommandResult> => {
      const result = await outcome;
      options.onAnswered?.({
        conversationId: session.conversationId,
        interactionId,
        decision,
        decidedBy,
        delivery: result.result,
        ...(instruction === undefined ? {} : { instruction }),
      });
      return { interactionId, ...result };
    };
    switch (command.type) {
      case "approve":
        return audited(
          "approve",
          command.interactionId,
          session.approve(command.interactionId, { decidedBy, ...(command.scope === undefined ? {} : { scope: command.scope }) }),
        );
      case "deny":
        return audited(
          "deny",
          command.interactionId,
          session.deny(command.interactionId, { decidedBy, ...(command.instruction === undefined ? {} : { instruction: command.instruction }) }),
          command.instruction,
        );
      case "answer":
        return audited(
          "answer",
          command.interactionId,
          session.answer(command.interactionId, {
            decidedBy,
            optionIds: command.optionIds,
            ...(command.writeIn === undefined ? {} : { writeIn: command.writeIn }),
          }),
        );
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
  };

  const relay: Relay = {
    async start() {
      await relay.refresh();
      reader = redis.duplicate();
      // Its failures surface as failed reads, reported by the runner.
      reader.on("error", () => undefined);
      runner = createCommandRunner({
        redis,
        reader,
        host,
        consumer: options.instanceId,
        claimIdleMs: options.claimIdleMs ?? 30_000,
        ...(options.blockMs === undefined ? {} : { blockMs: options.blockMs }),
        resultsMaxLen: maxLen,
        execute,
        now,
        onProblem: problem,
        ...(options.onResult === undefined ? {} : { onResult: options.onResult }),
      });
      await runner.start();
    },
    async refresh() {
      if (closed) return;
      let ids: string[];
      try {
        ids = await options.list(lifetime.signal);
      } catch (error) {
        problem(`listing the sessions failed (${(error as Error).message}); keeping the ones followed`);
        return;
      }
      const wanted = new Set(ids);
      for (const id of [...followed.keys()]) if (!wanted.has(id)) await unfollow(id);
      await Promise.all(ids.map((id) => follow(id).catch((error: unknown) => problem(`cannot follow ${id}: ${(error as Error).message}`))));
    },
    following: () => [...followed.keys()],
    async close() {
      if (closed) return;
      closed = true;
      lifetime.abort();
      await Promise.all([within(runner?.stop() ?? Promise.resolve(), options.stopWaitMs ?? 3000), ...[...followed.keys()].map((id) => unfollow(id))]);
    },
  };
  return relay;
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
