/**
 * Reads one `capture-pane` text of agy's TUI into the screen model
 * (`screen-types.ts`), for every screen spike-notes §13 describes (agy
 * 1.0.14 – 1.2.17): idle and generating, each dialog kind, the trust
 * screen, pickers, numbered menus, the survey, the slash popup, mode
 * placeholders, a composer taller than the pane; and agy 1.2.x's
 * (§13.8): the amend field, file access and pending edits, question forms,
 * the `/effort` slider, the `?` overlay, the artifact review panel, the
 * first-run setup screens, the task strip, a user-defined status line.
 *
 * The reading goes bottom-up, as agy draws: the status row (last row), the
 * lowest composer above it, then what is under that composer (a picker,
 * menu or popup) or — when no composer is drawn — the dialog that replaced
 * it. Whatever the reader cannot place gives `unknown`, never `ready`: a
 * supervisor types only into a screen it understood.
 */
import { findComposer, type Composer } from "./screen-composer.js";
import { isBlank, isRule, paneWidth, screenRows } from "./screen-lines.js";
import { isFooter } from "./screen-options.js";
import { dialogPrompt, promptBelowComposer, taskStripStart, type PromptReading } from "./screen-prompt.js";
import { readStatusRow, type StatusRow } from "./screen-status.js";
import type { ScreenModel, ScreenState } from "./screen-types.js";

export type { ScreenModel } from "./screen-types.js";

/** What a supervisor needs from one captured screen; pure over text. */
export function readScreen(text: string): ScreenModel {
  const rows = screenRows(text);
  const last = rows.length - 1;
  const status = last >= 0 ? readStatusRow(rows[last] ?? "", paneWidth(rows)) : undefined;
  const plain = readAbove(rows, status === undefined ? rows.length : last, status);
  // A status line the user configured in agy's place (`✦ … [WORKING...]`, fact 31): read what is above it.
  if (status === undefined && last > 0 && plain.reading.prompt === null && customStatusLine(rows, last)) {
    const custom = readAbove(rows, last, undefined);
    if (custom.reading.prompt !== null) return { ...model(custom, undefined), statusLine: "custom" };
  }
  return model(plain, status);
}

interface Above {
  rows: readonly string[];
  composer: Composer | undefined;
  reading: PromptReading;
  status: StatusRow | undefined;
}

/** The composer and the prompt in rows [0, end), `end` being the status row (or the row count without one). */
function readAbove(rows: readonly string[], end: number, status: StatusRow | undefined): Above {
  let composer = findComposer(rows, end);
  // A rule under the composer means it is not the live one (a dialog's header rule is drawn below it),
  // unless it closes the task strip (#27): rows under the composer that are tasks and nothing else.
  if (composer !== undefined && rows.slice(composer.bottom + 1, end).some(isRule) && taskStripStart(rows, composer.bottom + 1, end) !== composer.bottom + 1)
    composer = undefined;
  const reading = composer === undefined ? dialogPrompt(rows, end) : promptBelowComposer(rows, composer.bottom + 1, end);
  return { rows, composer, reading, status };
}

function model({ rows, composer, reading }: Above, status: StatusRow | undefined): ScreenModel {
  const out: ScreenModel = {
    state: stateOf(rows, composer, status, reading),
    composer: composer === undefined ? "absent" : composer.holdsDraft ? "draft" : "empty",
    draft: composer?.holdsDraft === true ? composer.draft : null,
    mode: composer?.placeholderMode ?? status?.mode ?? null,
    model: status?.model ?? null,
    prompt: reading.prompt,
  };
  if (status?.tasks !== undefined) out.backgroundTasks = status.tasks;
  return out;
}

/**
 * The last row is not agy's status row, but stands right under a dialog's
 * key-hint footer — where agy draws its own: a status line the user
 * configured (fact 31). It is never a footer itself. Under a composer an
 * unknown row stays unknown: it could be a popup we do not know.
 */
function customStatusLine(rows: readonly string[], last: number): boolean {
  const row = rows[last] ?? "";
  return !isBlank(row) && !isFooter(row) && !isRule(row) && isFooter(rows[last - 1] ?? "");
}

function stateOf(rows: readonly string[], composer: Composer | undefined, status: StatusRow | undefined, reading: PromptReading): ScreenState {
  if (reading.prompt !== null) return "prompt";
  if (reading.unrecognized || composer === undefined) return "unknown";
  if (status?.hint === "cancel" || status?.hint === "queued" || spinnerAbove(rows, composer.top)) return "busy";
  return "ready";
}

// `⢿  Generating...`: a braille spinner at column 0, under the echoed turn, just above the composer.
const SPINNER = /^[\u2801-\u28ff] +\S/u;

function spinnerAbove(rows: readonly string[], top: number): boolean {
  let i = top - 1;
  while (i >= 0 && top - i <= 2 && isBlank(rows[i])) i--;
  return i >= 0 && SPINNER.test(rows[i] ?? "");
}
