/**
 * Option lists as agy draws them (spike-notes §13.2, §13.3): the
 * highlighted row starts at column 0 with `>` (`> 1. Yes`), the others are
 * indented two spaces; a label that embeds a long command wraps onto rows
 * that start at column 0 and may hold a blank row. Numbered lists (dialogs,
 * the /feedback menu) and unnumbered ones (trust screen, /model picker,
 * slash popup) are read apart, and so is the survey's one-row
 * `[1] Good  [2] Fine  [3] Bad  [0] Skip`. agy 1.2.x's amend field puts an
 * input row under option 1 (`    > …█`, §13 #31): noted, never an option.
 */
import type { ScreenOption } from "./screen-types.js";
import { collapse, isBlank } from "./screen-lines.js";

export interface OptionList {
  /** First and last row of the list (inclusive). */
  first: number;
  last: number;
  options: ScreenOption[];
  /** 1-based position of the `>` row in `options`, or null. */
  pointer: number | null;
  /** An input row (`    > █`, indented under an option) sits in the list: agy 1.2.x's amend field (Tab at a command approval). */
  amendField: boolean;
}

const NUMBERED = /^(?:([>❯]) | {2})([0-9]+)\. (.*)$/u;
const POINTER = /^[>❯] (\S.*)$/u;
// The amend field's input row under option 1: indented deeper than an option, `>` then the typed text and/or the cursor block.
const AMEND_INPUT = /^ {3,}[>❯](?: |$)/u;
const INDENTED = /^ {2}(\S.*)$/u;
// `↓ 41 more` under a scrolled list is not an option.
const MORE = /^\s*[↑↓]\s*[0-9]+ more\b/u;
const SURVEY_ITEM = /\[([0-9])\]\s+(\S+(?: \S+)*?)(?=\s+\[[0-9]\]|\s*$)/gu;

/** A key-hint footer under a list: `↑/↓ Navigate · …`, `Keyboard: …`, `esc Cancel · 1-6 Select …`. */
export function isFooter(row: string): boolean {
  const text = row.trim();
  if (text === "") return false;
  return (
    /(↑\/↓|↑↓).*Navigate/u.test(text) ||
    /^Keyboard:/u.test(text) ||
    /\besc (Cancel|Go Back|Close|Done|Skip)\b/u.test(text) ||
    /\benter (Confirm|Select|Continue|Submit|Toggle)\b/u.test(text) ||
    /\b[0-9]+-[0-9]+ Select\b/u.test(text)
  );
}

/** A footer that offers digit keys (`1-6 Select`). */
export function footerTakesDigits(row: string): boolean {
  return /\b[0-9]+-[0-9]+ Select\b/u.test(row);
}

/**
 * The numbered list whose `1.` row is the last one in rows [from, to), read
 * down to `to`: options numbered 1, 2, 3 … in order, wrapped rows folded in.
 * Rows after a blank row that are indented and no option end the list.
 */
export function numberedList(rows: readonly string[], from: number, to: number): OptionList | undefined {
  let start = -1;
  for (let i = to - 1; i >= from; i--) {
    const match = NUMBERED.exec(rows[i] ?? "");
    if (match !== null && match[2] === "1") {
      start = i;
      break;
    }
  }
  if (start < 0) return undefined;
  const parts: string[][] = [];
  const options: ScreenOption[] = [];
  let pointer: number | null = null;
  let last = start;
  let afterBlank = false;
  let amendField = false;
  for (let i = start; i < to; i++) {
    const row = rows[i] ?? "";
    if (options.length > 0 && !afterBlank && AMEND_INPUT.test(row)) {
      amendField = true;
      last = i;
      continue;
    }
    const match = NUMBERED.exec(row);
    if (match !== null && Number(match[2]) === options.length + 1) {
      options.push({ label: "", number: Number(match[2]) });
      parts.push([match[3] ?? ""]);
      if (match[1] !== undefined) pointer = options.length;
      last = i;
      afterBlank = false;
      continue;
    }
    if (isBlank(row)) {
      afterBlank = true;
      continue;
    }
    if (afterBlank && row.startsWith(" ")) break;
    parts[parts.length - 1]?.push(row);
    last = i;
    afterBlank = false;
  }
  options.forEach((option, i) => (option.label = collapse((parts[i] ?? []).join(" "))));
  return { first: start, last, options, pointer, amendField };
}

/**
 * The unnumbered list around the last `>` row in rows [from, to): the
 * `>` row and its neighbours indented two spaces, no blank row between.
 */
export function unnumberedList(rows: readonly string[], from: number, to: number): OptionList | undefined {
  let at = -1;
  for (let i = to - 1; i >= from; i--) {
    if (POINTER.test(rows[i] ?? "")) {
      at = i;
      break;
    }
  }
  if (at < 0) return undefined;
  const isItem = (row: string): boolean => !MORE.test(row) && (POINTER.test(row) || INDENTED.test(row));
  let first = at;
  while (first - 1 >= from && isItem(rows[first - 1] ?? "") && !POINTER.test(rows[first - 1] ?? "")) first--;
  let last = at;
  while (last + 1 < to && isItem(rows[last + 1] ?? "") && !POINTER.test(rows[last + 1] ?? "")) last++;
  const options: ScreenOption[] = [];
  for (let i = first; i <= last; i++) {
    const row = rows[i] ?? "";
    const label = POINTER.exec(row)?.[1] ?? INDENTED.exec(row)?.[1] ?? "";
    options.push({ label: collapse(label), number: null });
  }
  return { first, last, options, pointer: at - first + 1, amendField: false };
}

/** `[1] Good  [2] Fine  [3] Bad  [0] Skip`: the survey's options, or undefined for any other row. */
export function surveyOptions(row: string): ScreenOption[] | undefined {
  const text = row.trim();
  if (!text.startsWith("[")) return undefined;
  const options: ScreenOption[] = [];
  for (const match of text.matchAll(SURVEY_ITEM)) options.push({ label: match[2] ?? "", number: Number(match[1]) });
  const rebuilt = options.map((o) => `[${o.number}] ${o.label}`).join(" ");
  return options.length >= 2 && collapse(text) === rebuilt ? options : undefined;
}
