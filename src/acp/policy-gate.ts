/**
 * The policy answers first: the session's policy runner reports each
 * decision here, and the ACP session asks the editor only about a request
 * the policy left to a person (`ask`, a question it cannot approve, or a
 * delivery that failed). A session from `AgySession.attach` writes its
 * policy's verdict on each request before publishing it (the interaction
 * ledger keeps it), so the ACP session reads that and waits here only for a
 * session that writes none.
 */
import type { PolicyOutcome } from "../session/index.js";

export type PolicyVerdict = "ask" | "decided";

export interface PolicyGate {
  /** The policy runner's `onDecision`. */
  report(outcome: PolicyOutcome): void;
  /** What the policy did with an interaction; waits for its decision, or `ask` once `signal` aborts. */
  verdict(interactionId: string, signal: AbortSignal): Promise<PolicyVerdict>;
}

export function createPolicyGate(): PolicyGate {
  const known = new Map<string, PolicyVerdict>();
  const waiting = new Map<string, Array<(verdict: PolicyVerdict) => void>>();
  return {
    report(outcome) {
      const delivered = outcome.error === undefined && outcome.result !== undefined;
      const verdict: PolicyVerdict = delivered ? "decided" : "ask";
      const id = outcome.request.interactionId;
      known.set(id, verdict);
      for (const resolve of waiting.get(id) ?? []) resolve(verdict);
      waiting.delete(id);
    },
    verdict(interactionId, signal) {
      const now = known.get(interactionId);
      if (now !== undefined) return Promise.resolve(now);
      if (signal.aborted) return Promise.resolve("ask");
      return new Promise((resolve) => {
        const list = waiting.get(interactionId) ?? [];
        list.push(resolve);
        waiting.set(interactionId, list);
        signal.addEventListener("abort", () => resolve("ask"), { once: true });
      });
    },
  };
}
