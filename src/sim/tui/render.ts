/**
 * Pure layout of the fake TUI's screen, as agy draws it (spike-notes §13):
 * inline and top-anchored — banner, transcript, then either the composer
 * (full-width rule, `>` row, full-width rule) or a dialog that REPLACES it,
 * then one status row. No clock and no ids that change per run, so
 * `capture-pane` text is stable.
 */
import type { TuiTranscriptEntry } from "./tui-port.js";
import { isTui12, MODE_PLACEHOLDER, type TuiMode, type TuiVersion } from "./tui-options.js";
import { statusRow } from "./status-row.js";
import { entryLines } from "./transcript-lines.js";
import { hardWrap, prefixedBlock } from "./text-wrap.js";

export const IDLE_FOOTER = "? for shortcuts";
export const RUNNING_FOOTER = "esc to cancel";
export const PROMPT_GLYPH = ">";
/** agy's spinner row; one frame, so captures are stable. */
export const SPINNER_ROW = "⢿  Generating...";

export interface TuiNote {
  /** Shown after this many transcript entries. */
  after: number;
  /** The rows to show (already in agy's look). */
  lines: readonly string[];
}

/**
 * What holds the keyboard besides the composer: a dialog (replaces the
 * composer), the trust screen (replaces everything), or a picker / the slash
 * popup (drawn below the composer).
 */
export type TuiOverlay = { kind: "dialog" | "trust"; lines: readonly string[] } | { kind: "picker" | "popup"; lines: readonly string[] };

export interface ScreenModel {
  columns: number;
  rows: number;
  banner: readonly string[];
  transcript: readonly TuiTranscriptEntry[];
  notes: readonly TuiNote[];
  overlay?: TuiOverlay | undefined;
  draft: string;
  running: boolean;
  /** Model enum for the status row's label. */
  model?: string | undefined;
  mode?: TuiMode;
  version?: TuiVersion;
  /** Background tasks on the status row (`· N task(s) · /tasks`); default 0. */
  tasks?: number;
}

/** The screen as plain rows, at most `rows` of them (the newest), each at most `columns` wide. */
export function renderScreen(model: ScreenModel): string[] {
  const columns = Math.max(20, model.columns);
  const version = model.version ?? "1.1";
  const mode = model.mode ?? "default";
  const status = (left: string): string => statusRow({ columns, left, model: model.model, mode, version, tasks: model.tasks ?? 0 });
  const overlay = model.overlay;
  if (overlay?.kind === "trust") return fit([...overlay.lines, status("")], columns, model.rows);

  const body: string[] = [...model.banner];
  if (model.banner.length > 0) body.push("");
  const notesAt = (count: number): void => {
    for (const note of model.notes) if (note.after === count) body.push(...note.lines, "");
  };
  notesAt(0);
  model.transcript.forEach((entry, i) => {
    body.push(...entryLines(entry, columns, version));
    notesAt(i + 1);
  });

  if (overlay?.kind === "dialog") {
    if (body.length > 0 && body[body.length - 1] !== "") body.push("");
    return fit([...body, ...overlay.lines, status(RUNNING_FOOTER)], columns, model.rows);
  }
  if (model.running) {
    while (body.length > 0 && body[body.length - 1] === "") body.pop();
    body.push(SPINNER_ROW);
  }
  // agy 1.2.1 after a tool turn: no `? for shortcuts`, and a three-row input box.
  const toolTurn = version === "1.2.1" && model.transcript.some((entry) => entry.role === "tool");
  const rule = "─".repeat(columns);
  const placeholder = MODE_PLACEHOLDER[mode];
  const shown = model.draft === "" && placeholder !== undefined ? placeholder : model.draft;
  const composer = prefixedBlock(`${PROMPT_GLYPH} `, shown, columns - 1, "  ").map((line) => line.trimEnd());
  while (toolTurn && composer.length < 3) composer.push("");
  // agy 1.2.x: a draft in the composer removes `? for shortcuts` (spike-notes §13 #26).
  const drafting = isTui12(version) && model.draft !== "";
  const left = overlay?.kind === "popup" || model.running ? RUNNING_FOOTER : overlay?.kind === "picker" || toolTurn || drafting ? "" : IDLE_FOOTER;
  return fit([...body, rule, ...composer, rule, ...(overlay?.lines ?? []), status(left)], columns, model.rows);
}

/** Rows cut at the pane width (as a terminal would wrap them), the newest `rows` kept. */
function fit(lines: readonly string[], columns: number, rows: number): string[] {
  const out = lines.flatMap((line) => hardWrap(line, columns)).map((line) => line.trimEnd());
  return out.slice(-Math.max(1, rows));
}
