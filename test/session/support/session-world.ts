/**
 * A private simulated agy and a session attached to it, for one test.
 */
import { startSimServer, type SimServer, type SimServerOptions } from "../../../src/sim/index.js";
import { AgySession, type AgySessionApi, type AttachOptions } from "../../../src/session/index.js";
import type { MapperEvent } from "../../../src/mapper/index.js";
import type { AgyRpcClient } from "../../../src/rpc/index.js";

export interface World {
  sim: SimServer;
  session: AgySessionApi;
  /** Every event the first consumer saw, in order. */
  log: MapperEvent[];
  /** Resolves with the first logged event matching `match`, failing after `ms` with what was seen. */
  waitFor<T extends MapperEvent>(match: (e: MapperEvent) => e is T, what: string, ms?: number): Promise<T>;
  waitFor(match: (e: MapperEvent) => boolean, what: string, ms?: number): Promise<MapperEvent>;
  close(): Promise<void>;
}

export async function startWorld(
  simOptions: SimServerOptions = {},
  attach: Partial<AttachOptions> | ((sim: SimServer) => Partial<AttachOptions>) = {},
): Promise<World> {
  const sim = await startSimServer({ speed: 0.05, ...simOptions });
  const session = await AgySession.attach({
    url: sim.plainUrl,
    conversationId: sim.engine.activeConversationId,
    ...(typeof attach === "function" ? attach(sim) : attach),
  });
  const log: MapperEvent[] = [];
  const waiters = new Set<() => void>();
  const reading = (async () => {
    for await (const event of session.events()) {
      log.push(event);
      for (const wake of [...waiters]) wake();
    }
  })().catch((error: unknown) => log.push({ type: "diagnostic", conversationId: "", code: "connection_lost", message: String(error) }));
  const waitFor = (match: (e: MapperEvent) => boolean, what: string, ms = 10_000): Promise<MapperEvent> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const hit = log.find(match);
        if (hit === undefined) return false;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(hit);
        return true;
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`timed out after ${ms} ms waiting for ${what}; saw: ${log.map(describe).join(", ")}`));
      }, ms);
      waiters.add(check);
      check();
    });
  return {
    sim,
    session,
    log,
    waitFor: waitFor as World["waitFor"],
    async close() {
      await session.close();
      await reading;
      await sim.close();
    },
  };
}

export function describe(e: MapperEvent): string {
  if (e.type === "status") return `status:${e.status}/${e.reason}`;
  if (e.type === "interaction_requested" || e.type === "interaction_resolved") return `${e.type}@${e.stepIndex}`;
  if (e.type === "diagnostic") return `diagnostic:${e.code}:${e.message}`;
  return "stepIndex" in e && e.stepIndex !== undefined ? `${e.type}@${e.stepIndex}` : e.type;
}

export const isRequested = (e: MapperEvent): e is Extract<MapperEvent, { type: "interaction_requested" }> => e.type === "interaction_requested";

export const isTurnEnd = (e: MapperEvent): boolean => e.type === "status" && (e.status === "idle" || e.status === "failed");

/** A client that forwards every call to `real`, except the methods in `overrides`. */
export function wrapClient(real: AgyRpcClient, overrides: Partial<AgyRpcClient>): AgyRpcClient {
  const out: Record<string, unknown> = { baseUrl: real.baseUrl };
  for (const key of [
    "heartbeat",
    "getConversationMetadata",
    "getCascadeTrajectorySteps",
    "getCascadeTrajectory",
    "streamAgentStateUpdates",
    "handleCascadeUserInteraction",
    "cancelCascadeSteps",
    "cancelCascadeInvocation",
    "forceStopCascadeTree",
    "getAllCascadeTrajectories",
    "getAvailableModels",
    "startCascade",
    "sendUserCascadeMessage",
    "close",
  ] as const) {
    out[key] = (real[key] as (...a: unknown[]) => unknown).bind(real);
  }
  return { ...(out as unknown as AgyRpcClient), ...overrides };
}
