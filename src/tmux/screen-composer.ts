/**
 * agy's input box: a full-width rule, a row starting with `>` (then the
 * draft's further rows, indented two spaces, or blank rows — 1.2.1 draws a
 * three-row box), and a second full-width rule (spike-notes §13.1). A
 * dialog replaces it; pickers, menus and the slash popup are drawn under it.
 *
 * A draft taller than the pane pushes the top rule (and the `>` row) off
 * screen: only the bottom rule shows, with the status row under it. That
 * box still holds a draft — never read it as empty.
 */
import { isBlank, isRule, width } from "./screen-lines.js";
import type { PermissionMode } from "./screen-types.js";

export interface Composer {
  /** Row of the top rule; -1 when it scrolled off. */
  top: number;
  /** Row of the bottom rule. */
  bottom: number;
  /** The text in the box (glyph and continuation indent removed); "" when empty or a placeholder. */
  draft: string;
  /** True when the box holds a person's text (or its top is off screen). */
  holdsDraft: boolean;
  /** The mode a placeholder names (plan / accept-edits), if one is shown. */
  placeholderMode: PermissionMode | undefined;
}

const GLYPH = /^[>❯](?: |$)/u;

// An EMPTY composer in plan / accept-edits mode shows a placeholder (1.2.x), e.g.
// `Plan mode: research & plan only (shift+tab to cycle)`; it is not a draft.
const PLACEHOLDER = /^([A-Za-z][A-Za-z -]{0,20}) mode: .*\(shift\+tab to cycle\)$/u;

function placeholderMode(word: string): PermissionMode | undefined {
  if (/^plan$/iu.test(word)) return "plan";
  if (/accept|edit/iu.test(word)) return "accept-edits";
  return undefined;
}

/**
 * The lowest composer on the screen above row `end` (exclusive), or
 * undefined. `end` is the status row (or the row count when there is none).
 */
export function findComposer(rows: readonly string[], end: number): Composer | undefined {
  const rules: number[] = [];
  for (let i = 0; i < end; i++) if (isRule(rows[i] ?? "")) rules.push(i);
  for (let k = rules.length - 1; k >= 1; k--) {
    const top = rules[k - 1] as number;
    const bottom = rules[k] as number;
    if (width(rows[top] ?? "") !== width(rows[bottom] ?? "")) continue;
    const box = rows.slice(top + 1, bottom);
    if (!isBox(box)) continue;
    return boxed(top, bottom, box);
  }
  return clipped(rows, rules, end);
}

/** The `>` row first, then rows indented as a draft's continuation, or blank. */
function isBox(box: readonly string[]): boolean {
  const [first, ...rest] = box;
  if (first === undefined || !GLYPH.test(first)) return false;
  return rest.every((row) => isBlank(row) || row.startsWith("  "));
}

function boxed(top: number, bottom: number, box: readonly string[]): Composer {
  const [first = "", ...rest] = box;
  const text = [first.replace(GLYPH, ""), ...rest.map((row) => row.replace(/^ {1,2}/u, ""))].join("\n").trim();
  // Collapsed: in a narrow pane the placeholder wraps like any text.
  const placeholder = PLACEHOLDER.exec(text.replace(/\s+/gu, " "));
  if (placeholder !== null) return { top, bottom, draft: "", holdsDraft: false, placeholderMode: placeholderMode(placeholder[1] ?? "") };
  return { top, bottom, draft: text, holdsDraft: text !== "", placeholderMode: undefined };
}

/**
 * One full-width rule with the status row right under it and
 * rows above it, and no other rule: the bottom of a box whose top scrolled
 * off. Its rows are all draft.
 */
function clipped(rows: readonly string[], rules: readonly number[], end: number): Composer | undefined {
  // The status row must be right under the rule: a turn separator never has one under it.
  if (rules.length !== 1 || end >= rows.length) return undefined;
  const bottom = rules[0] as number;
  if (bottom === 0 || bottom !== end - 1) return undefined;
  const box = rows.slice(0, bottom);
  const text = box
    .map((row, i) => (i === 0 && GLYPH.test(row) ? row.replace(GLYPH, "") : row.replace(/^ {1,2}/u, "")))
    .join("\n")
    .trim();
  return { top: -1, bottom, draft: text, holdsDraft: true, placeholderMode: undefined };
}
