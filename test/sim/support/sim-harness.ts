/**
 * Starts a simulator for a test and reads its conversation over the wire.
 */
import { startSimServer, type SimServer, type SimServerOptions } from "../../../src/sim/server/server.js";
import { eventually, unary, type Json } from "./wire-client.js";

export async function startTestSim(options: SimServerOptions = {}): Promise<SimServer> {
  // speed 0.02 keeps scenario delays tiny; every scenario file still plays in full.
  return startSimServer({ speed: 0.02, ...options });
}

export async function pollSteps(server: SimServer, cascadeId: string, baseUrl = server.tlsUrl): Promise<Json[]> {
  const res = await unary(baseUrl, "GetCascadeTrajectorySteps", { cascadeId });
  if (res.status !== 200) throw new Error(`GetCascadeTrajectorySteps answered ${res.status}: ${res.text}`);
  return (res.json.steps ?? []) as Json[];
}

/** Waits until some step satisfies `predicate`; returns all steps and that step's index. */
export async function waitForStep(
  server: SimServer,
  cascadeId: string,
  predicate: (step: Json, index: number) => boolean,
): Promise<{ steps: Json[]; index: number }> {
  const steps = await eventually(
    () => pollSteps(server, cascadeId),
    (list) => list.some(predicate),
    { what: `a matching step in ${cascadeId}` },
  );
  return { steps, index: steps.findIndex(predicate) };
}

export async function waitForIdle(server: SimServer, cascadeId: string): Promise<Json> {
  return eventually(
    async () => (await unary(server.tlsUrl, "GetAllCascadeTrajectories", {})).json.trajectorySummaries[cascadeId] as Json,
    (summary) => summary.status === "CASCADE_RUN_STATUS_IDLE" && (summary.stepCount ?? 0) > 0,
    { what: `${cascadeId} to be idle after a turn` },
  );
}

export const isWaiting = (type: string) => (step: Json) => step.type === `CORTEX_STEP_TYPE_${type}` && step.status === "CORTEX_STEP_STATUS_WAITING";

export async function sendTurn(server: SimServer, cascadeId: string, text: string, planModel = "MODEL_PLACEHOLDER_M20"): Promise<void> {
  const res = await unary(server.tlsUrl, "SendUserCascadeMessage", { cascadeId, items: [{ text }], cascadeConfig: { plannerConfig: { planModel } } });
  if (res.status !== 200) throw new Error(`SendUserCascadeMessage answered ${res.status}: ${res.text}`);
}

/** The trajectory summaries `GetAllCascadeTrajectories` reports, keyed by conversation id. */
export async function summaries(server: SimServer): Promise<Record<string, Json>> {
  const res = await unary(server.tlsUrl, "GetAllCascadeTrajectories", {});
  if (res.status !== 200) throw new Error(`GetAllCascadeTrajectories answered ${res.status}: ${res.text}`);
  return res.json.trajectorySummaries as Record<string, Json>;
}
