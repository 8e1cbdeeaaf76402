/**
 * A stream-first client of the simulator, as a bot would write one: one
 * snapshot when it starts, then only `StreamAgentStateUpdates` frames through
 * the real mapper (`createTrajectoryTracker`). Every `interaction_requested`
 * it sees is answered over RPC at once. It never re-scans, so a gate that
 * parks without a frame (spike-notes §5.2) is invisible to it.
 */
import { createTrajectoryTracker, type MapperEvent } from "../../../src/mapper/index.js";
import type { StreamUpdate } from "../../../src/protocol/wire-schemas.js";
import type { SimServer } from "../../../src/sim/server/server.js";
import { pollSteps } from "./sim-harness.js";
import { openStream, unary, type Json, type StreamReader } from "./wire-client.js";

type Requested = Extract<MapperEvent, { type: "interaction_requested" }>;

export interface StreamOnlyConsumer {
  /** Every event the tracker emitted, in order. */
  readonly events: MapperEvent[];
  /** Every data frame the stream delivered (raw payloads). */
  readonly frames: readonly Json[];
  /**
   * The `interaction_requested` events that were still open when their batch
   * ended (a request the same batch resolves is a step first seen already
   * answered: a replay of its history, nothing to answer).
   */
  requested(): Requested[];
  /** Resolves once an emitted event satisfies `predicate` (bounded; fails saying what it saw). */
  until(predicate: (event: MapperEvent) => boolean, what: string, timeoutMs?: number): Promise<MapperEvent>;
  /** Stops reading and closes the stream. */
  stop(): void;
}

/** The answer a bot that approves everything sends for a request. */
export function approve(event: Requested): Json {
  const request = event.request;
  const base = { trajectoryId: event.trajectoryId, stepIndex: event.stepIndex };
  if (request.kind === "question") {
    return { ...base, askQuestion: { responses: request.questions.map((q) => ({ question: q.question, selectedOptionIds: [q.options[0]?.id ?? "1"] })) } };
  }
  if (request.kind === "permission") return { ...base, [request.variant ?? "permission"]: { allow: true } };
  throw new Error(`a stream-only consumer cannot answer a ${request.kind} gate (variant ${request.variant})`);
}

export async function startStreamOnlyConsumer(server: SimServer, cascadeId: string): Promise<StreamOnlyConsumer> {
  const tracker = createTrajectoryTracker({ conversationId: cascadeId });
  const events: MapperEvent[] = [];
  const open: Requested[] = [];
  const waiters = new Set<() => void>();
  const push = (more: MapperEvent[]): void => {
    events.push(...more);
    for (const wake of [...waiters]) wake();
  };
  push(tracker.applySnapshot({ steps: await pollSteps(server, cascadeId) }));
  const reader: StreamReader = await openStream(server.tlsUrl, { conversationId: cascadeId });
  let stopped = false;
  let failure: Error | undefined;
  const answer = async (event: Requested): Promise<void> => {
    const res = await unary(server.tlsUrl, "HandleCascadeUserInteraction", { cascadeId, interaction: approve(event) });
    if (res.status !== 200) throw new Error(`the answer to step ${event.stepIndex} got ${res.status}: ${res.text}`);
  };
  void (async () => {
    let next = 0;
    while (!stopped) {
      let frame: Json;
      try {
        frame = await reader.waitForFrame(() => true, next, 60_000);
      } catch (error) {
        if (!stopped) failure = error as Error;
        break;
      }
      next += 1;
      const emitted = tracker.applyStreamUpdate(frame.update as StreamUpdate);
      const resolved = new Set(emitted.flatMap((e) => (e.type === "interaction_resolved" ? [e.interactionId] : [])));
      const live = emitted.filter((e): e is Requested => e.type === "interaction_requested" && !resolved.has(e.interactionId));
      open.push(...live);
      push(emitted);
      for (const event of live) await answer(event);
    }
  })().catch((error: unknown) => {
    failure = error as Error;
  });
  return {
    events,
    frames: reader.frames,
    requested: () => [...open],
    until(predicate, what, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`the stream-only consumer never saw ${what}; it saw ${events.map((e) => e.type).join(", ")}`));
        }, timeoutMs);
        const check = (): void => {
          const hit = events.find(predicate);
          if (hit !== undefined || failure !== undefined) {
            clearTimeout(timer);
            waiters.delete(check);
            if (hit !== undefined) resolve(hit);
            else reject(failure);
          }
        };
        waiters.add(check);
        check();
      });
    },
    stop() {
      stopped = true;
      reader.cancel();
    },
  };
}
