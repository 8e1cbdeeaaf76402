/**
 * agy's status row, the last row of its screen: a hint at column 0
 * (`? for shortcuts` idle, `esc to cancel` while generating, under a dialog
 * and under the slash popup) and the model label right-aligned. The row is
 * one column short of the pane, so the label's last character is cut
 * (`Gemini 3.8 Flash · hig` for effort "high"; 1.0.x drew
 * `Gemini 3.5 Flash (Medium)`). agy 1.2.1 drops the hint after a tool turn,
 * and pickers and the trust screen show the model alone. In plan and
 * accept-edits mode the label starts with the mode (spike-notes §13.1).
 * agy 1.2.x ends it with `· N task(s) · /tasks` while background tasks run
 * (§13 #26): removed from the label and counted, never read as busy.
 */
import type { PermissionMode } from "./screen-types.js";
import { isRule, width } from "./screen-lines.js";

/** The hint at the start of the status row, as far as the reader tells them apart. */
export type StatusHint = "shortcuts" | "cancel" | "queued" | "none" | "other";

export interface StatusRow {
  hint: StatusHint;
  /** The label without mode and effort, or null when the row has none. */
  model: string | null;
  /** The mode the label names; "default" when a label has no mode prefix; null without a label. */
  mode: PermissionMode | null;
  /** `· N task(s) · /tasks` at the label's end (agy 1.2.x): N background tasks; absent without the strip. */
  tasks?: number;
}

const HINTS: ReadonlyArray<[string, StatusHint]> = [
  ["? for shortcuts", "shortcuts"],
  ["esc to cancel", "cancel"],
  // A turn typed while agy generates waits in a queue (spike-notes §13 #40): still busy.
  ["Press up to edit queued messages", "queued"],
];

// Words that belong to key-hint footers, never to a model label.
const FOOTER_WORDS = /Navigate|\besc\b|\benter\b|\btab\b|Select|Confirm|Cancel/u;

const MODE_PREFIX = /^(plan|accept[- ]?edits?|auto[- ]?accept(?: edits)?)\s+·\s*/iu;

const EFFORTS = ["minimal", "low", "medium", "high", "xhigh", "max"];

/**
 * Reads `row` as the status row of a screen whose widest row is `paneWidth`
 * columns, or returns undefined when it is not one. A label must reach the
 * right edge (within two columns) and stand apart from the hint by at least
 * two spaces, so a key-hint footer or a reply line is never read as one.
 */
export function readStatusRow(row: string, paneWidth: number): StatusRow | undefined {
  if (row.trim() === "" || isRule(row)) return undefined;
  const body = row.trimStart();
  const lead = row.length - body.length;
  for (const [text, hint] of HINTS) {
    if (!body.startsWith(text)) continue;
    const rest = body.slice(text.length);
    if (rest.trim() === "") return { hint, model: null, mode: null };
    if (!/^ {2,}\S/u.test(rest)) return undefined;
    return withLabel(hint, rest.trim());
  }
  // No hint: the label alone, right-aligned (1.2.1 after a tool turn, pickers, the trust screen).
  // Not the pane's width: `capture-pane -J` joins a long wrapped shell line above agy into one wider row.
  if (lead >= 8 && !/ {2}/u.test(body)) return withLabel("none", body);
  // Some other hint we do not know, with a model label at the right edge.
  const split = /^(\S.*?) {8,}(\S.*)$/u.exec(row);
  const label = split?.[2] ?? "";
  if (split !== null && width(row) >= paneWidth - 2 && !FOOTER_WORDS.test(split[1] ?? "") && LABEL_SHAPE.test(label) && !/ {2}/u.test(label)) {
    return withLabel("other", label);
  }
  return undefined;
}

// What a model label looks like: `<model> · <effort>` or 1.0.x's `<model> (<Effort>)`, either cut.
const LABEL_SHAPE = / ·|\((?:min|low|med|hig|xhi|max)/iu;

// `· 1 task(s) · /tasks` after the effort (agy 1.2.x), possibly cut at the pane's edge (`· /tas`).
const TASKS = / · ([0-9]+) tasks?(?:\(s?\)?)?(?: ·(?: \/[a-z]*)?)?$/u;

function withLabel(hint: StatusHint, whole: string): StatusRow | undefined {
  if (FOOTER_WORDS.test(whole)) return undefined;
  const strip = TASKS.exec(whole);
  const label = strip === null ? whole : whole.slice(0, strip.index);
  const tasks = strip === null ? {} : { tasks: Number(strip[1]) };
  const row = modeAndModel(hint, label);
  return row.model === null ? row : { ...row, ...tasks };
}

function modeAndModel(hint: StatusHint, label: string): StatusRow {
  let rest = label;
  let mode: PermissionMode | null = "default";
  const prefix = MODE_PREFIX.exec(rest);
  if (prefix !== null) {
    mode = /^plan$/iu.test(prefix[1] ?? "") ? "plan" : "accept-edits";
    rest = rest.slice(prefix[0].length);
  } else if (rest.split(" ·").length >= 3) {
    // `<mode> · <model> · <effort>` with a mode word we do not know: the model is the middle part.
    mode = null;
    rest = rest.slice(rest.indexOf(" ·") + 2).trim();
  }
  const model = modelOf(rest);
  return model === "" ? { hint, model: null, mode: null } : { hint, model, mode };
}

/**
 * The model without its effort: `<model> · <effort>` from 1.1.13 on (the
 * effort cut at any length, even to nothing), `<model> (<Effort>)` in 1.0.x
 * (the `)` possibly cut). The effort is never parsed, only removed.
 */
export function modelOf(label: string): string {
  const dot = label.indexOf(" ·");
  if (dot >= 0) return label.slice(0, dot).trim();
  const paren = /^(.*\S)\s*\(([A-Za-z]*)\)?$/u.exec(label);
  if (paren !== null) {
    const word = (paren[2] ?? "").toLowerCase();
    if (word !== "" && EFFORTS.some((effort) => effort.startsWith(word))) return (paren[1] ?? "").trim();
  }
  return label.trim();
}
