/**
 * Pure layout of the fake TUI's screen: transcript, the open prompt, the
 * composer between two separator rules, and the footer (spike-notes §6.2: drivers
 * find the composer as the lines between the last two rules, and read
 * `? for shortcuts` / `esc to cancel` as the idle / running markers).
 * No clock and no ids that change per run, so `capture-pane` text is stable.
 */
import type { TuiTranscriptEntry } from "./tui-port.js";

export const IDLE_FOOTER = "? for shortcuts";
export const RUNNING_FOOTER = "esc to cancel";
export const PROMPT_GLYPH = ">";

export interface TuiNote {
  /** Shown after this many transcript entries. */
  after: number;
  text: string;
}

export interface ScreenModel {
  columns: number;
  rows: number;
  banner: readonly string[];
  transcript: readonly TuiTranscriptEntry[];
  notes: readonly TuiNote[];
  /** Lines of the open prompt, if any. */
  prompt: readonly string[] | undefined;
  draft: string;
  running: boolean;
}

const ROLE_PREFIX: Record<TuiTranscriptEntry["role"], string> = {
  user: "> ",
  assistant: "● ",
  tool: "  ⎿ ",
  error: "✗ ",
};

/** The screen as plain lines, at most `rows` of them, each at most `columns` wide. */
export function renderScreen(model: ScreenModel): string[] {
  const width = Math.max(20, model.columns);
  const body: string[] = [...model.banner.flatMap((line) => wrap(line, width))];
  if (model.banner.length > 0) body.push("");
  const notesAt = (count: number): void => {
    for (const note of model.notes) {
      if (note.after === count) body.push(...wrap(`  ⎿ ${note.text}`, width), "");
    }
  };
  notesAt(0);
  model.transcript.forEach((entry, i) => {
    body.push(...block(ROLE_PREFIX[entry.role], entry.text, width), "");
    notesAt(i + 1);
  });
  if (model.prompt !== undefined) {
    // No rule around the prompt: drivers treat any line of box-drawing glyphs as a separator.
    body.push(...model.prompt.flatMap((line) => wrap(line, width)), "");
  }
  const separator = "─".repeat(width);
  const composer = block(`${PROMPT_GLYPH} `, model.draft, width);
  const footer = `  ${model.running ? RUNNING_FOOTER : IDLE_FOOTER}`;
  const bottom = [separator, ...composer, separator, footer];
  const room = Math.max(0, model.rows - bottom.length);
  return [...body.slice(Math.max(0, body.length - room)), ...bottom].slice(-Math.max(1, model.rows));
}

/** A prefixed block: the prefix on the first line, its width of spaces on the rest. */
function block(prefix: string, text: string, width: number): string[] {
  const indent = " ".repeat(prefix.length);
  const lines = text.split("\n");
  return lines.flatMap((line, i) => wrap(`${i === 0 ? prefix : indent}${line}`, width, indent));
}

function wrap(line: string, width: number, indent = ""): string[] {
  const chars = Array.from(line);
  if (chars.length <= width) return [line];
  const out: string[] = [chars.slice(0, width).join("")];
  let rest = chars.slice(width);
  const room = Math.max(1, width - indent.length);
  while (rest.length > 0) {
    out.push(indent + rest.slice(0, room).join(""));
    rest = rest.slice(room);
  }
  return out;
}
