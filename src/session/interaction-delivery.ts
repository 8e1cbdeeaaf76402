/**
 * Delivers an answer to the step it belongs to, re-read at delivery time
 * (spike-notes §5.2, §5.3): the captured step if it is still WAITING; if agy
 * timed it out, its retry — a WAITING step at a higher index that is provably
 * the same request (gate-identity.ts: the same variant, the same command line,
 * file or questions, and the same tool call when both steps name one, §5.9);
 * never another gate, even of the same kind and variant (the `git log` gate
 * after a timed-out `git status`), never a step that is not WAITING. "input
 * not registered" re-reads and retargets a strictly higher retry, or reports
 * `timed_out`. One delivery per interaction, also under concurrent calls.
 */
import { AgyBridgeError, RpcError } from "../errors.js";
import { asObject, asString, isObject } from "../protocol/json.js";
import { STEP_STATUS, STEP_TYPE_PREFIX } from "../protocol/wire-names.js";
import type { Step } from "../protocol/wire-schemas.js";
import type { AgyRpcClient } from "../rpc/client.js";
import type { FilePermissionAnswer, HandleInteractionInput, PermissionAnswer, QuestionAnswer, RunCommandAnswer } from "../rpc/requests.js";
// Their own files, not the mapper barrel, which builds every event schema with zod at import (docs/scale.md, "Start-up").
import { interactionIdFor } from "../mapper/ids.js";
import { interactionAnswer, type InteractionDecision } from "../mapper/interaction-answer.js";
import { interactionRequest } from "../mapper/interaction-spec.js";
import type { InteractionRequest } from "../mapper/index.js";
import type { SettledAnswer } from "../tmux/key-plans.js";
import type { ClosePromptResult } from "../tmux/types.js";
import { gateIdentity, sameRequest, variantOf, type GateIdentity } from "./gate-identity.js";
import { ownIndex, pageStart } from "./step-frontier.js";
import type { AnswerResult, PendingSummary } from "./types.js";

export type InteractionKind = InteractionRequest["kind"];

/** Where an interaction was first seen. */
export interface CapturedInteraction {
  interactionId: string;
  conversationId: string;
  trajectoryId: string;
  stepIndex: number;
  kind: InteractionKind;
  /** The `requestedInteraction` variant (see `variantOf`); absent, any variant of `kind` matches. */
  variant?: string;
  /**
   * What the gate asked when first seen. Which step may take the answer after
   * a timeout is decided by the captured step as re-read (which also names
   * agy's tool call); this stands in when the re-read step no longer says what
   * it asked. Absent with neither, no other step may take the answer.
   */
  identity?: GateIdentity;
}

/** The answer, independent of which step receives it. */
export type Verdict =
  | { kind: "permission"; allow: boolean; scope?: string; instruction?: string }
  | { kind: "question"; decline: true }
  | { kind: "question"; decline?: false; optionIds: string[]; writeIn?: string };

export interface DeliveryContext {
  client(): AgyRpcClient;
  /**
   * Called after a delivery with what the answer chose: closes the dialog agy
   * may keep open after an RPC answer, only with a key the key table marks
   * safe for a settled step on the session's agy version (spike-notes §5.4,
   * K7), else leaves it (`left_open`). Absent when no pane is known.
   */
  closePrompt?(answer: SettledAnswer | undefined): Promise<ClosePromptResult>;
  /** The agy version keys are chosen for in the TUI (the key table); null or absent: unknown. */
  agyVersion?: string | null;
  signal?: AbortSignal;
  /** Told just before an answer for `interactionId` (the target step's) is sent, and when its call settled: `took` unless agy refused it. */
  sending?(interactionId: string): void;
  sent?(interactionId: string, took: boolean): void;
}

/** At most this many retargets after "input not registered" (spike-notes §5.2). */
const MAX_ATTEMPTS = 5;

/** What a step asks of the user, or undefined when it asks nothing. */
export function requestOf(step: unknown): InteractionRequest | undefined {
  if (!isObject(step) || !isObject(step["requestedInteraction"])) return undefined;
  return interactionRequest(step, () => undefined);
}

export function kindOf(step: unknown): InteractionKind | undefined {
  return requestOf(step)?.kind;
}

export { variantOf };

/** True when `step` asks for the same kind and variant of answer as `captured`. */
function sameGate(step: unknown, captured: CapturedInteraction): boolean {
  const request = requestOf(step);
  if (request === undefined || request.kind !== captured.kind) return false;
  return captured.variant === undefined || variantOf(request) === captured.variant;
}

export function trajectoryOf(step: unknown): string | undefined {
  return asString(asObject(asObject(asObject(step)?.["metadata"])?.["sourceTrajectoryStepInfo"])?.["trajectoryId"]) || undefined;
}

/** What the captured gate asked: its step as re-read (with agy's tool call), else what it asked when first seen. */
function askedBy(own: Step | undefined, captured: CapturedInteraction): GateIdentity | undefined {
  const request = own === undefined ? undefined : requestOf(own);
  if (request === undefined) return captured.identity;
  // A step that now asks for another kind or variant of answer is not the gate captured: nothing is its retry.
  return sameGate(own, captured) ? gateIdentity(request, own) : undefined;
}

/** True when `step` is agy asking the request `asked` again: provably the same request (gate-identity.ts). */
function asksAgain(step: unknown, asked: GateIdentity): boolean {
  const request = requestOf(step);
  return request !== undefined && sameRequest(gateIdentity(request, step), asked);
}

/** A gate step that left WAITING by an answer: it went on (running, done), rather than timing out (ERROR) or being stopped. */
function movedOnByAnswer(step: unknown): boolean {
  const status = isObject(step) ? step["status"] : undefined;
  return status === STEP_STATUS.RUNNING || status === STEP_STATUS.DONE || status === STEP_STATUS.PENDING || status === STEP_STATUS.GENERATING;
}

function isWaiting(step: unknown): boolean {
  return isObject(step) && step["status"] === STEP_STATUS.WAITING;
}

/** Steps by index, read from `from` with `stepOffset` (flat in the history length). */
async function readFrom(ctx: DeliveryContext, conversationId: string, from: number): Promise<Map<number, Step>> {
  const { steps } = await ctx.client().getCascadeTrajectorySteps({ conversationId, stepOffset: from }, { signal: ctx.signal });
  const start = pageStart(steps, from);
  const out = new Map<number, Step>();
  steps.forEach((step, i) => {
    const index = ownIndex(step) ?? start + i;
    if (index >= from) out.set(index, step);
  });
  return out;
}

/** Finds an interaction id no event announced to us: a scan of the whole conversation. */
export async function findInteraction(ctx: DeliveryContext, conversationId: string, interactionId: string): Promise<CapturedInteraction | undefined> {
  const steps = await readFrom(ctx, conversationId, 0);
  for (const [stepIndex, step] of steps) {
    const kind = kindOf(step);
    const trajectoryId = trajectoryOf(step);
    if (kind === undefined || trajectoryId === undefined) continue;
    if (interactionIdFor(conversationId, trajectoryId, stepIndex) === interactionId) {
      const request = requestOf(step);
      return { interactionId, conversationId, trajectoryId, stepIndex, kind, ...(request === undefined ? {} : { variant: variantOf(request) }) };
    }
  }
  return undefined;
}

type Target = { stepIndex: number; trajectoryId: string; step: Step } | { none: AnswerResult };

/**
 * The captured step if WAITING. If it timed out, agy's retry chain is
 * followed upwards through the steps that ask the same request again: one
 * that timed out too hands on to the next; the first one WAITING (at or above
 * `floor`) takes the answer; one that went on by an answer means the request
 * was answered (`already_resolved`); one stopped ends the chain (`timed_out`).
 * Steps that ask anything else — another command, file or question — are
 * passed over, whatever their kind.
 */
function chooseTarget(captured: CapturedInteraction, steps: Map<number, Step>, floor: number): Target {
  const own = steps.get(captured.stepIndex);
  if (own !== undefined && isWaiting(own) && floor <= captured.stepIndex && sameGate(own, captured)) {
    return { stepIndex: captured.stepIndex, trajectoryId: trajectoryOf(own) ?? captured.trajectoryId, step: own };
  }
  if (own === undefined) return { none: { result: "not_found" } };
  // Left WAITING by an answer (here, in the TUI, or another caller): the verdict belongs to nobody else.
  if (own["status"] !== STEP_STATUS.ERROR) return { none: { result: "already_resolved", stepIndex: captured.stepIndex } };
  const timedOut: Target = { none: { result: "timed_out", stepIndex: captured.stepIndex } };
  const asked = askedBy(own, captured);
  if (asked === undefined) return timedOut;
  const above = [...steps.keys()].filter((index) => index > captured.stepIndex).sort((a, b) => a - b);
  for (const index of above) {
    const step = steps.get(index)!;
    if (!asksAgain(step, asked)) continue;
    // Timed out too (agy asks once more), or not yet waiting: the chain goes on above it.
    if (step["status"] === STEP_STATUS.ERROR || step["status"] === STEP_STATUS.PENDING) continue;
    if (isWaiting(step)) {
      // Below the floor: the retry agy just refused ("input not registered"), read before it settled.
      if (index < floor) continue;
      return { stepIndex: index, trajectoryId: trajectoryOf(step) ?? captured.trajectoryId, step };
    }
    if (movedOnByAnswer(step)) return { none: { result: "already_resolved", stepIndex: index } };
    return timedOut;
  }
  return timedOut;
}

/**
 * The step an answer for `captured` would go to now (the captured step if it
 * still waits, else its timeout retry), with what it asks; or the result that
 * says why there is none.
 */
export async function currentTarget(
  ctx: DeliveryContext,
  captured: CapturedInteraction,
): Promise<{ stepIndex: number; request: InteractionRequest } | { none: AnswerResult }> {
  const target = chooseTarget(captured, await readFrom(ctx, captured.conversationId, captured.stepIndex), 0);
  if ("none" in target) return target;
  const request = requestOf(target.step);
  if (request === undefined) return { none: { result: "not_found" } };
  return { stepIndex: target.stepIndex, request };
}

/**
 * The wire answer for `verdict` on `step`, built by the mapper's
 * `interactionAnswer` (question texts are sent back verbatim; the first
 * question gets the choice, later ones none). A `runCommand` answer also
 * echoes the proposed command line as proposed and submitted, which one IDE
 * build required (spike-notes §10.7, §12).
 */
export function answerPayload(
  conversationId: string,
  target: { stepIndex: number; trajectoryId: string; step: Step },
  verdict: Verdict,
): HandleInteractionInput {
  const request = requestOf(target.step);
  if (request === undefined) {
    throw new AgyBridgeError("internal", `Step ${target.stepIndex} no longer says what it asks; re-read the conversation and answer again.`);
  }
  const decision: InteractionDecision =
    verdict.kind === "permission"
      ? {
          allow: verdict.allow,
          ...(verdict.scope === undefined ? {} : { scope: verdict.scope }),
          ...(!verdict.allow && verdict.instruction !== undefined ? { userDenyInstruction: verdict.instruction } : {}),
        }
      : verdict.decline === true || request.kind !== "question"
        ? { responses: [] }
        : {
            responses: request.questions.map((_, i) =>
              i === 0
                ? { selectedOptionIds: verdict.optionIds, ...(verdict.writeIn === undefined ? {} : { writeInResponse: verdict.writeIn }) }
                : { selectedOptionIds: [] },
            ),
          };
  const interaction = interactionAnswer({ trajectoryId: target.trajectoryId, stepIndex: target.stepIndex, request }, decision);
  const base = { conversationId, trajectoryId: target.trajectoryId, stepIndex: target.stepIndex };
  if (isObject(interaction["permission"])) return { ...base, permission: interaction["permission"] as unknown as PermissionAnswer };
  if (isObject(interaction["askQuestion"])) return { ...base, askQuestion: interaction["askQuestion"] as unknown as QuestionAnswer };
  if (isObject(interaction["filePermission"])) {
    return { ...base, filePermission: interaction["filePermission"] as unknown as FilePermissionAnswer };
  }
  if (isObject(interaction["runCommand"])) {
    const answer = interaction["runCommand"] as unknown as RunCommandAnswer;
    const line = request.kind === "permission" ? request.target : "";
    return { ...base, runCommand: line === "" ? answer : { ...answer, proposedCommandLine: line, submittedCommandLine: line } };
  }
  // interactionAnswer refuses every kind it cannot build, so this is a bug, not a user's mistake.
  const variant = Object.keys(interaction).find((key) => key !== "trajectoryId" && key !== "stepIndex") ?? "unknown";
  throw new AgyBridgeError(
    "internal",
    `agy-bridge built a ${variant} answer for step ${target.stepIndex} that it has no request for; nothing was sent — answer it in the agy TUI and report this.`,
  );
}

/** Checks a verdict against the request it answers; throws `invalid_argument` with what to do. */
export function checkVerdict(request: InteractionRequest | undefined, verdict: Verdict, interactionId: string): void {
  if (request === undefined) return;
  if (request.kind === "other") {
    const what = request.variant === "" ? "a gate of no known kind" : `the ${request.variant} gate`;
    throw new AgyBridgeError(
      "invalid_argument",
      `Interaction ${interactionId} waits on ${what}, which agy-bridge cannot answer over RPC; answer it in the agy TUI.`,
    );
  }
  if (request.kind !== verdict.kind) {
    const use = request.kind === "permission" ? "approve or deny" : "answer (or deny to decline)";
    throw new AgyBridgeError("invalid_argument", `Interaction ${interactionId} is a ${request.kind}; use ${use}.`);
  }
  if (request.kind === "permission" && verdict.kind === "permission") {
    // agy's schema gives these variants no field for them: refuse rather than drop the caller's words.
    if (request.variant === "runCommand" && verdict.scope !== undefined) {
      throw new AgyBridgeError("invalid_argument", `Interaction ${interactionId} is a runCommand gate, which takes no scope; approve it without one.`);
    }
    if (request.variant !== undefined && !verdict.allow && verdict.instruction !== undefined) {
      throw new AgyBridgeError(
        "invalid_argument",
        `Interaction ${interactionId} is a ${request.variant} gate, which takes no instruction for the model; deny it without one.`,
      );
    }
  }
  if (request.kind === "question" && verdict.kind === "question" && verdict.decline !== true) {
    const first = request.questions[0];
    const known = new Set(first?.options.map((o) => o.id) ?? []);
    const unknown = verdict.optionIds.filter((id) => !known.has(id));
    if (unknown.length > 0) {
      throw new AgyBridgeError(
        "invalid_argument",
        `Option ${unknown.join(", ")} is not offered by interaction ${interactionId}; choose from ${[...known].join(", ") || "none"}.`,
      );
    }
    if (verdict.optionIds.length === 0 && (verdict.writeIn ?? "") === "") {
      throw new AgyBridgeError("invalid_argument", `Answer interaction ${interactionId} with at least one option id or a write-in.`);
    }
    if (first !== undefined && !first.multiSelect && verdict.optionIds.length > 1) {
      throw new AgyBridgeError("invalid_argument", `Interaction ${interactionId} takes one option, not ${verdict.optionIds.length}.`);
    }
  }
}

/** Re-reads, picks the target, posts the answer; loops on "input not registered". */
export async function deliverVerdict(ctx: DeliveryContext, captured: CapturedInteraction, verdict: Verdict): Promise<AnswerResult> {
  let floor = 0;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const steps = await readFrom(ctx, captured.conversationId, captured.stepIndex);
    const target = chooseTarget(captured, steps, floor);
    if ("none" in target) return target.none;
    if (attempt === 0) checkVerdict(requestOf(target.step), verdict, captured.interactionId);
    const payload = answerPayload(captured.conversationId, target, verdict);
    const targetId = interactionIdFor(captured.conversationId, target.trajectoryId, target.stepIndex);
    ctx.sending?.(targetId);
    try {
      await ctx.client().handleCascadeUserInteraction(payload, { signal: ctx.signal });
      ctx.sent?.(targetId, true);
    } catch (error) {
      // A broken connection may have carried the answer; an HTTP error status says it was not taken.
      ctx.sent?.(targetId, !(error instanceof RpcError && error.httpStatus !== undefined));
      if (error instanceof RpcError && error.isInputNotRegistered) {
        // The step timed out under us: only a strictly higher retry may take the verdict.
        floor = target.stepIndex + 1;
        const again = await readFrom(ctx, captured.conversationId, captured.stepIndex);
        const now = again.get(target.stepIndex);
        // Answered meanwhile (in the TUI, by another caller), not timed out or stopped: nothing to retarget.
        if (movedOnByAnswer(now)) return { result: "already_resolved", stepIndex: target.stepIndex };
        const asked = askedBy(again.get(captured.stepIndex), captured);
        const retry = asked !== undefined && [...again].some(([i, s]) => i >= floor && isWaiting(s) && asksAgain(s, asked));
        if (!retry) return { result: "timed_out", stepIndex: target.stepIndex };
        continue;
      }
      throw error;
    }
    if (ctx.closePrompt === undefined) return { result: "delivered", stepIndex: target.stepIndex };
    const closed = await ctx
      .closePrompt(settledAnswer(requestOf(target.step), verdict))
      .catch((error: unknown) => ({ result: "failed" as const, reason: AgyBridgeError.from(error).message }));
    return { result: "delivered", stepIndex: target.stepIndex, prompt: { result: closed.result, reason: closed.reason } };
  }
  return { result: "timed_out", stepIndex: captured.stepIndex };
}

/** What `verdict` chose on the dialog of `request`: the row a leftover dialog is closed with on agy 1.2.x (spike-notes K7). */
export function settledAnswer(request: InteractionRequest | undefined, verdict: Verdict): SettledAnswer | undefined {
  if (verdict.kind === "permission") return { kind: "permission", allow: verdict.allow };
  if (verdict.decline === true || request?.kind !== "question" || verdict.optionIds.length !== 1 || verdict.writeIn !== undefined) return undefined;
  const label = request.questions[0]?.options.find((o) => o.id === verdict.optionIds[0])?.text;
  return label === undefined ? undefined : { kind: "question", optionLabel: label };
}

/**
 * The interactions WAITING now, from one page read at `from` (every step
 * below the frontier has settled, so none of them waits).
 */
export async function readPending(ctx: DeliveryContext, conversationId: string, from: number): Promise<PendingSummary[]> {
  const steps = await readFrom(ctx, conversationId, from);
  const out: PendingSummary[] = [];
  for (const [stepIndex, step] of steps) {
    if (!isWaiting(step)) continue;
    const request = requestOf(step);
    const trajectoryId = trajectoryOf(step);
    if (request === undefined || trajectoryId === undefined) continue;
    out.push({
      interactionId: interactionIdFor(conversationId, trajectoryId, stepIndex),
      kind: request.kind,
      stepIndex,
      trajectoryId,
      stepType: typeSuffixOf(step),
      summary: request.kind === "permission" ? request.target : request.kind === "question" ? (request.questions[0]?.question ?? "") : request.variant,
    });
  }
  return out;
}

function typeSuffixOf(step: Step): string {
  const type = asString(step["type"]) ?? "";
  return type.startsWith(STEP_TYPE_PREFIX) ? type.slice(STEP_TYPE_PREFIX.length) : type;
}
