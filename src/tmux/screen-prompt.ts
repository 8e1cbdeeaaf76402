/**
 * What holds the keyboard on agy's screen (spike-notes §13.2, §13.3).
 *
 * - A dialog REPLACES the composer: the tool row, a header word
 *   (`Command`, `Create file`), a full-width rule, the body, the question,
 *   the options, a blank row and a key-hint footer, then the status row.
 *   The trust screen has no rules; a survey is one row of `[N] Label`.
 * - Pickers, the /feedback menu and the slash popup are drawn BELOW an
 *   empty (or `/`) composer, footer last.
 *
 * Only what is below the lowest composer, or what replaced it, is live: a
 * footer with a composer drawn under it is transcript text (§13.3).
 * Anything under the composer that is not a list we know makes the screen
 * unknown, never ready — a guess there would type into it.
 */
import type { ScreenPrompt, ScreenPromptKind } from "./screen-types.js";
import { isBlank, isRule } from "./screen-lines.js";
import { footerTakesDigits, isFooter, numberedList, surveyOptions, unnumberedList, type OptionList } from "./screen-options.js";

export interface PromptReading {
  prompt: ScreenPrompt | null;
  /** Rows were there that hold the keyboard or might, but match no prompt we know. */
  unrecognized: boolean;
}

const NONE: PromptReading = { prompt: null, unrecognized: false };
const UNKNOWN: PromptReading = { prompt: null, unrecognized: true };

/** Rows [from, to) under the composer's bottom rule, above the status row. */
export function promptBelowComposer(rows: readonly string[], from: number, to: number): PromptReading {
  const end = lastFilled(rows, from, to);
  if (end <= from) return NONE;
  const survey = surveyAt(rows, from, end);
  if (survey !== undefined) return { prompt: survey, unrecognized: false };
  const footer = isFooter(rows[end - 1] ?? "") ? end - 1 : -1;
  const listEnd = footer >= 0 ? footer : end;
  const list = numberedList(rows, from, listEnd) ?? unnumberedList(rows, from, listEnd);
  if (list === undefined || (list.pointer === null && footer < 0)) return UNKNOWN;
  const slash = list.options.every((o) => o.label.startsWith("/"));
  const kind: ScreenPromptKind = slash ? "slash" : list.options[0]?.number === null ? "picker" : "menu";
  return { prompt: promptOf(kind, rows, from, list, footer), unrecognized: false };
}

/** A dialog that replaced the composer: the rows above the status row (`to`), from the last rule down. */
export function dialogPrompt(rows: readonly string[], to: number): PromptReading {
  let rule = -1;
  for (let i = to - 1; i >= 0; i--) {
    if (isRule(rows[i] ?? "")) {
      rule = i;
      break;
    }
  }
  const from = rule + 1;
  const end = lastFilled(rows, from, to);
  if (end <= from) return NONE;
  const survey = surveyAt(rows, from, end);
  if (survey !== undefined) return { prompt: survey, unrecognized: false };
  const footer = isFooter(rows[end - 1] ?? "") ? end - 1 : -1;
  const listEnd = footer >= 0 ? footer : end;
  const numbered = numberedList(rows, from, listEnd);
  // Without a footer only a numbered list with its `>` row counts: an echoed turn (`> text`) is no list.
  let list: OptionList | undefined = numbered !== undefined && (numbered.pointer !== null || footer >= 0) ? numbered : undefined;
  if (list === undefined && footer >= 0) list = unnumberedList(rows, from, listEnd);
  if (list === undefined || lastFilled(rows, list.last + 1, listEnd) > list.last + 1) return footer >= 0 ? UNKNOWN : NONE;
  const header = rule > 0 ? (rows[rule - 1] ?? "").trim() : "";
  const body = rows.slice(from, list.first).map((row) => row.trim());
  const prompt = promptOf("other", rows, from, list, footer);
  prompt.kind = dialogKind(header, toolAbove(rows, rule), body, prompt.question);
  return { prompt, unrecognized: false };
}

/**
 * The dialog's kind from its header word (`Command`, `Create file`), its
 * body and question, and — when those say nothing — the tool row above it
 * (`● Bash(…)`, `● Create(…)`). What none of them names is `other`.
 */
function dialogKind(header: string, tool: string, body: readonly string[], question: string | null): ScreenPromptKind {
  if (body.includes("Accessing workspace:") || question?.startsWith("Do you trust") === true) return "trust";
  if (header === "Command" || body.includes("Requesting permission for:") || question === "Do you want to proceed?" || question === "Run this command?") return "command";
  if (/\bfile\b/iu.test(header) || (question !== null && /\bthis file\?$/u.test(question))) return "file";
  if (/\bquestions?\b/iu.test(header)) return "question";
  if (/^(Bash|Shell|RunCommand)\(/u.test(tool)) return "command";
  if (/^(Create|Edit|Write|Delete)\(/u.test(tool)) return "file";
  if (/^Ask/u.test(tool)) return "question";
  return "other";
}

/** The tool row (`● Bash(…)`) just above a dialog's header word, without its bullet; "" when there is none. */
function toolAbove(rows: readonly string[], rule: number): string {
  for (let i = rule - 2; i >= 0 && i >= rule - 4; i--) {
    const row = rows[i] ?? "";
    if (row.startsWith("● ")) return row.slice(2);
    if (!isBlank(row)) return "";
  }
  return "";
}

function promptOf(kind: ScreenPromptKind, rows: readonly string[], from: number, list: OptionList, footer: number): ScreenPrompt {
  return {
    kind,
    question: questionAbove(rows, from, list.first),
    options: list.options,
    pointer: list.pointer,
    keys: footer >= 0 && footerTakesDigits(rows[footer] ?? "") ? "digits" : "arrows",
  };
}

/** The survey row (`[1] Good … [0] Skip`), last or just above a footer; it takes digits. */
function surveyAt(rows: readonly string[], from: number, end: number): ScreenPrompt | undefined {
  for (const at of [end - 1, end - 2]) {
    if (at < from) continue;
    const options = surveyOptions(rows[at] ?? "");
    if (options === undefined) continue;
    if (at === end - 2 && !isFooter(rows[end - 1] ?? "")) continue;
    return { kind: "survey", question: questionAbove(rows, from, at), options, pointer: null, keys: "digits" };
  }
  return undefined;
}

// A question is a sentence ending in "?" (optionally followed by a parenthesis: "… session? (optional)").
const QUESTION = /\?(?:\s*\([^)]*\))?$/u;
const QUESTION_REACH = 6;

/** The nearest row above `first` (within the prompt, a few rows up) that asks a question, or null. */
function questionAbove(rows: readonly string[], from: number, first: number): string | null {
  let seen = 0;
  for (let i = first - 1; i >= from && seen < QUESTION_REACH; i--) {
    const row = (rows[i] ?? "").trim();
    if (row === "") continue;
    if (isRule(row)) break;
    if (QUESTION.test(row)) return row;
    seen++;
  }
  return null;
}

/** One past the last non-blank row in [from, to). */
function lastFilled(rows: readonly string[], from: number, to: number): number {
  let end = to;
  while (end > from && isBlank(rows[end - 1])) end--;
  return end;
}
