/**
 * Applies a policy (docs/policy.md) to a session. A session attached with a
 * policy decides each request agy makes BEFORE it publishes the request
 * (`interaction_requested` carries `policy: { decision, rule }`): what the
 * policy approves or denies is delivered through the session's own answer
 * path (re-read at delivery, retargeted only to the same kind, one delivery
 * per interaction) and nobody else may answer it (`decided_by_policy`);
 * `ask` leaves it for a person. The resulting `interaction_resolved` carries
 * `decidedBy: "policy:<id>"`.
 *
 * File paths are resolved through symlinks here, in the session layer
 * ({@link resolveRealPath}), because the policy itself is pure.
 */
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import type { EventOf } from "../mapper/index.js";

type InteractionRequestedEvent = EventOf<"interaction_requested">;
import type { Policy, PolicyContext, PolicyDecision } from "../policy/index.js";
import { describeAnswer } from "./answer-text.js";
import type { AgySession, AnswerResult, ApproveOptions, DenyOptions } from "./types.js";

/** A permission scope for an approve rule's `scope: conversation` (spike-notes §10.6, newer builds). */
const CONVERSATION_SCOPE = "PERMISSION_SCOPE_CONVERSATION";

export interface PolicyRunOptions {
  policy: Policy;
  /**
   * Where the requests come from: workspace, home, pane (the conversation is
   * filled in per request). `resolvePath` defaults to {@link resolveRealPath}.
   */
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
  /** Delivery threw: the sentence (the verdict stands: a person can still answer in agy's own TUI). */
  error?: string;
}

export interface PolicyRun {
  /** Settles when the session's events end or the signal aborts. */
  readonly done: Promise<void>;
}

/** Symlinks followed in one resolution before it counts as a loop (Linux's own limit is 40). */
const MAX_LINKS = 40;

/**
 * The real path the kernel would open for an absolute `path` (`.` and `..`
 * kept as written): each component is resolved in turn — an existing prefix
 * by `realpath`, so a symlink anywhere in it is followed, and `..` applied to
 * the resolved prefix, as the kernel does; a dangling symlink is followed to
 * where its target would be created; the part that does not exist yet is
 * appended as written. Undefined when it cannot be resolved: a symlink loop,
 * a component that is not a directory, no permission, a name too long.
 * Synchronous: a handful of `lstat`/`realpath` calls per request.
 */
export function resolveRealPath(path: string): string | undefined {
  if (!path.startsWith("/")) return undefined;
  const parts = path.split("/").reverse();
  let current = "/";
  let exists = true;
  let links = 0;
  while (parts.length > 0) {
    const part = parts.pop()!;
    if (part === "" || part === ".") continue;
    if (part === "..") {
      current = current === "/" ? "/" : current.slice(0, current.lastIndexOf("/")) || "/";
      continue;
    }
    const next = current === "/" ? `/${part}` : `${current}/${part}`;
    if (!exists) {
      current = next;
      continue;
    }
    try {
      current = realpathSync.native(next);
      continue;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") return undefined;
    }
    let target: string;
    try {
      // Missing, or a dangling symlink: a write through one creates its target.
      target = readlinkSync(next);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "EINVAL") return undefined;
      if (code === "EINVAL" || lstatExists(next)) return undefined;
      exists = false;
      current = next;
      continue;
    }
    if (++links > MAX_LINKS) return undefined;
    // The target's components come next, from the root or from the link's directory.
    parts.push(...target.split("/").reverse());
    if (target.startsWith("/")) current = "/";
  }
  return current;
}

function lstatExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** What a session asks of a policy: its verdict on a request now, and the delivery of an approve or deny. */
export interface PolicyJudge {
  /** Decides `event`'s request (synchronous: the session publishes the verdict with the request). */
  decide(event: InteractionRequestedEvent): { decision: PolicyDecision; decidedBy: string };
  /** Delivers an approve or deny through `answer` (the session's own path), reports the outcome, and resolves with it. */
  deliver(event: InteractionRequestedEvent, verdict: { decision: PolicyDecision; decidedBy: string }, answer: PolicyAnswerer): Promise<PolicyOutcome>;
}

export interface PolicyAnswerer {
  approve(interactionId: string, options: ApproveOptions): Promise<AnswerResult>;
  deny(interactionId: string, options: DenyOptions): Promise<AnswerResult>;
}

/**
 * The judge for `attach`'s `policy` option: a bare policy or its run
 * options. Without a workspace given, agy's own (`workspace()`, from
 * GetConversationMetadata) is `{workspace}`; one that cannot be read is none.
 */
export async function attachPolicyJudge(option: Policy | Omit<PolicyRunOptions, "signal">, workspace: () => Promise<string | undefined>): Promise<PolicyJudge> {
  const policy = "policy" in option ? option : { policy: option };
  const dir = policy.context?.workspace ?? (await workspace().catch(() => undefined));
  return await loadPolicyJudge({ ...policy, context: { ...policy.context, ...(dir === undefined ? {} : { workspace: dir }) } });
}

/** Loads the policy layer (the shell parser is for programs that apply a policy) and returns the judge for `options`. */
export async function loadPolicyJudge(options: PolicyRunOptions): Promise<PolicyJudge> {
  const { decide, policyRequestOf } = await import("../policy/index.js");
  const now = options.now ?? (() => new Date());
  return {
    decide(event) {
      const at = now();
      const context: PolicyContext = {
        resolvePath: resolveRealPath,
        ...options.context,
        conversationId: event.conversationId,
        minuteOfDay: at.getHours() * 60 + at.getMinutes(),
      };
      const decision = decide(options.policy, policyRequestOf(event.request, event.stepType), context);
      return { decision, decidedBy: `policy:${decision.rule ?? "default"}` };
    },
    async deliver(event, { decision, decidedBy }, answer) {
      const outcome: PolicyOutcome = { request: event, decision, decidedBy };
      try {
        if (decision.decision === "approve" && event.request.kind !== "question") {
          outcome.result = await answer.approve(event.interactionId, {
            decidedBy,
            ...(decision.scope === "conversation" && event.request.kind === "permission" ? { scope: CONVERSATION_SCOPE } : {}),
          });
        } else if (decision.decision === "deny") {
          outcome.result = await answer.deny(event.interactionId, {
            decidedBy,
            ...(decision.instruction === undefined ? {} : { instruction: decision.instruction }),
          });
        }
      } catch (error) {
        outcome.error = error instanceof Error ? error.message : String(error);
      }
      options.onDecision?.(outcome);
      return outcome;
    },
  };
}

/**
 * The `policy_delivered` event for what delivering an approve or deny came
 * to (the ledger's second policy stage); undefined for an `ask`, which has
 * no delivery. A delivery that threw is `failed`, with its sentence.
 */
export function policyDeliveredEvent(
  request: InteractionRequestedEvent,
  verdict: { decision: "approve" | "deny" | "ask"; rule: string | null },
  outcome: PolicyOutcome,
): EventOf<"policy_delivered"> | undefined {
  if (verdict.decision === "ask") return undefined;
  const base = {
    type: "policy_delivered" as const,
    conversationId: request.conversationId,
    trajectoryId: request.trajectoryId,
    stepIndex: request.stepIndex,
    interactionId: request.interactionId,
    decision: verdict.decision,
    rule: verdict.rule,
    decidedBy: outcome.decidedBy,
  };
  if (outcome.error !== undefined) return { ...base, result: "failed", reason: `delivering it failed: ${outcome.error}` };
  const answer = outcome.result;
  // Nothing was delivered (an approve rule on a question) or the session refused its own policy: no delivery to report.
  if (answer === undefined || answer.result === "decided_by_policy") return undefined;
  if (answer.result === "delivered") return { ...base, result: "delivered" };
  return { ...base, result: answer.result, reason: describeAnswer(answer, { interactionId: request.interactionId }) };
}

/**
 * Applies `options.policy` to a session that was attached WITHOUT one, from
 * its open interactions on, by following its events. Such a session
 * publishes each request before this decides it, so another consumer may
 * see it pending (and answer it) first: attach with `policy` instead
 * (`AgySession.attach({ policy })`), which decides before publishing.
 */
export function runPolicy(session: AgySession, options: PolicyRunOptions): PolicyRun {
  const decided = new Set<string>();
  const done = (async () => {
    const judge = await loadPolicyJudge(options);
    const events = session.events({ history: false, background: true, ...(options.signal === undefined ? {} : { signal: options.signal }) });
    for await (const event of events) {
      if (event.type !== "interaction_requested" || decided.has(event.interactionId)) continue;
      decided.add(event.interactionId);
      // Not awaited: a slow delivery must not hold up the next gate's decision.
      void judge.deliver(event, judge.decide(event), session);
    }
  })();
  return { done };
}
