/**
 * Which keys answer, decline or close a dialog on one agy version: plans
 * built on the key table (key-table.ts), pure. The rows a choice means are
 * read from the dialog's labels, never from positions — "No" is 4 of 4 or
 * 6, 2 of 2, 3 of 3 (spike-notes K2, K3, K8) — and a digit is planned only
 * where the table says it answers at once (K1), alone, never with an Enter.
 * tui-prompt.ts presses the keys, each through `chooseKey`.
 */
import {
  chooseKey,
  effectOf,
  KeyRefusal,
  promptSituation,
  situationWords,
  stepDialogOf,
  versionWords,
  effectWords,
  type KeyContext,
  type KeyTable,
} from "./key-table.js";
import type { ScreenPrompt } from "./screen-types.js";

/** How an option is chosen: its digit alone, or the pointer moved there and Enter. */
export type ChoosePlan = { how: "digit"; position: number; digit: string } | { how: "pointer"; position: number } | { how: "refused"; reason: string };

/**
 * How to choose option `position` (1-based) of `prompt` on this version:
 * the digit alone where a digit answers at once (after the caller checked
 * the label at that number), else pointer moves and Enter, else refused.
 */
export function choosePlan(table: KeyTable, prompt: ScreenPrompt, position: number, settled = false): ChoosePlan {
  const situation = promptSituation(prompt);
  const option = prompt.options[position - 1];
  if (option === undefined) return { how: "refused", reason: `the ${situationWords(situation)} has no row ${position}` };
  if (prompt.form !== undefined && prompt.form.total > 1) {
    return {
      how: "refused",
      reason: `the question form asks ${prompt.form.total} questions and a key answers only the one on screen (spike-notes K9); answer over RPC`,
    };
  }
  const digit = option.number === null || option.number < 0 || option.number > 9 ? undefined : String(option.number);
  const context: KeyContext = { settled, advertisedDigits: prompt.keys === "digits" };
  if (digit !== undefined && !(chooseKey(table, situation, digit, "answers_at_once", context) instanceof KeyRefusal)) return { how: "digit", position, digit };
  if (settled)
    return { how: "refused", reason: `no key is known to close ${situationWords(situation)} left over after an RPC answer on ${versionWords(table)}` };
  const moves = ["Up", "Down"].every((k) => effectOf(table, situation, k).effects.includes("moves_pointer"));
  const selects = effectOf(table, situation, "Enter").effects.includes("selects_pointed");
  if (moves && selects) return { how: "pointer", position };
  return { how: "refused", reason: `on ${versionWords(table)} no key is known to choose a row of ${situationWords(situation)}` };
}

/** A dialog's plain "No" row (`No`, `No, cancel`, `No, deny creation`), never an "always deny" one; 1-based, or undefined. */
export function noOption(prompt: ScreenPrompt): number | undefined {
  const rows = prompt.options
    .map((o, i) => ({ key: o.label.replace(/\s+/g, " ").trim().toLowerCase(), position: i + 1 }))
    .filter((r) => /^no\b/.test(r.key) && !/\balways\b/.test(r.key));
  return rows.length === 1 ? rows[0]!.position : undefined;
}

/** A dialog's plain "Yes" row (`Yes`, `Yes, run command`, `Yes, allow creation`), never an "always allow" or "tell" one. */
export function yesOption(prompt: ScreenPrompt): number | undefined {
  const rows = prompt.options
    .map((o, i) => ({ key: o.label.replace(/\s+/g, " ").trim().toLowerCase(), number: o.number, position: i + 1 }))
    .filter((r) => /^yes\b/.test(r.key) && !/\balways\b/.test(r.key) && !/\btell\b/.test(r.key));
  const numberedOne = rows.filter((r) => r.number === 1);
  if (prompt.options.some((o) => o.number !== null)) return numberedOne.length === 1 ? numberedOne[0]!.position : undefined;
  return rows[0]?.position;
}

/** How to decline: the "No" row chosen (digit or pointer), Escape where it declines (a question's Skip), or refused. */
export type DeclinePlan = ChoosePlan | { how: "escape" };

export function declinePlan(table: KeyTable, prompt: ScreenPrompt): DeclinePlan {
  const situation = promptSituation(prompt);
  const no = noOption(prompt);
  if (no !== undefined) return choosePlan(table, prompt, no);
  if (!(chooseKey(table, situation, "Escape", "declines") instanceof KeyRefusal)) return { how: "escape" };
  return {
    how: "refused",
    reason: `${capital(situationWords(situation))} shows no single "No" row, and Escape is not known to decline it safely on ${versionWords(table)}`,
  };
}

/** What an RPC answer chose, for matching the leftover dialog's row to it. */
export type SettledAnswer = { kind: "permission"; allow: boolean } | { kind: "question"; optionLabel?: string };

/** How to close agy's leftover dialog of a settled step: Escape, the answer's own digit, or nothing. */
export type ClosePlan = { how: "escape" } | { how: "digit"; position: number; digit: string } | { how: "none"; reason: string };

export function closePlan(table: KeyTable, prompt: ScreenPrompt, answer: SettledAnswer | undefined): ClosePlan {
  const situation = promptSituation(prompt);
  if (stepDialogOf(situation) === undefined) return { how: "none", reason: `${capital(situationWords(situation))} is about no step` };
  if (!(chooseKey(table, situation, "Escape", "dismisses", { settled: true }) instanceof KeyRefusal)) return { how: "escape" };
  const escape = effectOf(table, situation, "Escape", { settled: true });
  const why = escape.effects.includes("unknown") ? "" : ` (Escape would ${escape.effects.map(effectWords).join(" and ")}, spike-notes ${escape.fact})`;
  const none = (detail: string): ClosePlan => ({
    how: "none",
    reason: `no key is known to close ${situationWords(situation)} left over after an RPC answer on ${versionWords(table)}${why}${detail}`,
  });
  if (answer === undefined) return none("");
  const position = answerRow(prompt, answer);
  if (position === undefined) return none(`; and its rows show no single option matching the answer given`);
  const plan = choosePlan(table, prompt, position, true);
  if (plan.how === "digit") return plan;
  return none("");
}

function answerRow(prompt: ScreenPrompt, answer: SettledAnswer): number | undefined {
  if (answer.kind === "permission") return answer.allow ? yesOption(prompt) : noOption(prompt);
  if (answer.optionLabel === undefined) return undefined;
  const wanted = answer.optionLabel.replace(/\s+/g, " ").trim().toLowerCase();
  const rows = prompt.options.map((o, i) => ({ key: o.label.replace(/\s+/g, " ").trim().toLowerCase(), position: i + 1 })).filter((r) => r.key === wanted);
  return rows.length === 1 ? rows[0]!.position : undefined;
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
