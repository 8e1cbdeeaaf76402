/**
 * Option rows of agy's arrow menus (spike-notes §13): the highlighted row
 * starts at column 0 with `>`, the others with two spaces; a label's later
 * lines, and rows cut at the pane width, start at column 0.
 */
import { hardWrap } from "./text-wrap.js";

export interface MenuRow {
  label: string;
  /** The printed number, or undefined for an unnumbered menu. */
  number?: number;
}

export function menuRows(rows: readonly MenuRow[], pointer: number, width: number): string[] {
  return rows.flatMap((row, i) => {
    const head = `${i === pointer ? ">" : " "} ${row.number === undefined ? "" : `${row.number}. `}`;
    return row.label.split("\n").flatMap((line, j) => hardWrap(j === 0 ? head + line : line, width));
  });
}

/** Moves a pointer by `delta`, stopping at the first and last rows. */
export function movePointer(pointer: number, delta: number, count: number): number {
  return Math.min(Math.max(0, pointer + delta), Math.max(0, count - 1));
}
