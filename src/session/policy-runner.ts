/**
 * Applies a policy (docs/policy.md) to a session: every request agy makes —
 * the ones open at the start and each new one as it appears — is decided
 * by the pure policy and, for `approve` and `deny`, delivered through the
 * session's own answer path (re-read at delivery, retargeted only to the
 * same kind, one delivery per interaction). `ask` leaves it for a person.
 * The resulting `interaction_resolved` carries `decidedBy: "policy:<id>"`.
 */
import type { EventOf } from "../mapper/index.js";

type InteractionRequestedEvent = EventOf<"interaction_requested">;
import type { Policy, PolicyContext, PolicyDecision } from "../policy/index.js";
import type { AgySession, AnswerResult } from "./types.js";

/** A permission scope for an approve rule's `scope: conversation` (spike-notes §10.6, newer builds). */
const CONVERSATION_SCOPE = "PERMISSION_SCOPE_CONVERSATION";

export interface PolicyRunOptions {
  policy: Policy;
  /** Where the requests come from: workspace, home, pane (the conversation is filled in per request). */
  context?: PolicyContext;
  /** The clock for `hours` limits; default `() => new Date()`. */
  now?: () => Date;
  /** Every decision, with what delivering it did (for the audit log). */
  onDecision?: (outcome: PolicyOutcome) => void;
  signal?: AbortSignal;
}

export interface PolicyOutcome {
  request: InteractionRequestedEvent;
  decision: PolicyDecision;
  /** `policy:<rule id>`, or `policy:default` when no rule decided. */
  decidedBy: string;
  /** The answer path's result; undefined for `ask`. */
  result?: AnswerResult;
  /** Delivery threw: the sentence (the interaction stays pending for a person). */
  error?: string;
}

export interface PolicyRun {
  /** Settles when the session's events end or the signal aborts. */
  readonly done: Promise<void>;
}

/** Starts applying `options.policy` to `session`'s requests, from its open interactions on. */
export function runPolicy(session: AgySession, options: PolicyRunOptions): PolicyRun {
  const now = options.now ?? (() => new Date());
  const decided = new Set<string>();
  const done = (async () => {
    // Loaded here, not at import: the shell parser is for programs that apply a policy.
    const policy = await import("../policy/index.js");
    const events = session.events({ history: false, background: true, ...(options.signal === undefined ? {} : { signal: options.signal }) });
    for await (const event of events) {
      if (event.type !== "interaction_requested" || decided.has(event.interactionId)) continue;
      decided.add(event.interactionId);
      // Not awaited: a slow delivery must not hold up the next gate's decision.
      void apply(policy, session, event, options, now());
    }
  })();
  return { done };
}

async function apply(
  { decide, policyRequestOf }: typeof import("../policy/index.js"),
  session: AgySession,
  event: InteractionRequestedEvent,
  options: PolicyRunOptions,
  at: Date,
): Promise<void> {
  const context: PolicyContext = {
    ...options.context,
    conversationId: event.conversationId,
    minuteOfDay: at.getHours() * 60 + at.getMinutes(),
  };
  const decision = decide(options.policy, policyRequestOf(event.request, event.stepType), context);
  const decidedBy = `policy:${decision.rule ?? "default"}`;
  const outcome: PolicyOutcome = { request: event, decision, decidedBy };
  try {
    if (decision.decision === "approve" && event.request.kind !== "question") {
      outcome.result = await session.approve(event.interactionId, {
        decidedBy,
        ...(decision.scope === "conversation" && event.request.kind === "permission" ? { scope: CONVERSATION_SCOPE } : {}),
      });
    } else if (decision.decision === "deny") {
      outcome.result = await session.deny(event.interactionId, {
        decidedBy,
        ...(decision.instruction === undefined ? {} : { instruction: decision.instruction }),
      });
    }
  } catch (error) {
    outcome.error = error instanceof Error ? error.message : String(error);
  }
  options.onDecision?.(outcome);
}
