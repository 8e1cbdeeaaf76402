/**
 * Which row of a dialog a choice means, read from the dialog's labels
 * (spike-notes §13, K2, K3, K8), never from a position: "Yes" is the plain
 * `1. Yes` / `1. Yes, run command` / `1. Yes, allow creation` row (never an
 * "always allow" one), "No" moves — 4 of 4 or 6, 2 of 2, 3 of 3 — and is
 * found by its label (`noOption` in key-table.ts); a question's options go
 * by label. Pure; the keys that reach the row are chosen by the key table
 * and pressed by `tui-prompt.ts`.
 */
import { yesOption } from "./key-plans.js";
import type { ScreenPrompt, ScreenPromptKind } from "./screen-types.js";
import type { TuiChoice } from "./types.js";

/** The prompts that are agy's dialogs about a step: what an answer closes and a typed turn would approve. */
export const DIALOG_KINDS: readonly ScreenPromptKind[] = ["command", "file", "question", "other"];

/** The 1-based position in `prompt.options` the choice means, or why there is none. */
export function targetOption(prompt: ScreenPrompt, choice: Exclude<TuiChoice, { kind: "decline" }>): { position: number } | { failure: string } {
  const rows = prompt.options.map((o, i) => ({ ...o, position: i + 1, key: normal(o.label) }));
  if (choice.kind === "approve") {
    const position = yesOption(prompt);
    if (position === undefined) return { failure: `the ${prompt.kind} dialog has no plain "Yes" row numbered 1 (${described(prompt)})` };
    return { position };
  }
  const wanted = choice.label === undefined ? undefined : normal(choice.label);
  const byLabel = wanted === undefined ? [] : rows.filter((r) => r.key === wanted || stripBox(r.key) === wanted);
  const matches = byLabel.length > 0 ? byLabel : rows.filter((r) => choice.number !== undefined && r.number === choice.number);
  if (matches.length === 1) return { position: matches[0]!.position };
  const what = wanted !== undefined ? `"${choice.label ?? ""}"` : `number ${choice.number ?? "?"}`;
  if (matches.length === 0) return { failure: `the dialog offers no option ${what} (${described(prompt)})` };
  return { failure: `the dialog offers ${matches.length} options matching ${what}, so none is chosen (${described(prompt)})` };
}

/** A dialog's identity on screen: a pointer move keeps it, a new dialog changes it. */
export function promptSignature(prompt: ScreenPrompt): string {
  return [prompt.kind, prompt.question ?? "", ...prompt.options.map((o) => `${o.number ?? ""}.${o.label}`)].join("\u0000");
}

/** `command dialog "Do you want to proceed?" with 1. Yes, 2. …, pointer on 1`: for failure sentences. */
export function described(prompt: ScreenPrompt): string {
  const options = prompt.options.map((o) => `${o.number === null ? "" : `${o.number}. `}${clip(o.label)}`).join(" / ");
  const question = prompt.question === null ? "" : ` "${clip(prompt.question)}"`;
  return `${prompt.kind} prompt${question}: ${options || "no options"}; pointer on ${prompt.pointer ?? "none"}`;
}

function normal(label: string): string {
  return label.replace(/\s+/g, " ").trim().toLowerCase();
}

/** `[ ] red` / `[x] red` (a multi-select row) → `red`. */
function stripBox(key: string): string {
  return key.replace(/^\[[ x✓✔]?\]\s*/u, "");
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}
