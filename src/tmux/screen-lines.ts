/**
 * The rows of one captured screen, cleaned for reading: colour codes
 * dropped (a capture made with `-e`, or a log of raw output), trailing
 * spaces cut, and the blank rows under agy's content removed — agy draws
 * inline and top-anchored, so a tall pane holds its screen in the first rows
 * and blanks below (spike-notes §13.1).
 */

// CSI (colours, cursor moves) and OSC (titles, links) sequences; capture-pane -p has none.
const ESCAPES = /\u001b\[[0-9;?<>=]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-_]/gu;

/** The screen's rows, trailing spaces and trailing blank rows removed. */
export function screenRows(text: string): string[] {
  const rows = text
    .replace(ESCAPES, "")
    .replace(/\r\n?/g, "\n")
    .replace(/\u00a0/g, " ")
    .split("\n")
    .map((row) => row.trimEnd());
  while (rows.length > 0 && rows[rows.length - 1] === "") rows.pop();
  return rows;
}

/**
 * A rule drawn by agy: a row of `─` only, starting at column 0 (at least 8).
 * Turn separators are 60 long, the composer's rules and a dialog header's
 * rule are full width (spike-notes §13.1); text quoted in a reply is
 * indented and never counts.
 */
export function isRule(row: string): boolean {
  return /^─{8,}$/u.test(row);
}

/** Display width of a row as agy draws it: one column per code point (the glyphs agy uses are narrow). */
export function width(row: string): number {
  let n = 0;
  for (const _ of row) n++;
  return n;
}

/**
 * The pane's width as far as the text tells: the widest rule (the composer's
 * and a dialog header's rules are full width), else the widest row. Not
 * simply the widest row: `capture-pane -J` joins a wrapped shell line above
 * agy into one row wider than the pane.
 */
export function paneWidth(rows: readonly string[]): number {
  const widest = (pick: (row: string) => boolean): number => rows.reduce((max, row) => (pick(row) ? Math.max(max, width(row)) : max), 0);
  return widest(isRule) || widest(() => true);
}

/** Collapses runs of whitespace to one space and trims. */
export function collapse(text: string): string {
  return text.replace(/\s+/gu, " ").trim();
}

/** True for a row holding nothing. */
export function isBlank(row: string | undefined): boolean {
  return row === undefined || row.trim() === "";
}
