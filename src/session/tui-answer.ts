/**
 * Answering a gate in agy's TUI instead of over RPC: for gates RPC cannot
 * answer (kind `other`) and for `via: "tui"`. The step is re-read first (it
 * must still wait); the choice is made on the dialog itself by the driver
 * with the keys the key table gives the session's agy version — the
 * option's digit alone where a digit answers at once (spike-notes K1), else
 * the pointer moved one key at a time and Enter only on the intended row; a
 * deny is the dialog's "No" row found by its label (K2, K3, K8). A failed
 * answer throws a `TuiAnswerError` carrying the screen that stopped it.
 */
import { AgyBridgeError } from "../errors.js";
import type { PaneRef } from "../discovery/types.js";
import type { InteractionRequest } from "../mapper/index.js";
import { TuiAnswerError } from "../tmux/tui-answer-error.js";
import type { ScreenPromptKind } from "../tmux/screen-types.js";
import type { TuiChoice } from "../tmux/types.js";
import { currentTarget, type CapturedInteraction, type DeliveryContext, type Verdict } from "./interaction-delivery.js";
import type { AnswerResult, TurnDriver } from "./types.js";

/** Delivers `verdict` by acting on the dialog in `pane`. */
export async function answerInTui(
  ctx: DeliveryContext,
  driver: TurnDriver,
  pane: PaneRef | undefined,
  captured: CapturedInteraction,
  verdict: Verdict,
): Promise<AnswerResult> {
  const id = captured.interactionId;
  if (pane === undefined) {
    throw new AgyBridgeError(
      "invalid_argument",
      `Answering interaction ${id} in the TUI needs agy's tmux pane, and none is known; pass --pane (or attach with a pane).`,
    );
  }
  const target = await currentTarget(ctx, captured);
  if ("none" in target) return target.none;
  const choice = choiceFor(target.request, verdict, id);
  const result = await driver.answerPrompt(pane, choice, {
    kinds: kindsFor(target.request),
    agyVersion: ctx.agyVersion ?? null,
    ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
  });
  if (result.result !== "answered") throw new TuiAnswerError(result, `Interaction ${id} (step ${target.stepIndex}) was not answered in the TUI`);
  return { result: "delivered", stepIndex: target.stepIndex, via: "tui" };
}

/** The dialog row a verdict means; refuses what a dialog cannot carry (a scope, an instruction, a write-in, several options). */
function choiceFor(request: InteractionRequest, verdict: Verdict, id: string): TuiChoice {
  if (verdict.kind === "permission") {
    if (request.kind === "question") throw new AgyBridgeError("invalid_argument", `Interaction ${id} is a question; use answer (or deny to decline).`);
    if (verdict.allow && verdict.scope !== undefined) {
      throw new AgyBridgeError("invalid_argument", `A scope cannot be chosen by agy-bridge in the TUI; approve interaction ${id} without one, or over RPC.`);
    }
    if (!verdict.allow && verdict.instruction !== undefined) {
      throw new AgyBridgeError(
        "invalid_argument",
        `An instruction cannot be typed into agy's dialog (text in a dialog approves it); deny interaction ${id} without one, or over RPC.`,
      );
    }
    return verdict.allow ? { kind: "approve" } : { kind: "decline" };
  }
  if (request.kind !== "question" && request.kind !== "other")
    throw new AgyBridgeError("invalid_argument", `Interaction ${id} is a ${request.kind}; use approve or deny.`);
  if (verdict.decline === true) return { kind: "decline" };
  if (verdict.writeIn !== undefined || verdict.optionIds.length !== 1) {
    throw new AgyBridgeError(
      "invalid_argument",
      `In the TUI agy-bridge chooses exactly one option and types no text (text in a dialog approves it); answer interaction ${id} with one --option, or over RPC.`,
    );
  }
  const optionId = verdict.optionIds[0]!;
  if (request.kind === "other") return { kind: "option", number: Number(optionId) };
  const options = request.questions[0]?.options ?? [];
  const index = options.findIndex((o) => o.id === optionId);
  if (index < 0)
    throw new AgyBridgeError(
      "invalid_argument",
      `Option ${optionId} is not offered by interaction ${id}; choose from ${options.map((o) => o.id).join(", ") || "none"}.`,
    );
  return { kind: "option", label: options[index]!.text, number: index + 1 };
}

/** The dialogs the answer may act on: a permission's command or file dialog, a question's, or any for other gates. */
function kindsFor(request: InteractionRequest): ScreenPromptKind[] {
  if (request.kind === "permission")
    return request.variant === "filePermission" ? ["file"] : request.variant === "runCommand" ? ["command"] : ["command", "file", "other"];
  if (request.kind === "question") return ["question"];
  return ["command", "file", "question", "other"];
}
