/**
 * An agent's approve / deny / answer: a decision like a person's, delivered
 * through the session's answer path with `decidedBy: "mcp:<client>"` and
 * recorded in the audit log — except that a team's policy binds an agent: an
 * approve (or an answer) the policy decides `deny` is refused before anything
 * reaches agy. A person can still approve it from the CLI or the page.
 */
import type { SessionAuditor } from "../audit/index.js";
import type { Policy, PolicyContext } from "../policy/index.js";
import type { AnswerResult } from "../session/index.js";
import { resolveRealPath } from "../session/policy-runner.js";
import { describeAnswerSentence } from "../session/answer-text.js";
import { respond } from "../session/respond.js";
import { instructionAllowed, type Verdict } from "../session/verdict.js";
import type { InteractionRequested } from "./conversation-log.js";
import { McpToolError } from "./mcp-error.js";
import type { PooledSession } from "./session-pool.js";

export interface AgentRules {
  /** The policy given with `--policy`; its `deny` holds against an agent. */
  policy?: Policy;
  /** Where requests come from (home, workspace); the session's workspace fills in when absent. */
  context?: PolicyContext;
  /** Every agent decision, and every refused one, is recorded here. */
  auditor?: SessionAuditor;
  /** The clock for the policy's `hours`; default `() => new Date()`. */
  now?: () => Date;
}

export type AgentVerdict =
  | { kind: "approve"; instruction?: string }
  | { kind: "deny"; instruction?: string }
  | { kind: "answer"; optionIds: string[]; writeIn?: string };

export interface AgentAnswer {
  result: "delivered";
  stepIndex: number;
  decidedBy: string;
}

/** Delivers `verdict` for `interactionId`; a refusal of any kind is a {@link McpToolError} with the sentence. */
export async function answerAsAgent(
  entry: PooledSession,
  interactionId: string,
  verdict: AgentVerdict,
  decidedBy: string,
  rules: AgentRules,
): Promise<AgentAnswer> {
  const request = entry.log.request(interactionId);
  const unfit = instructionRefusal(verdict, request, interactionId);
  if (unfit !== undefined) throw new McpToolError(unfit);
  // Awaited: the decision is on disk before the agent hears of it (a write failure is the auditor's to report).
  const record = async (delivery: string) => {
    rules.auditor?.answered({
      request,
      conversationId: entry.conversationId,
      interactionId,
      decision: verdict.kind,
      decidedBy,
      delivery,
      ...(verdict.kind === "deny" && verdict.instruction !== undefined ? { instruction: verdict.instruction } : {}),
    });
    await rules.auditor?.flush().catch(() => undefined);
  };

  if (verdict.kind !== "deny" && rules.policy !== undefined && request === undefined) {
    // The policy cannot be checked on a request never seen: nothing is sent on faith.
    throw new McpToolError(
      `No interaction ${interactionId} has been seen in conversation ${entry.conversationId}; take the id from wait_for, read_events or the pending resource.`,
    );
  }
  if (verdict.kind !== "deny" && rules.policy !== undefined && request !== undefined) {
    // Decided once: the verdict the session's policy wrote on the request (the ledger's), else decided here.
    const denied = await policyDenial(request, entry, rules);
    if (denied !== undefined) {
      await record("refused_by_policy");
      throw new McpToolError(
        `The team's policy denies this request (${denied}), so an agent may not ${verdict.kind} it; deny it, or ask a person, who can approve it from the CLI or the approval page.`,
      );
    }
  }

  let result: AnswerResult;
  try {
    // The one answer path: delivered, and recorded once where it is delivered (also when it throws).
    result = await respond(entry.session, interactionId, verdictOf(verdict), {
      decidedBy,
      ...(request === undefined ? {} : { request }),
      onAnswered: (answered) => rules.auditor?.answered(answered),
    });
  } finally {
    await rules.auditor?.flush().catch(() => undefined);
  }
  if (result.result === "delivered") return { result: "delivered", stepIndex: result.stepIndex, decidedBy };
  throw new McpToolError(refusal(result, interactionId, entry.conversationId));
}

/**
 * Why `verdict`'s instruction cannot travel, or undefined when it can (or
 * there is none). An approve never carries one; a deny carries one only for
 * a permission, known from the request the log saw (a deny of a request the
 * log never saw is passed on: its kind is not known here).
 */
function instructionRefusal(verdict: AgentVerdict, request: InteractionRequested | undefined, interactionId: string): string | undefined {
  if (verdict.kind === "answer" || verdict.instruction === undefined) return undefined;
  if (verdict.kind === "deny" && request === undefined) return undefined;
  const kind = request?.request.kind ?? "permission";
  if (instructionAllowed(kind, verdict.kind)) return undefined;
  if (verdict.kind === "approve") {
    return `agy's approval carries no instruction for the model, so it would be dropped and nothing was sent; approve interaction ${interactionId} without one, or deny it with the instruction.`;
  }
  return kind === "question"
    ? `agy's decline of a question carries no instruction for the model, so nothing was sent; deny interaction ${interactionId} without one, or answer it with writeIn.`
    : `Interaction ${interactionId} is a ${kind} request, whose deny carries no instruction for the model, so nothing was sent; deny it without one.`;
}

/** The agent's verdict as the one `Verdict` every door speaks (an approve's instruction was refused above). */
function verdictOf(verdict: AgentVerdict): Verdict {
  switch (verdict.kind) {
    case "approve":
      return { action: "approve" };
    case "deny":
      return { action: "deny", ...(verdict.instruction === undefined ? {} : { instruction: verdict.instruction }) };
    case "answer":
      return { action: "answer", optionIds: verdict.optionIds, ...(verdict.writeIn === undefined ? {} : { writeIn: verdict.writeIn }) };
  }
}

function refusal(result: Exclude<AnswerResult, { result: "delivered" }>, interactionId: string, conversationId: string): string {
  // The sentence every door gives (session/answer-text.ts), and the agent's next step.
  const text = describeAnswerSentence(result, { interactionId, conversationId });
  switch (result.result) {
    case "already_resolved":
    case "decided_by_policy":
      return `${text}. Call wait_for or read_events to see what happens now.`;
    case "timed_out":
      return `${text}. Call wait_for with until "pending_interaction" for the next one.`;
    case "not_found":
      return `${text}; take the id from wait_for, read_events or the pending resource.`;
  }
}

/** Why the policy denies `request` (its rule), or undefined when it does not. */
async function policyDenial(request: InteractionRequested, entry: PooledSession, rules: AgentRules): Promise<string | undefined> {
  if (request.policy !== undefined) {
    if (request.policy.decision !== "deny") return undefined;
    return request.policy.rule === null ? "its default" : `rule ${request.policy.rule}`;
  }
  // A session attached without the policy: the policy layer (the shell parser, globs) loads only now.
  const { decide, policyRequestOf } = await import("../policy/index.js");
  const decision = decide(rules.policy!, policyRequestOf(request.request, request.stepType), await contextFor(entry, request, rules));
  return decision.decision === "deny" ? decision.reason.replace(/\.$/, "") : undefined;
}

async function contextFor(entry: PooledSession, request: InteractionRequested, rules: AgentRules): Promise<PolicyContext> {
  const at = (rules.now ?? (() => new Date()))();
  let workspace = rules.context?.workspace;
  if (workspace === undefined) workspace = await entry.session.workspace().catch(() => undefined);
  return {
    // Symlinks resolved as the session's own policy resolves them (docs/policy.md, "Files").
    resolvePath: resolveRealPath,
    ...rules.context,
    ...(workspace === undefined ? {} : { workspace }),
    conversationId: request.conversationId,
    minuteOfDay: at.getHours() * 60 + at.getMinutes(),
  };
}
