/**
 * What each key agy-bridge could press does in agy's TUI, per agy version
 * and per screen — the one place that decides which keys are sent into agy
 * (docs/tmux.md "The key table"). Pure: data and functions over it.
 *
 * A key's effect differs by version: on agy 1.2.x a digit answers a
 * numbered menu at once (spike-notes K1), Escape at a command approval
 * cancels the tool call and ends the turn (K5), Tab opens the amend field
 * (K4), LF inserts a newline and only CR submits (K15). So every key the
 * bridge presses is looked up here for the version in front of it and the
 * screen it just read, and pressed only when its effect is the one wanted.
 *
 * `keyTableFor(version)` picks the row of a version: agy 1.0.x, 1.1.x and
 * 1.2.1–1.2.17 have rows of their own; anything else (null, unparsable,
 * older, 1.2.0, or newer than 1.2.17) gets the conservative row, where only
 * pointer moves, Enter on a verified option, CR in the composer and BSpace
 * in a draft are known — nothing that could cancel, dismiss or answer at
 * once (a digit only where the screen itself prints it as its key). Which
 * keys answer, decline or close a dialog is planned in key-plans.ts.
 *
 * Pressing goes through `chooseKey`, which returns a `ChosenKey` only when
 * the table says the key has the wanted effect there; the pane adapters
 * (`PromptPane`, `TurnPane`) take nothing else, so no code path can send a
 * key the table did not choose.
 */
import type { FileAction, ScreenModel, ScreenPrompt } from "./screen-types.js";

/** What a key does on one screen of one agy version. */
export type KeyEffect =
  /** Moves a menu's `>` pointer one row (Up/Down). */
  | "moves_pointer"
  /** Confirms the row under the pointer (Enter in a menu). */
  | "selects_pointed"
  /** Answers a numbered menu with that option, without Enter (a digit on 1.2.x). */
  | "answers_at_once"
  /** Cancels the tool call the dialog asks about. */
  | "cancels_tool_call"
  /** Ends agy's turn (`Interrupted · What should … do instead?`). */
  | "ends_turn"
  /** Declines the dialog (agy: `User declined the tool call`) or skips a question. */
  | "declines"
  /** Closes a panel, popup or overlay without answering anything. */
  | "dismisses"
  /** Opens the amend field of a command approval (Tab on 1.2.x). */
  | "opens_amend"
  /** Goes into the composer as text. */
  | "types_text"
  /** Edits the draft in the composer (the clearing keys). */
  | "edits_draft"
  /** Inserts a newline into the draft without submitting. */
  | "inserts_newline"
  /** Submits the composer's text as a turn. */
  | "submits"
  /** Approves something agy-bridge never means to (ctrl+k: a subagent; Enter in the amend field: an approval with a person's half-typed words). */
  | "approves_other"
  /** Does nothing. */
  | "nothing"
  /** Quits agy (or may, pressed twice). */
  | "quits"
  /** Not known for this version and screen: never pressed. */
  | "unknown";

/** The keys the table knows, by tmux key name; `digit` is any of `0`–`9`. `Enter` sends CR, `C-j` sends LF. */
export type TableKey = "digit" | "Enter" | "C-j" | "Escape" | "Tab" | "Up" | "Down" | "C-c" | "C-a" | "C-k" | "BSpace";
export const TABLE_KEYS: readonly TableKey[] = ["digit", "Enter", "C-j", "Escape", "Tab", "Up", "Down", "C-c", "C-a", "C-k", "BSpace"];

/**
 * The screen a key lands on: the composer (ready), agy at work, a kind of
 * prompt (a file dialog split by what it asks), or a screen nobody could read.
 */
export type KeySituation =
  | "composer"
  | "busy"
  | "command"
  | "file_create"
  | "pending_edit"
  | "file_access"
  | "question"
  | "trust"
  | "picker"
  | "slider"
  | "menu"
  | "slash"
  | "survey"
  | "amend"
  | "overlay"
  | "artifact_review"
  | "setup"
  | "other"
  | "unknown";
export const KEY_SITUATIONS: readonly KeySituation[] = [
  "composer",
  "busy",
  "command",
  "file_create",
  "pending_edit",
  "file_access",
  "question",
  "trust",
  "picker",
  "slider",
  "menu",
  "slash",
  "survey",
  "amend",
  "overlay",
  "artifact_review",
  "setup",
  "other",
  "unknown",
];

/** The dialogs about a step: what an RPC answer settles and may leave drawn. */
export type StepDialog = "command" | "file_create" | "pending_edit" | "file_access" | "question" | "other";
export const STEP_DIALOGS: readonly StepDialog[] = ["command", "file_create", "pending_edit", "file_access", "question", "other"];

/** One cell: what the key does, and the fact it comes from (`K5` = spike-notes "agy 1.2.x keys" K5, `§13 #22`, `§5.4`). */
export interface KeyFact {
  effects: readonly KeyEffect[];
  fact: string;
}

export type KeyRow = Readonly<Record<TableKey, KeyFact>>;

export type KeyLine = "1.0" | "1.1" | "1.2" | "conservative";

export interface KeyTable {
  /** Which row: agy 1.0.x, 1.1.x, 1.2.1–1.2.17, or the conservative one. */
  line: KeyLine;
  /** The version asked for, as given (null: unknown). */
  version: string | null;
  /** The versions the row covers, in words (`agy 1.2.1 – 1.2.17`). */
  covers: string;
  /** What each key does on each screen while its step waits (or with no step at all). */
  keys: Readonly<Record<KeySituation, KeyRow>>;
  /** What each key does at a dialog whose step RPC already shows settled (agy's leftover after an RPC answer). */
  settled: Readonly<Record<StepDialog, KeyRow>>;
}

// ---------------------------------------------------------------------------
// The rows. Every cell not named below is `unknown` (never pressed).

const UNKNOWN: KeyFact = { effects: ["unknown"], fact: "none" };
type Cells = Partial<Record<TableKey, KeyFact>>;

function fact(fact: string, ...effects: KeyEffect[]): KeyFact {
  return { effects, fact };
}

function row(cells: Cells = {}): KeyRow {
  return Object.fromEntries(TABLE_KEYS.map((key) => [key, cells[key] ?? UNKNOWN])) as Record<TableKey, KeyFact>;
}

/** Arrows move the `>` and Enter confirms the row under it: true of every numbered agy menu we know (§13 #12, #14, #15; K1). */
const POINTER: Cells = {
  Up: fact("§13 #12", "moves_pointer"),
  Down: fact("§13 #12", "moves_pointer"),
  Enter: fact("§13 #15", "selects_pointed"),
};

function rows(cells: Partial<Record<KeySituation, Cells>>): Record<KeySituation, KeyRow> {
  return Object.fromEntries(KEY_SITUATIONS.map((s) => [s, row(cells[s])])) as Record<KeySituation, KeyRow>;
}

function settledRows(cells: Partial<Record<StepDialog, Cells>>): Record<StepDialog, KeyRow> {
  return Object.fromEntries(STEP_DIALOGS.map((s) => [s, row(cells[s])])) as Record<StepDialog, KeyRow>;
}

/** The composer on 1.0/1.1: CR submits (§6.2 step 7), C-a C-k BSpace clear a draft (§6.2 step 3), C-c quits (§13 #22). */
const COMPOSER_1_0: Cells = {
  Enter: fact("§6.2 step 7", "submits"),
  digit: fact("K1", "types_text"),
  "C-a": fact("§6.2 step 3", "edits_draft"),
  "C-k": fact("§6.2 step 3", "edits_draft"),
  BSpace: fact("§6.2 step 3", "edits_draft"),
  "C-c": fact("§13 #22", "quits"),
};

/** The slash popup: Enter submits the HIGHLIGHTED command (§13 #20); one Escape closes the popup (K16; on 1.0/1.1 our reading, spike-notes §15.1). */
const SLASH_1_X: Cells = {
  ...POINTER,
  Enter: fact("§13 #20", "submits"),
  Escape: fact("K16", "dismisses"),
  Tab: fact("K13", "edits_draft"),
};

const V1_0: KeyTable = {
  line: "1.0",
  version: null,
  covers: "agy 1.0.x",
  keys: rows({
    composer: COMPOSER_1_0,
    // Escape while agy generates cancels the turn (§13 #5, #22).
    busy: { Escape: fact("§13 #22", "ends_turn"), "C-c": fact("§13 #22", "quits") },
    // Digits: live 1.0.10 moved the pointer (§5.6), ~1.0.14 ignored them (§13 #14): unknown, never pressed.
    command: { ...POINTER, Escape: fact("§13 #22", "declines"), "C-c": fact("§13 #22", "quits") },
    file_create: { ...POINTER, Escape: fact("§13 #22", "declines") },
    question: { ...POINTER, Escape: fact("§13 #22", "declines") },
    other: { ...POINTER },
    trust: { ...POINTER },
    picker: { ...POINTER, Escape: fact("§13 #17", "dismisses") },
    menu: { ...POINTER, digit: fact("§13 #18", "answers_at_once"), Escape: fact("§13 #18", "dismisses") },
    survey: { digit: fact("§13 #19", "answers_at_once") },
    slash: SLASH_1_X,
  }),
  // Escape cleared agy's leftover prompt after an RPC answer, harmlessly: the step had settled (§5.4, live 1.0.10).
  settled: settledRows({
    command: { Escape: fact("§5.4", "dismisses") },
    file_create: { Escape: fact("§5.4", "dismisses") },
    question: { Escape: fact("§5.4", "dismisses") },
    other: { Escape: fact("§5.4", "dismisses") },
  }),
};

const V1_1: KeyTable = {
  line: "1.1",
  version: null,
  covers: "agy 1.1.x",
  keys: rows({
    composer: { ...COMPOSER_1_0, "C-j": fact("K15", "inserts_newline") },
    busy: { Escape: fact("§13 #22", "ends_turn"), "C-c": fact("§13 #22", "quits") },
    command: { ...POINTER, Escape: fact("§13 #22", "declines"), "C-c": fact("§13 #22", "quits") },
    file_create: { ...POINTER, Escape: fact("§13 #22", "declines") },
    question: { ...POINTER, Escape: fact("§13 #22", "declines") },
    other: { ...POINTER },
    trust: { ...POINTER },
    picker: { ...POINTER, Escape: fact("§13 #17", "dismisses") },
    menu: { ...POINTER, digit: fact("§13 #18", "answers_at_once"), Escape: fact("§13 #18", "dismisses") },
    survey: { digit: fact("§13 #19", "answers_at_once") },
    slash: SLASH_1_X,
  }),
  // §5.4's harmless Escape was seen on 1.0.10 only; on 1.1.27 Escape also cancels a running turn (§13 #22), and the
  // turn an RPC answer resumed is running: no key is known to close a leftover dialog safely.
  settled: settledRows({}),
};

const V1_2: KeyTable = {
  line: "1.2",
  version: null,
  covers: "agy 1.2.1 – 1.2.17",
  keys: rows({
    // CR submits, LF inserts a newline (K15); ctrl+k approves a subagent (K16), so drafts are cleared with BSpace only.
    composer: {
      Enter: fact("K15", "submits"),
      "C-j": fact("K15", "inserts_newline"),
      digit: fact("K1", "types_text"),
      BSpace: fact("K16", "edits_draft"),
      "C-k": fact("K16", "approves_other"),
      "C-c": fact("K17", "dismisses", "quits"),
      Escape: fact("K16", "dismisses"),
    },
    busy: { Escape: fact("K5", "ends_turn"), "C-c": fact("K17", "ends_turn", "quits"), "C-k": fact("K16", "approves_other") },
    command: {
      ...POINTER,
      digit: fact("K1", "answers_at_once"),
      Escape: fact("K5", "cancels_tool_call", "ends_turn"),
      Tab: fact("K4", "opens_amend"),
      "C-c": fact("K17", "cancels_tool_call", "ends_turn"),
      "C-k": fact("K16", "approves_other"),
    },
    file_create: { ...POINTER, digit: fact("K1", "answers_at_once"), Escape: fact("K5", "cancels_tool_call"), Tab: fact("K4", "opens_amend") },
    pending_edit: { ...POINTER, digit: fact("K1", "answers_at_once"), Escape: fact("K6", "nothing") },
    file_access: { ...POINTER, digit: fact("K1", "answers_at_once") },
    // A digit commits the question on screen and moves on (K9); Escape skips it (K9).
    question: { ...POINTER, digit: fact("K9", "answers_at_once"), Escape: fact("K9", "declines") },
    other: { ...POINTER },
    trust: { ...POINTER },
    picker: { ...POINTER, Escape: fact("K10", "dismisses") },
    slider: { Enter: fact("K10", "selects_pointed"), Escape: fact("K10", "dismisses") },
    overlay: { Escape: fact("K10", "dismisses") },
    menu: { ...POINTER, digit: fact("§13 #18", "answers_at_once"), Escape: fact("§13 #18", "dismisses") },
    survey: { digit: fact("K14", "answers_at_once") },
    slash: SLASH_1_X,
    // The amend field: Enter submits the person's instruction with an approval, Escape ends the turn (K4, K5).
    amend: { Enter: fact("K4", "submits", "approves_other"), Escape: fact("K5", "cancels_tool_call", "ends_turn") },
    // `y`/`n` answer an artifact, `shift+a` approves all, Escape is Done (K11).
    artifact_review: { Escape: fact("K11", "dismisses") },
    // Enter flips the data-sharing consent on the Terms screen (K12): no key at all.
    setup: {},
  }),
  // Escape at a leftover approval interrupts the turn the answer resumed (K5, K7); the digit of the option the RPC
  // answer chose answers the same way again (K7) — and in `Pending edit` Escape does nothing (K6).
  settled: settledRows({
    command: { digit: fact("K7", "answers_at_once"), Escape: fact("K5", "cancels_tool_call", "ends_turn") },
    file_create: { digit: fact("K7", "answers_at_once"), Escape: fact("K5", "cancels_tool_call") },
    pending_edit: { digit: fact("K7", "answers_at_once"), Escape: fact("K6", "nothing") },
    file_access: { digit: fact("K7", "answers_at_once") },
    question: { digit: fact("K7", "answers_at_once"), Escape: fact("K9", "declines") },
  }),
};

/** Unknown or newer than 1.2.17: only pointer moves and Enter on a verified option; CR submits a turn; BSpace edits a draft. */
const CONSERVATIVE: KeyTable = {
  line: "conservative",
  version: null,
  covers: "an agy version the facts do not cover (unknown, older than 1.0, 1.2.0, or newer than 1.2.17)",
  keys: rows({
    // BSpace: no key list binds it to anything but editing (K16), so a draft may still be cleared one character at a time.
    composer: { Enter: fact("K15", "submits"), BSpace: fact("K16", "edits_draft") },
    command: POINTER,
    file_create: POINTER,
    pending_edit: POINTER,
    file_access: POINTER,
    question: POINTER,
    other: POINTER,
    trust: POINTER,
    picker: POINTER,
    menu: POINTER,
    slash: { ...POINTER, Enter: fact("§13 #20", "submits") },
  }),
  settled: settledRows({}),
};

/** The newest agy version the key facts cover (K1–K17 were captured up to 1.2.17). */
export const NEWEST_KNOWN_VERSION = "1.2.17";

/** `1.2.10`, `v1.2.10`, `1.2.10-beta` → [1, 2, 10]; undefined when it is no version. */
export function parseVersion(version: string): [number, number, number] | undefined {
  const match = /^v?(\d{1,4})\.(\d{1,4})\.(\d{1,6})(?:[-+.][0-9A-Za-z.+-]*)?$/.exec(version.trim());
  if (match === null) return undefined;
  return [Number(match[1]), Number(match[2]), Number(match[3])];
}

/**
 * The key table for an agy version: its own row for 1.0.x, 1.1.x and
 * 1.2.1–1.2.17; the conservative row for null, anything unparsable, and
 * versions the facts do not cover (newer than 1.2.17 above all).
 */
export function keyTableFor(version: string | null | undefined): KeyTable {
  const given = version ?? null;
  const parsed = given === null ? undefined : parseVersion(given);
  const line = parsed === undefined ? CONSERVATIVE : lineOf(parsed);
  return { ...line, version: given };
}

function lineOf([major, minor, patch]: [number, number, number]): KeyTable {
  if (major !== 1) return CONSERVATIVE;
  if (minor === 0) return V1_0;
  if (minor === 1) return V1_1;
  if (minor === 2 && patch >= 1 && patch <= 17) return V1_2;
  return CONSERVATIVE;
}

/** What the table's row names the version: `agy 1.2.10 (the 1.2.1 – 1.2.17 row)`, `an unknown agy version`. */
export function versionWords(table: KeyTable): string {
  if (table.version === null) return "an agy of unknown version";
  return table.line === "conservative" ? `agy ${table.version}, which the key facts do not cover` : `agy ${table.version}`;
}

// ---------------------------------------------------------------------------
// Reading a screen into a situation.

/** What a file dialog asks: the reader's `fileAction`, else its question. */
export function fileActionOf(prompt: ScreenPrompt): FileAction {
  if (prompt.fileAction !== undefined) return prompt.fileAction;
  const question = prompt.question ?? "";
  if (/file edit\?$/iu.test(question) || prompt.options.some((o) => /^yes, accept this change/iu.test(o.label))) return "edit";
  if (/access to this file\?$/iu.test(question) || prompt.options.some((o) => /^yes, allow access/iu.test(o.label))) return "access";
  return "create";
}

/** The situation of a prompt. */
export function promptSituation(prompt: ScreenPrompt): KeySituation {
  switch (prompt.kind) {
    case "file": {
      const action = fileActionOf(prompt);
      return action === "edit" ? "pending_edit" : action === "access" ? "file_access" : "file_create";
    }
    case "command":
    case "question":
    case "trust":
    case "picker":
    case "slider":
    case "menu":
    case "slash":
    case "survey":
    case "amend":
    case "overlay":
    case "artifact_review":
    case "setup":
    case "other":
      return prompt.kind;
    default:
      // A prompt kind this table does not know yet: no key is known for it.
      return "unknown";
  }
}

/** The situation of a screen: its prompt's, else `busy`, the composer when ready, else `unknown`. */
export function situationOf(screen: ScreenModel): KeySituation {
  if (screen.state === "prompt") return screen.prompt === null ? "unknown" : promptSituation(screen.prompt);
  if (screen.state === "busy") return "busy";
  if (screen.state === "ready" && screen.composer !== "absent") return "composer";
  return "unknown";
}

/** The step dialog a situation is, or undefined for screens that are about no step. */
export function stepDialogOf(situation: KeySituation): StepDialog | undefined {
  return (STEP_DIALOGS as readonly string[]).includes(situation) ? (situation as StepDialog) : undefined;
}

// ---------------------------------------------------------------------------
// Choosing keys.

/** The key a tmux `send-keys` argument is in the table: `3` → `digit`. */
export function tableKeyOf(key: string): TableKey | undefined {
  if (/^[0-9]$/.test(key)) return "digit";
  return (TABLE_KEYS as readonly string[]).includes(key) && key !== "digit" ? (key as TableKey) : undefined;
}

/** Where a key lands beyond its situation: at a settled step's leftover dialog; on a screen that advertises digits itself. */
export interface KeyContext {
  settled?: boolean;
  /** The screen prints its digit keys (`1-6 Select & Continue`, `[0] Skip`: §13 #18, #19), so a digit answers at once whatever the row says. */
  advertisedDigits?: boolean;
}

const ADVERTISED: KeyFact = { effects: ["answers_at_once"], fact: "§13 #18" };

/** What `key` does in `situation` (`settled`: at the leftover dialog of a step RPC shows settled). */
export function effectOf(table: KeyTable, situation: KeySituation, key: string, context: KeyContext = {}): KeyFact {
  const tableKey = tableKeyOf(key);
  if (tableKey === undefined) return UNKNOWN;
  if (context.settled === true) {
    const dialog = stepDialogOf(situation);
    return dialog === undefined ? UNKNOWN : table.settled[dialog][tableKey];
  }
  const cell = table.keys[situation][tableKey];
  if (tableKey === "digit" && context.advertisedDigits === true && cell.effects.includes("unknown")) return ADVERTISED;
  return cell;
}

declare const chosen: unique symbol;

/** A key the table chose for a screen: the only thing the pane adapters press. */
export interface ChosenKey {
  /** The tmux key name sent (`Down`, `3`, `Enter`). */
  readonly key: string;
  readonly effect: KeyEffect;
  readonly situation: KeySituation;
  readonly fact: string;
  readonly [chosen]: true;
}

/** Why the table chose no key: a sentence a person can act on. */
export class KeyRefusal {
  constructor(readonly reason: string) {}
}

/**
 * The key `key`, when the table says that in `situation` it has the effect
 * `wanted` and nothing the bridge never does (cancel a tool call, end a
 * turn, quit, approve something else, open the amend field) — unless that
 * very effect is what is wanted. Otherwise a `KeyRefusal` saying why.
 */
export function chooseKey(table: KeyTable, situation: KeySituation, key: string, wanted: KeyEffect, options: KeyContext = {}): ChosenKey | KeyRefusal {
  const cell = effectOf(table, situation, key, options);
  const where = `${options.settled === true ? "a leftover " : ""}${situationWords(situation)} on ${versionWords(table)}`;
  if (!cell.effects.includes(wanted)) {
    const does = cell.effects.includes("unknown") ? "is not known to" : `would ${cell.effects.map(effectWords).join(" and ")} and not`;
    return new KeyRefusal(
      `${key} ${does} ${effectWords(wanted)} at ${where} (spike-notes ${cell.fact === "none" ? "key table" : cell.fact}), so it was not pressed`,
    );
  }
  const harm = cell.effects.filter((e) => e !== wanted && HARMFUL.includes(e));
  if (harm.length > 0) {
    return new KeyRefusal(`${key} would also ${harm.map(effectWords).join(" and ")} at ${where} (spike-notes ${cell.fact}), so it was not pressed`);
  }
  return { key, effect: wanted, situation, fact: cell.fact } as ChosenKey;
}

/** Effects the bridge never causes on the side. */
const HARMFUL: readonly KeyEffect[] = ["cancels_tool_call", "ends_turn", "quits", "approves_other", "opens_amend", "unknown"];

/**
 * A key the bridge presses whatever the table says, because a person asked
 * for exactly that (`send --close-stale`): the reason is kept with it.
 */
export function explicitKey(table: KeyTable, situation: KeySituation, key: string, settled: boolean): ChosenKey {
  const cell = effectOf(table, situation, key, { settled });
  return { key, effect: cell.effects[0] ?? "unknown", situation, fact: cell.fact } as ChosenKey;
}

export function situationWords(situation: KeySituation): string {
  switch (situation) {
    case "composer":
      return "the composer";
    case "busy":
      return "agy at work";
    case "file_create":
      return "a Create file dialog";
    case "pending_edit":
      return "a Pending edit dialog";
    case "file_access":
      return "a File access dialog";
    case "artifact_review":
      return "the artifact review panel";
    case "setup":
      return "a first-run setup screen";
    case "unknown":
      return "a screen that could not be read";
    default:
      return `a ${situation} prompt`;
  }
}

const EFFECT_WORDS: Readonly<Record<KeyEffect, string>> = {
  moves_pointer: "move the pointer",
  selects_pointed: "select the pointed row",
  answers_at_once: "answer at once",
  cancels_tool_call: "cancel the tool call",
  ends_turn: "end agy's turn",
  declines: "decline",
  dismisses: "dismiss it",
  opens_amend: "open the amend field",
  types_text: "type text",
  edits_draft: "edit the draft",
  inserts_newline: "insert a newline",
  submits: "submit",
  approves_other: "approve something else",
  nothing: "do nothing",
  quits: "quit agy",
  unknown: "do something unknown",
};

export function effectWords(effect: KeyEffect): string {
  return EFFECT_WORDS[effect];
}
