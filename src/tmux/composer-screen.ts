/**
 * The composer's rows as delivery watches a paste arrive and leave. Whether
 * agy is ready, busy or held by a prompt is the screen model's answer
 * (`readScreen`, spike-notes §13), never this file's: its `footer` and
 * `prompt` describe the older layout (a numbered prompt above the composer)
 * and are kept for callers of `parseScreen` only.
 *
 * Reads agy's screen from `capture-pane -p -J` text: the composer (the lines
 * between the last two separator rules, spike-notes §6.2 step 4, or above
 * the only rule when a draft taller than the screen pushed the top rule
 * off), the draft in it, the footer state (`? for shortcuts` idle, `esc to cancel` running,
 * §6.2 step 2) and a numbered prompt drawn above the composer (§5.4, §5.6).
 * Pure functions over text; the markers are configurable because footer
 * wording changes between agy builds.
 */

/** The words that identify agy's footer states and its composer. */
export interface ScreenMarkers {
  /** Footer text shown while the TUI waits for input. */
  idle: readonly string[];
  /** Footer text shown while a turn runs (a paste is queued as the next turn). */
  running: readonly string[];
  /** The composer's prompt glyphs, at the start of the draft's first line. */
  promptGlyphs: readonly string[];
  /** Hint text an empty composer shows (e.g. "Type your message"); it counts as no draft. */
  emptyHints?: readonly string[];
}

/** agy 1.0.x's markers, which the simulator's TUI draws too (spike-notes §6.2). */
export const AGY_MARKERS: ScreenMarkers = {
  idle: ["? for shortcuts"],
  running: ["esc to cancel"],
  promptGlyphs: [">", "❯"],
};

export type FooterState = "idle" | "running";

export interface PromptOption {
  /** The number typed to choose it (1-based). */
  number: number;
  text: string;
  /** The option under the pointer. */
  pointed: boolean;
}

/** A numbered prompt (permission or question) visible above the composer. */
export interface VisiblePrompt {
  /** The first line of the prompt's block (the question or "Allow this command? …"). */
  title: string;
  options: PromptOption[];
}

export interface ComposerScreen {
  /**
   * The lines between the last two separator rules, or every line above the
   * only rule when the composer outgrew the screen (see `clipped`);
   * undefined when no composer is drawn.
   */
  region: string[] | undefined;
  /**
   * The composer's top rule and first lines are off screen: a draft taller
   * than the pane (100 KB on one line wraps to over a thousand rows, and agy
   * collapses pastes by line count only, spike-notes §6.2 step 6). The region
   * then shows only the draft's last rows, never its start.
   */
  clipped: boolean;
  /** The composer's text without the prompt glyph and continuation indent; "" when empty. */
  draft: string | undefined;
  footer: FooterState | undefined;
  prompt: VisiblePrompt | undefined;
}

const RULE_GLYPH = "─";
const BOX_DRAWING = /^[\u2500-\u257f\s]*$/u;

/** A separator rule: at least 8 `─`, and nothing but box-drawing glyphs and spaces. */
export function isSeparatorLine(line: string): boolean {
  if (!BOX_DRAWING.test(line)) return false;
  let count = 0;
  for (const ch of line) if (ch === RULE_GLYPH && ++count >= 8) return true;
  return false;
}

/** Parses one captured screen. */
export function parseScreen(captured: string, markers: ScreenMarkers = AGY_MARKERS): ComposerScreen {
  const lines = captured
    .replace(/\r/g, "")
    .split("\n")
    .map((line) => line.trimEnd());
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const rules: number[] = [];
  lines.forEach((line, i) => {
    if (isSeparatorLine(line)) rules.push(i);
  });
  // agy 1.3.3 closes its task strip under the composer with a rule of its own
  // (spike-notes §13 #27): those two rules hold tasks, not the composer.
  if (rules.length >= 3 && isTaskStrip(lines.slice((rules[rules.length - 2] ?? 0) + 1, rules[rules.length - 1]))) rules.pop();
  const top = rules[rules.length - 2];
  const bottom = rules[rules.length - 1];
  if (top !== undefined && bottom !== undefined) {
    const region = lines.slice(top + 1, bottom);
    return { region, clipped: false, draft: draftOf(region, markers), footer: footerOf(lines.slice(bottom + 1), markers), prompt: promptAbove(lines, top) };
  }
  // One rule with agy's footer under it and rows above it: the bottom rule of a
  // composer whose top scrolled off. Its rows are all draft (the glyph is off screen too).
  const footer = footerOf(bottom === undefined ? lines : lines.slice(bottom + 1), markers);
  if (bottom !== undefined && bottom > 0 && footer !== undefined) {
    const region = lines.slice(0, bottom);
    return { region, clipped: true, draft: clippedDraftOf(region), footer, prompt: undefined };
  }
  return { region: undefined, clipped: false, draft: undefined, footer, prompt: undefined };
}

const TASK_ROW = /^ {1,4}● \[[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?\] \S/u;
const TASK_MORE = /^ {1,4}[↑↓] [0-9]+ more$/u;

/** Rows that are agy's task strip: task rows (at least one) and `↓ N more`, blank rows between. */
function isTaskStrip(region: readonly string[]): boolean {
  const filled = region.filter((line) => line.trim() !== "");
  return filled.some((line) => TASK_ROW.test(line)) && filled.every((line) => TASK_ROW.test(line) || TASK_MORE.test(line));
}

/** The visible tail of a clipped composer's draft: its rows without the continuation indent. */
function clippedDraftOf(region: readonly string[]): string {
  return region
    .map((line) => line.replace(/^ {1,2}/, ""))
    .join("\n")
    .trim();
}

/** The draft text in a composer region. */
export function draftOf(region: readonly string[], markers: ScreenMarkers = AGY_MARKERS): string {
  const out: string[] = [];
  let glyphSeen = false;
  for (const line of region) {
    const glyph = glyphSeen ? undefined : markers.promptGlyphs.find((g) => line.trimStart().startsWith(g));
    if (glyph !== undefined) {
      glyphSeen = true;
      const rest = line.trimStart().slice(glyph.length);
      out.push(rest.startsWith(" ") ? rest.slice(1) : rest);
      continue;
    }
    // Status text can share the composer box on some builds; it is never part of the draft.
    if (!glyphSeen && [...markers.idle, ...markers.running].some((m) => line.includes(m))) continue;
    out.push(glyphSeen ? line.replace(/^ {1,2}/, "") : line);
  }
  const draft = out.join("\n").trim();
  return markers.emptyHints?.includes(draft) === true ? "" : draft;
}

function footerOf(lines: readonly string[], markers: ScreenMarkers): FooterState | undefined {
  const text = lines.join("\n");
  // The running marker wins: leftover idle text must never make a running turn look idle.
  if (markers.running.some((m) => text.includes(m))) return "running";
  if (markers.idle.some((m) => text.includes(m))) return "idle";
  return undefined;
}

// ` > 1. Yes` / `   2. No`: a pointer column, then the number. Transcript text is indented
// differently (`  2. item`), so a numbered list in an answer is not taken for a prompt.
const OPTION_LINE = /^ ([>❯ ]) ([0-9]+)\. (.*)$/u;

/** The block of lines just above the composer's top rule, when it is a numbered prompt. */
function promptAbove(lines: readonly string[], rule: number): VisiblePrompt | undefined {
  let end = rule - 1;
  while (end >= 0 && lines[end] === "" && rule - end <= 2) end--;
  let start = end;
  while (start > 0 && lines[start - 1] !== "" && !isSeparatorLine(lines[start - 1] ?? "")) start--;
  if (end < 0 || start < 0) return undefined;
  const block = lines.slice(start, end + 1);
  const options: PromptOption[] = [];
  let title: string | undefined;
  for (const line of block) {
    const match = OPTION_LINE.exec(line);
    if (match === null) {
      title ??= line.trim();
      continue;
    }
    options.push({ number: Number(match[2]), text: match[3] ?? "", pointed: match[1] !== " " });
  }
  const numbered = options.length >= 2 && options.every((o, i) => o.number === i + 1);
  return numbered ? { title: title ?? "", options } : undefined;
}

/** Whitespace-free form of text, so wrapping and tab expansion on screen do not matter. */
export function squeeze(text: string): string {
  return text.replace(/\s+/gu, "");
}

const PLACEHOLDER = /\[Pasted text #[0-9]+[^\]]*\]/gu;

/** `[Pasted text #N +K lines]` placeholders in a region (agy collapses pastes of about 13+ lines). */
export function pastePlaceholders(region: readonly string[]): string[] {
  return region.join("\n").match(PLACEHOLDER) ?? [];
}

/**
 * What to look for in the composer to know a paste rendered: the first 24
 * non-space characters of the first line with at least 4 of them
 * (spike-notes §6.2 step 6); "" for text too short to have one.
 */
export function draftNeedle(text: string): string {
  for (const line of text.split("\n")) {
    const squeezed = squeeze(line);
    if (squeezed.length >= 4) return Array.from(squeezed).slice(0, 24).join("");
  }
  return "";
}

/**
 * The same from the other end: the last 24 non-space characters of the last
 * line with at least 4, which is what a composer taller than the screen still
 * shows of a paste (the cursor, and so the view, sits at its end); "" for
 * text too short to have one.
 */
export function draftTailNeedle(text: string): string {
  for (const line of text.split("\n").reverse()) {
    const squeezed = Array.from(squeeze(line));
    if (squeezed.length >= 4) return squeezed.slice(-24).join("");
  }
  return "";
}

/** True when the composer holds anything: text, a placeholder, or rows too many to show whole. */
export function holdsDraft(screen: ComposerScreen): boolean {
  return screen.clipped || (screen.draft !== undefined && screen.draft !== "");
}
