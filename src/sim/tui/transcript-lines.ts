/**
 * The transcript as agy draws it (spike-notes §13): each user turn under a
 * 60-column `─` rule as `> text` (two-space continuation indent), reasoning
 * as `▸ Thought for …`, tool rows `● Bash(…)` with results under `  ⎿  `,
 * replies indented two spaces. Prose wraps at words, one column short of the
 * pane.
 */
import type { TuiTranscriptEntry } from "./tui-port.js";
import { hardWrap, prefixedBlock } from "./text-wrap.js";
import { isTui12, type TuiVersion } from "./tui-options.js";

/** agy 1.2.x's line under a tool call that Escape interrupted (spike-notes §13 #39, K5). */
export const INTERRUPTED_LINE = "Interrupted · What should Antigravity CLI do instead?";

/** A turn separator is 60 columns, whatever the pane's width (agy 1.1.13–1.2.4). */
export const TURN_RULE_WIDTH = 60;
/** Tool results show this many lines, then a count of the rest. */
const RESULT_LINES = 4;

/** The rows of one entry, each followed by the blank row agy leaves (none after reasoning). */
export function entryLines(entry: TuiTranscriptEntry, columns: number, version: TuiVersion = "1.1"): string[] {
  const width = Math.max(10, columns - 1);
  switch (entry.role) {
    case "user":
      return ["─".repeat(Math.min(TURN_RULE_WIDTH, columns)), ...prefixedBlock("> ", entry.text, width, "  "), ""];
    case "reasoning":
      return prefixedBlock("▸ ", entry.text, width, "  ");
    case "assistant":
      return [...prefixedBlock("  ", entry.text, width, "  "), ""];
    case "error":
      return [...prefixedBlock("✗ ", entry.text, width, "  "), ""];
    case "tool":
      if (isTui12(version)) {
        // An answered 1.2.x form stays in scrollback as `? <question>` / `> <answer>` (spike-notes §13 #33, K9).
        if (entry.call?.name === "Question") return [...prefixedBlock("? ", entry.call.arg, width, "  "), ...prefixedBlock("> ", entry.text, width, "  "), ""];
        if (entry.text === "Interrupted") return [...toolLines({ ...entry, text: INTERRUPTED_LINE }, width), ""];
      }
      return [...toolLines(entry, width), ""];
  }
}

function toolLines(entry: TuiTranscriptEntry, width: number): string[] {
  const out: string[] = [];
  if (entry.call !== undefined) {
    const expand = entry.call.expandable === false ? "" : " (ctrl+o to expand)";
    out.push(...hardWrap(`● ${entry.call.name}(${entry.call.arg})${expand}`, width));
  }
  // A declined dialog leaves its header word above the result (agy 1.1.27).
  if (entry.header !== undefined) out.push("", entry.header);
  const result = entry.text === "" ? [] : entry.text.split("\n");
  const shown = result.slice(0, RESULT_LINES);
  if (result.length > RESULT_LINES) shown.push(`… +${result.length - RESULT_LINES} lines (ctrl+o to expand)`);
  shown.forEach((line, i) => out.push(...prefixedBlock(i === 0 ? "  ⎿  " : "     ", line, width, "     ")));
  return out;
}
