/**
 * Which request a gate step is, so that an answer reaches only the gate it
 * was given for. agy retries a timed-out prompt as a new WAITING step at a
 * higher index, asking the same again (spike-notes §5.3); a later gate of
 * the same kind and variant — the second command of `a && b` — asks
 * something else. What tells them apart is what the step asks (the command
 * line, the file, the questions) and agy's tool call (`metadata.toolCall.id`,
 * in the poll projection that delivery reads, spike-notes §4.2, §5.9).
 */
import { asObject, asString } from "../protocol/json.js";
import type { InteractionRequest } from "../mapper/index.js";

export interface GateIdentity {
  /** The `requestedInteraction` variant: `permission`, `runCommand`, `filePermission`, `askQuestion`, or another gate's name. */
  variant: string;
  /** What it asks, as one string: a permission's action and target, each question with its options, another gate's block. */
  asks: string;
  /** agy's tool call behind the step, when the step names one. */
  toolCallId?: string;
}

/** The wire variant a request is answered in: `permission`, `runCommand`, `filePermission`, `askQuestion`, or the other gate's name. */
export function variantOf(request: InteractionRequest): string {
  if (request.kind === "permission") return request.variant ?? "permission";
  return request.kind === "question" ? "askQuestion" : request.variant;
}

/** agy's tool call id on a step (`metadata.toolCall.id`); undefined when the step names none. */
export function toolCallIdOf(step: unknown): string | undefined {
  return asString(asObject(asObject(asObject(step)?.["metadata"])?.["toolCall"])?.["id"]) || undefined;
}

/**
 * The identity of `request`, with the tool call of `step` when given. The
 * descriptions, persist suggestions and multi-select flags are left out: they
 * say how to show the request, not which request it is, and a projection may
 * lack them.
 */
export function gateIdentity(request: InteractionRequest, step?: unknown): GateIdentity {
  const toolCallId = step === undefined ? undefined : toolCallIdOf(step);
  const asks =
    request.kind === "permission"
      ? JSON.stringify([request.action, request.target])
      : request.kind === "question"
        ? JSON.stringify(request.questions.map((q) => [q.question, q.options.map((o) => [o.id, o.text])]))
        : JSON.stringify(request.spec);
  return { variant: variantOf(request), asks, ...(toolCallId === undefined ? {} : { toolCallId }) };
}

/**
 * True when both identities are provably one request: the same variant, the
 * same thing asked, and — when both steps name a tool call — the same tool call.
 */
export function sameRequest(a: GateIdentity, b: GateIdentity): boolean {
  if (a.variant !== b.variant || a.asks !== b.asks) return false;
  return a.toolCallId === undefined || b.toolCallId === undefined || a.toolCallId === b.toolCallId;
}
