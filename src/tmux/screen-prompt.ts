/**
 * What holds the keyboard on agy's screen (spike-notes §13.2, §13.3 and
 * "agy 1.2.x screens").
 *
 * - A dialog REPLACES the composer: the tool row, a header word
 *   (`Command`, `Create file`, `Pending edit`, `File access`, `Question`),
 *   a full-width rule, the body, the question, the options, a blank row and
 *   a key-hint footer, then the status row. The trust screen has no rules;
 *   a survey is one row of `[N] Label`. After Tab, a command approval holds
 *   an amend field (`    > █` under option 1, footer `enter Submit`).
 * - First-run screens (sign-in method, the OAuth URL, Terms of Service)
 *   have no composer and mostly no status row: setup is required.
 * - Pickers, the /feedback menu, the slash popup, the `/effort` slider, the
 *   `?` overlay and the `/artifact` review panel are drawn BELOW an empty
 *   (or `/`) composer, footer last. agy 1.2.x's task strip
 *   (`  ● [12:03:44] npm run build running`) sits there too and holds nothing.
 *
 * Only what is below the lowest composer, or what replaced it, is live: a
 * footer with a composer drawn under it is transcript text (§13.3).
 * Anything under the composer that is not a list we know makes the screen
 * unknown, never ready — a guess there would type into it.
 */
import type { FileAction, QuestionForm, ScreenPrompt, ScreenPromptKind, SetupScreen } from "./screen-types.js";
import { collapse, isBlank, isRule } from "./screen-lines.js";
import { footerTakesDigits, isFooter, numberedList, surveyOptions, unnumberedList, type OptionList } from "./screen-options.js";

export interface PromptReading {
  prompt: ScreenPrompt | null;
  /** Rows were there that hold the keyboard or might, but match no prompt we know. */
  unrecognized: boolean;
}

const NONE: PromptReading = { prompt: null, unrecognized: false };
const UNKNOWN: PromptReading = { prompt: null, unrecognized: true };

// agy's task strip under the composer: `  ● [03:57:33] <command> running`, one row per background task,
// `  ↓ 5 more` when they do not fit, and on some builds a rule of its own under them.
const TASK_ROW = /^ {1,4}● \[[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?\] \S/u;
const TASK_MORE = /^ {1,4}[↑↓] [0-9]+ more$/u;

/**
 * Where the task strip at the bottom of rows [from, to) starts, or undefined
 * when there is none: task rows (at least one), `↓ N more` rows, and
 * optionally a rule that closes the strip.
 */
export function taskStripStart(rows: readonly string[], from: number, to: number): number | undefined {
  let end = lastFilled(rows, from, to);
  if (end > from && isRule(rows[end - 1] ?? "")) end = lastFilled(rows, from, end - 1);
  let start = end;
  let tasks = 0;
  while (start > from && (TASK_ROW.test(rows[start - 1] ?? "") || TASK_MORE.test(rows[start - 1] ?? ""))) {
    if (TASK_ROW.test(rows[start - 1] ?? "")) tasks++;
    start = lastFilled(rows, from, start - 1);
  }
  return tasks > 0 ? start : undefined;
}

/** Rows [from, to) under the composer's bottom rule, above the status row. */
export function promptBelowComposer(rows: readonly string[], from: number, to: number): PromptReading {
  const start = from;
  const end = lastFilled(rows, start, taskStripStart(rows, start, to) ?? to);
  if (end <= start) return NONE;
  const survey = surveyAt(rows, start, end);
  if (survey !== undefined) return { prompt: survey, unrecognized: false };
  const footer = footerStart(rows, start, end);
  const footerText = footer < 0 ? "" : rows.slice(footer, end).join(" ");
  // The `?` overlay: `Keyboard: ↑/↓ Navigate  ←/→ Switch View  esc Close`; its key rows are no options.
  if (footer >= 0 && (/\besc Close\b/u.test(footerText) || /Switch View/u.test(footerText))) return found(bare("overlay"));
  const listEnd = footer >= 0 ? footer : end;
  const review = artifactReview(rows, start, listEnd, footerText);
  if (review !== undefined) return found(review);
  const list = numberedList(rows, start, listEnd) ?? unnumberedList(rows, start, listEnd);
  // `/effort`'s `Set Effort`: a slider (`◂ ◉──○──○ ▸`) and `←/→ Effort`, no option rows.
  if (list === undefined && footer >= 0 && /←\/→ Effort/u.test(footerText) && rows.slice(start, listEnd).some((row) => SLIDER.test(row)))
    return found(bare("slider"));
  if (list === undefined || (list.pointer === null && footer < 0)) return UNKNOWN;
  const slash = list.options.every((o) => o.label.startsWith("/"));
  const kind: ScreenPromptKind = slash ? "slash" : list.options[0]?.number === null ? "picker" : "menu";
  return found(promptOf(kind, rows, start, list, footer));
}

const SLIDER = /◂.*[◉●].*▸/u;

/** A dialog that replaced the composer: the rows above the status row (`to`), from the last rule down. */
export function dialogPrompt(rows: readonly string[], to: number): PromptReading {
  let rule = -1;
  for (let i = to - 1; i >= 0; i--) {
    if (isRule(rows[i] ?? "")) {
      rule = i;
      break;
    }
  }
  const from = rule + 1;
  const setup = setupScreen(rows, from, to);
  if (setup !== undefined) return found(setup);
  const end = lastFilled(rows, from, to);
  if (end <= from) return NONE;
  const survey = surveyAt(rows, from, end);
  if (survey !== undefined) return found(survey);
  const footer = isFooter(rows[end - 1] ?? "") ? end - 1 : -1;
  const listEnd = footer >= 0 ? footer : end;
  const numbered = numberedList(rows, from, listEnd);
  // Without a footer only a numbered list with its `>` row counts: an echoed turn (`> text`) is no list.
  let list: OptionList | undefined = numbered !== undefined && (numbered.pointer !== null || footer >= 0) ? numbered : undefined;
  if (list === undefined && footer >= 0) list = unnumberedList(rows, from, listEnd);
  if (list === undefined || lastFilled(rows, list.last + 1, listEnd) > list.last + 1) return footer >= 0 ? UNKNOWN : NONE;
  const header = rule > 0 ? (rows[rule - 1] ?? "").trim() : "";
  const body = rows.slice(from, list.first).map((row) => row.trim());
  const prompt = promptOf("other", rows, from, list, footer);
  const tool = toolAbove(rows, rule);
  const kind = dialogKind(header, tool, body, prompt.question);
  // The amend field (fact 32): a person is typing an instruction into the dialog; whatever it approves, hands off.
  const amend = list.amendField || (footer >= 0 && /^enter Submit$/u.test((rows[footer] ?? "").trim()));
  prompt.kind = amend ? "amend" : kind;
  if (kind === "file") {
    const action = fileAction(header, tool, prompt.question);
    if (action !== undefined) prompt.fileAction = action;
  }
  if (kind === "question") {
    const form = formLine(body);
    if (form !== null) {
      prompt.question = form[3] ?? "";
      prompt.form = questionForm(form, footer >= 0 ? (rows[footer] ?? "") : "");
    }
  }
  return found(prompt);
}

// `Question 2/3: What is your favourite pet?` (agy 1.2.x's ask_question form).
const QUESTION_FORM = /^Question ([0-9]+)\/([0-9]+): (.*)$/u;

/** The last `Question i/N: …` row of a dialog's body, with the rows a long question wrapped onto joined to it. */
function formLine(body: readonly string[]): RegExpExecArray | null {
  for (let i = body.length - 1; i >= 0; i--) {
    if (!QUESTION_FORM.test(body[i] ?? "")) continue;
    const rows = [body[i] ?? ""];
    for (let k = i + 1; k < body.length && (body[k] ?? "") !== ""; k++) rows.push(body[k] ?? "");
    return QUESTION_FORM.exec(collapse(rows.join(" ")));
  }
  return null;
}

function questionForm(match: RegExpExecArray, footer: string): QuestionForm {
  return { index: Number(match[1]), total: Number(match[2]), back: /← Back\b/u.test(footer) };
}

/**
 * The dialog's kind from its header word (`Command`, `Create file`,
 * `Pending edit`, `File access`), its body and question, and — when those
 * say nothing — the tool row above it (`● Bash(…)`, `● Create(…)`). What
 * none of them names is `other`.
 */
function dialogKind(header: string, tool: string, body: readonly string[], question: string | null): ScreenPromptKind {
  if (body.includes("Accessing workspace:") || question?.startsWith("Do you trust") === true) return "trust";
  if (header === "Command" || body.includes("Requesting permission for:") || question === "Do you want to proceed?" || question === "Run this command?")
    return "command";
  if (/\bfile\b/iu.test(header) || header === "Pending edit" || (question !== null && FILE_QUESTION.test(question))) return "file";
  if (/\bquestions?\b/iu.test(header)) return "question";
  if (/^(Bash|Shell|RunCommand)\(/u.test(tool)) return "command";
  if (/^(Create|Edit|Write|Delete)\(/u.test(tool)) return "file";
  if (/^Ask/u.test(tool)) return "question";
  return "other";
}

// `Allow creation of this file?`, `Accept this file edit?`, `Allow access to this file?`.
const FILE_QUESTION = /\bthis file(?: edit)?\?$/u;

/** What a file dialog asks to allow, from its header, else its question, else the tool row; undefined when none says. */
function fileAction(header: string, tool: string, question: string | null): FileAction | undefined {
  if (/^Create file$/iu.test(header)) return "create";
  if (/^Pending edit$/iu.test(header) || /^Edit file$/iu.test(header)) return "edit";
  if (/^File access$/iu.test(header)) return "access";
  if (question !== null) {
    if (/\bcreation of this file\?$/u.test(question)) return "create";
    if (/\bthis file edit\?$/u.test(question)) return "edit";
    if (/\baccess to this file\?$/u.test(question)) return "access";
  }
  if (/^Create\(/u.test(tool)) return "create";
  if (/^Edit\(/u.test(tool)) return "edit";
  if (/^Read\(/u.test(tool)) return "access";
  return undefined;
}

// The first-run screens (fact 38), by the sentence each shows; checked only in what replaced the composer.
const SETUP_MARKERS: ReadonlyArray<[RegExp, SetupScreen]> = [
  [/^Welcome to the Antigravity CLI\. You are currently not signed in\.$|^Select login method:$/u, "sign_in"],
  [
    /^Your browser should open automatically\.|^Open the URL below in your browser:?$|paste the authorization code below:?$|^→ Click here to authenticate$/u,
    "oauth",
  ],
  [/^Terms of Service & Data Use$/u, "terms"],
];

// A later screen that is not setup: the trust screen follows sign-in at first launch.
const AFTER_SETUP = /^(Accessing workspace:|Requesting permission for:|Do you trust the contents of this project\?)$/u;

// ` > 1. Google OAuth` / `   2. Use a Google Cloud project`: the sign-in list, pointer at column 1.
const SETUP_OPTION = /^ {0,3}(?:([>❯]) +| +)?([0-9]+)\. (\S.*)$/u;

/** A first-run screen in rows [from, to): its kind and, on the sign-in screen, the numbered methods. */
function setupScreen(rows: readonly string[], from: number, to: number): ScreenPrompt | undefined {
  let screen: SetupScreen | undefined;
  let at = -1;
  for (let i = from; i < to; i++) {
    const row = (rows[i] ?? "").trim();
    if (AFTER_SETUP.test(row)) {
      screen = undefined;
      continue;
    }
    const marker = SETUP_MARKERS.find(([re]) => re.test(row));
    if (marker !== undefined) {
      screen = marker[1];
      at = i;
    }
  }
  if (screen === undefined) return undefined;
  const prompt: ScreenPrompt = { ...bare("setup"), setup: screen };
  if (screen !== "sign_in") return prompt;
  for (let i = at + 1; i < to; i++) {
    const match = SETUP_OPTION.exec(rows[i] ?? "");
    if (match === null) {
      if (prompt.options.length > 0) break;
      continue;
    }
    if (Number(match[2]) !== prompt.options.length + 1) break;
    prompt.options.push({ label: collapse(match[3] ?? ""), number: Number(match[2]) });
    if (match[1] !== undefined) prompt.pointer = prompt.options.length;
  }
  return prompt;
}

// `› □ new plan.md   open  approve reject`: one artifact per row, pointer `›` (fact 37).
const ARTIFACT_ROW = /^([›>]|\s) (\S) (\S.*?)(?:\s{2,}open\s+approve\s+reject)?$/u;

/** `/artifact`'s review panel: `Action required (N left)`, artifact rows, `y/n Approve/reject` in its footer. */
function artifactReview(rows: readonly string[], from: number, to: number, footer: string): ScreenPrompt | undefined {
  const head = rows.slice(from, to).findIndex((row) => /^Action required \([0-9]+ left\)$/u.test(row.trim()));
  if (head < 0 && !/Approve\/reject/u.test(footer)) return undefined;
  const prompt = bare("artifact_review");
  for (let i = from + Math.max(head + 1, 0); i < to; i++) {
    const row = rows[i] ?? "";
    if (isBlank(row)) continue;
    const match = ARTIFACT_ROW.exec(row);
    if (match === null) continue;
    prompt.options.push({ label: collapse(match[3] ?? ""), number: null });
    if (match[1] !== " ") prompt.pointer = prompt.options.length;
  }
  return prompt;
}

/**
 * Where the footer under a list starts, or -1: its last row, or the row
 * above when the footer wraps onto an indented second row (the artifact
 * panel's `Keyboard: … p Preview` / `  ctrl+g open in editor  esc Done`).
 */
function footerStart(rows: readonly string[], from: number, end: number): number {
  if (isFooter(rows[end - 1] ?? "")) {
    const above = end - 2;
    return above >= from && /^Keyboard:/u.test((rows[above] ?? "").trim()) && (rows[end - 1] ?? "").startsWith("  ") ? above : end - 1;
  }
  return -1;
}

function bare(kind: ScreenPromptKind): ScreenPrompt {
  return { kind, question: null, options: [], pointer: null, keys: "arrows" };
}

function found(prompt: ScreenPrompt): PromptReading {
  return { prompt, unrecognized: false };
}

/** The tool row (`● Bash(…)`) just above a dialog's header word, without its bullet; "" when there is none. */
function toolAbove(rows: readonly string[], rule: number): string {
  for (let i = rule - 2; i >= 0 && i >= rule - 4; i--) {
    const row = rows[i] ?? "";
    if (row.startsWith("● ")) return row.slice(2);
    if (!isBlank(row)) return "";
  }
  return "";
}

function promptOf(kind: ScreenPromptKind, rows: readonly string[], from: number, list: OptionList, footer: number): ScreenPrompt {
  return {
    kind,
    question: questionAbove(rows, from, list.first),
    options: list.options,
    pointer: list.pointer,
    keys: footer >= 0 && footerTakesDigits(rows[footer] ?? "") ? "digits" : "arrows",
  };
}

/** The survey row (`[1] Good … [0] Skip`), last or just above a footer; it takes digits. */
function surveyAt(rows: readonly string[], from: number, end: number): ScreenPrompt | undefined {
  for (const at of [end - 1, end - 2]) {
    if (at < from) continue;
    const options = surveyOptions(rows[at] ?? "");
    if (options === undefined) continue;
    if (at === end - 2 && !isFooter(rows[end - 1] ?? "")) continue;
    return { kind: "survey", question: questionAbove(rows, from, at), options, pointer: null, keys: "digits" };
  }
  return undefined;
}

// A question is a sentence ending in "?" (optionally followed by a parenthesis: "… session? (optional)"),
// or a row that asks and then says what to do: "What went wrong? Select a category to assist your report:".
const QUESTION = /\?(?:\s*\([^)]*\))?$|\?\s+\S[^?]*:$/u;
const QUESTION_REACH = 6;

/** The nearest row above `first` (within the prompt, a few rows up) that asks a question, or null. */
function questionAbove(rows: readonly string[], from: number, first: number): string | null {
  let seen = 0;
  for (let i = first - 1; i >= from && seen < QUESTION_REACH; i--) {
    const row = (rows[i] ?? "").trim();
    if (row === "") continue;
    if (isRule(row)) break;
    if (QUESTION.test(row)) return row;
    seen++;
  }
  return null;
}

/** One past the last non-blank row in [from, to). */
function lastFilled(rows: readonly string[], from: number, to: number): number {
  let end = to;
  while (end > from && isBlank(rows[end - 1])) end--;
  return end;
}
