/**
 * What each waiting conversation of a discovered server waits for, read
 * without attaching: one `GetAllCascadeTrajectories`, whose summaries carry
 * the steps waiting on the user (`waitingSteps[{step, stepIndex}]`,
 * spike-notes §10.4). The word is the mapper's (`waitingForStep`), so it is
 * the one a session's `status` event says.
 */
import type { DiscoveredServer } from "../discovery/types.js";
import { type WaitingFor, waitingForStep } from "../mapper/index.js";
import { asIndex, asObject } from "../protocol/json.js";
import type { AllTrajectoriesResponse } from "../protocol/wire-schemas.js";
import { createAgyRpcClient, type AgyRpcClient, type AgyRpcClientOptions } from "../rpc/client.js";

export interface WaitingLookupOptions {
  signal?: AbortSignal;
  /** The call's deadline (default 5 s): a busy server leaves `waitingFor` out rather than holding the listing up. */
  timeoutMs?: number;
  /** Default `createAgyRpcClient`. */
  createClient?: (options: AgyRpcClientOptions) => AgyRpcClient;
}

/** `waitingFor` by conversation, from a `GetAllCascadeTrajectories` answer: the earliest waiting step that says. */
export function waitingForOfSummaries(response: AllTrajectoriesResponse): Map<string, WaitingFor> {
  const out = new Map<string, WaitingFor>();
  for (const [conversationId, summary] of Object.entries(response.trajectorySummaries ?? {})) {
    // A WAITING entry without stepIndex is step 0 (zero values are omitted).
    const waiting = [...(summary.waitingSteps ?? [])].sort((a, b) => (asIndex(a.stepIndex) ?? 0) - (asIndex(b.stepIndex) ?? 0));
    for (const entry of waiting) {
      const word = waitingForStep(asObject(entry.step));
      if (word === undefined) continue;
      out.set(conversationId, word);
      break;
    }
  }
  return out;
}

/**
 * Asks the server once, only when one of its conversations has a waiting
 * step. A failed call gives an empty map: the listing stays what discovery
 * found, without `waitingFor`.
 */
export async function lookUpWaitingFor(server: DiscoveredServer, options: WaitingLookupOptions = {}): Promise<Map<string, WaitingFor>> {
  if (server.url === undefined || !server.conversations.some((c) => c.waitingSteps.length > 0)) return new Map();
  const client = (options.createClient ?? createAgyRpcClient)({
    baseUrl: server.url,
    ...(server.csrfToken === undefined ? {} : { csrfToken: server.csrfToken }),
  });
  try {
    const answer = await client.getAllCascadeTrajectories({}, { timeoutMs: options.timeoutMs ?? 5000, signal: options.signal });
    return waitingForOfSummaries(answer);
  } catch {
    return new Map();
  } finally {
    await client.close().catch(() => undefined);
  }
}
