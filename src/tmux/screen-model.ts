/**
 * Reads one `capture-pane` text of agy's TUI into the screen model
 * (`screen-types.ts`), for every screen spike-notes §13 describes (agy
 * 1.0.14 – 1.2.4): idle and generating, each dialog kind, the trust
 * screen, pickers, numbered menus, the survey, the slash popup, mode
 * placeholders, a composer taller than the pane.
 *
 * The reading goes bottom-up, as agy draws: the status row (last row), the
 * lowest composer above it, then what is under that composer (a picker,
 * menu or popup) or — when no composer is drawn — the dialog that replaced
 * it. Whatever the reader cannot place gives `unknown`, never `ready`: a
 * supervisor types only into a screen it understood.
 */
import { findComposer, type Composer } from "./screen-composer.js";
import { isBlank, isRule, paneWidth, screenRows } from "./screen-lines.js";
import { dialogPrompt, promptBelowComposer, type PromptReading } from "./screen-prompt.js";
import { readStatusRow, type StatusRow } from "./screen-status.js";
import type { ScreenModel, ScreenState } from "./screen-types.js";

export type { ScreenModel } from "./screen-types.js";

/** What a supervisor needs from one captured screen; pure over text. */
export function readScreen(text: string): ScreenModel {
  const rows = screenRows(text);
  const last = rows.length - 1;
  const status = last >= 0 ? readStatusRow(rows[last] ?? "", paneWidth(rows)) : undefined;
  const end = status === undefined ? rows.length : last;
  let composer = findComposer(rows, end);
  // A rule under the composer means it is not the live one (a dialog's header rule is drawn below it).
  if (composer !== undefined && rows.slice(composer.bottom + 1, end).some(isRule)) composer = undefined;
  const reading = composer === undefined ? dialogPrompt(rows, end) : promptBelowComposer(rows, composer.bottom + 1, end);
  return {
    state: stateOf(rows, composer, status, reading),
    composer: composer === undefined ? "absent" : composer.holdsDraft ? "draft" : "empty",
    draft: composer?.holdsDraft === true ? composer.draft : null,
    mode: composer?.placeholderMode ?? status?.mode ?? null,
    model: status?.model ?? null,
    prompt: reading.prompt,
  };
}

function stateOf(rows: readonly string[], composer: Composer | undefined, status: StatusRow | undefined, reading: PromptReading): ScreenState {
  if (reading.prompt !== null) return "prompt";
  if (reading.unrecognized || composer === undefined) return "unknown";
  if (status?.hint === "cancel" || spinnerAbove(rows, composer.top)) return "busy";
  return "ready";
}

// `⢿  Generating...`: a braille spinner at column 0, under the echoed turn, just above the composer.
const SPINNER = /^[\u2801-\u28ff] +\S/u;

function spinnerAbove(rows: readonly string[], top: number): boolean {
  let i = top - 1;
  while (i >= 0 && top - i <= 2 && isBlank(rows[i])) i--;
  return i >= 0 && SPINNER.test(rows[i] ?? "");
}
