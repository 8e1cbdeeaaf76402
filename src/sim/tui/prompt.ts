/**
 * The dialog agy draws for a WAITING step, replacing the composer (spike-notes
 * §13): the tool row, a header word and a full-width rule, the body, the
 * question, the options with the `>` pointer at column 0, and a key-hint
 * footer. It lives apart from the engine's pending state on purpose: agy
 * keeps this dialog open after the step was answered over RPC until keys
 * close it (spike-notes §5.4).
 *
 * Keys: Up/Down move the pointer, Enter confirms the pointed option, Escape
 * declines. Typed text is not taken — but the Enter after it still confirms
 * the pointed option, as on real agy (agy 1.2.3). Digits move the pointer
 * only when the TUI accepts digits (agy 1.0.10); by default they do nothing.
 */
import type { TuiAnswer, TuiPending, TuiQuestion } from "./tui-port.js";
import { isTui12, type TuiCommandOptions, type TuiDigits, type TuiVersion } from "./tui-options.js";
import { createTuiPrompt12 } from "./prompt-12.js";
import type { TuiKey } from "./key-parser.js";
import { menuRows, movePointer } from "./menu-rows.js";

export type PromptKey =
  | { type: "digit"; digit: number }
  | { type: "text"; text: string }
  | { type: "up" | "down" | "left" | "enter" | "escape" | "toggle" | "tab" | "backspace" };

/**
 * The dialog keys in a terminal key: digits one by one (tmux may deliver "23"
 * as one chunk), Space toggles, Tab, Left and Backspace; other text comes as
 * `text` (only 1.2.x's amend and write-in fields take it).
 */
export function promptKeysOf(key: TuiKey): PromptKey[] {
  if (key.type === "text") {
    return Array.from(key.text).map((ch): PromptKey => {
      if (/^[0-9]$/.test(ch)) return { type: "digit", digit: Number(ch) };
      if (ch === " ") return { type: "toggle" };
      if (ch === "\t") return { type: "tab" };
      return { type: "text", text: ch };
    });
  }
  if (key.type === "enter" || key.type === "escape" || key.type === "up" || key.type === "down" || key.type === "left" || key.type === "backspace")
    return [{ type: key.type }];
  return [];
}

/**
 * What a key did: nothing final yet; an answer to deliver (the dialog then
 * closes), with the amend field's text when there was one (agy 1.2.x,
 * spike-notes K4); or — agy 1.2.x Escape at an approval (spike-notes K5) — an interrupt: the
 * tool call is cancelled and the turn ends.
 */
export type PromptOutcome = { done: false } | { done: true; answer: TuiAnswer; instruction?: string; interrupt?: undefined } | { done: true; interrupt: true };

export interface TuiPrompt {
  readonly pending: TuiPending;
  /** 0-based highlighted option. */
  readonly cursor: number;
  /** Option ids ticked in a multi-select question. */
  readonly ticked: ReadonlySet<string>;
  /** The options' labels, in screen order. */
  readonly labels: readonly string[];
  key(key: PromptKey): PromptOutcome;
  /** The dialog's rows at `width` columns, without the status row. */
  lines(width: number): string[];
}

export interface PromptSettings {
  digits: TuiDigits;
  version: TuiVersion;
  /** 1.2 command dialogs: 4 options (default) or 2 (spike-notes §13 #29, K2, §13 #30, K3). */
  commandOptions?: TuiCommandOptions;
}

/** A dialog for `pending`, pointer on option 1: agy 1.2.x's ({@link createTuiPrompt12}) on version `1.2`. */
export function createTuiPrompt(pending: TuiPending, settings: PromptSettings = { digits: "ignore", version: "1.1" }): TuiPrompt {
  if (isTui12(settings.version)) return createTuiPrompt12(pending, { commandOptions: settings.commandOptions ?? 4 });
  return new Dialog(pending, settings);
}

interface Option {
  label: string;
  /** The answer Enter sends on this option; questions answer from their ids. */
  answer: TuiAnswer;
  id?: string;
}

const ALLOW: TuiAnswer = { kind: "permission", allow: true };
const DENY: TuiAnswer = { kind: "permission", allow: false };

/** agy quotes the first 80 characters of a command in its always-allow labels (agy 1.1.27). */
function commandPrefix(command: string): string {
  const chars = Array.from(command);
  return chars.length <= 80 ? command : `${chars.slice(0, 80).join("")}...`;
}

function permissionOptions(pending: Extract<TuiPending, { kind: "permission" }>): Option[] {
  switch (pending.action ?? "command") {
    case "create-file":
      return [
        { label: "Yes, allow creation", answer: ALLOW },
        { label: "No, deny creation", answer: DENY },
      ];
    case "edit-file":
      return [
        { label: "Yes, accept this change", answer: ALLOW },
        { label: "No, reject this change", answer: DENY },
      ];
    case "read-file":
      return [
        { label: "Yes, allow reading", answer: ALLOW },
        { label: "No, deny reading", answer: DENY },
      ];
    case "command": {
      const quoted = `'${commandPrefix(pending.target)}'`;
      const options: Option[] = [
        { label: "Yes", answer: ALLOW },
        { label: `Yes, and always allow in this conversation for commands that start with ${quoted}`, answer: ALLOW },
        { label: `Yes, and always allow for commands that start with ${quoted} (Persist to settings.json)`, answer: ALLOW },
        { label: "No", answer: DENY },
      ];
      if (pending.deniedBefore === true) {
        options.push(
          { label: `No, and always deny for commands that start with ${quoted} in this conversation`, answer: DENY },
          { label: `No, and always deny for commands that start with ${quoted} (Persist to settings.json)`, answer: DENY },
        );
      }
      return options;
    }
  }
}

class Dialog implements TuiPrompt {
  readonly pending: TuiPending;
  readonly #settings: PromptSettings;
  readonly #options: Option[];
  #cursor = 0;
  readonly #ticked = new Set<string>();

  constructor(pending: TuiPending, settings: PromptSettings) {
    this.pending = pending;
    this.#settings = settings;
    this.#options =
      pending.kind === "permission"
        ? permissionOptions(pending)
        : (pending.questions[0]?.options ?? []).map((o) => ({ label: o.text, id: o.id, answer: { kind: "question", selectedOptionIds: [o.id] } }));
  }

  get cursor(): number {
    return this.#cursor;
  }

  get ticked(): ReadonlySet<string> {
    return this.#ticked;
  }

  get labels(): readonly string[] {
    return this.#options.map((o) => o.label);
  }

  key(key: PromptKey): PromptOutcome {
    switch (key.type) {
      case "up":
      case "down":
        this.#cursor = movePointer(this.#cursor, key.type === "up" ? -1 : 1, this.#options.length);
        return { done: false };
      case "digit":
        if (this.#settings.digits === "accept" && key.digit >= 1 && key.digit <= this.#options.length) {
          this.#cursor = key.digit - 1;
          if (this.#multiSelect()) this.#toggle(this.#cursor);
        }
        return { done: false };
      case "toggle":
        if (this.#multiSelect()) this.#toggle(this.#cursor);
        return { done: false };
      case "escape":
        return { done: true, answer: this.pending.kind === "permission" ? DENY : { kind: "dismiss" } };
      case "enter":
        return { done: true, answer: this.#confirm() };
      default:
        return { done: false };
    }
  }

  lines(width: number): string[] {
    const pending = this.pending;
    if (pending.kind === "question") return this.#questionLines(pending.questions, width);
    const rule = "─".repeat(width);
    const options = menuRows(
      this.#options.map((o, i) => ({ label: o.label, number: i + 1 })),
      this.#cursor,
      width,
    );
    switch (pending.action ?? "command") {
      case "create-file": {
        const preview = pending.preview ?? [];
        return [
          `● Create(${pending.target}) (ctrl+o to expand)`,
          "",
          "Create file",
          rule,
          "",
          `${pending.target}  +${preview.length}`,
          ...preview.map((line, i) => `${String(i + 1).padStart(4)} +  ${line}`),
          "",
          "Allow creation of this file?",
          ...options,
          "",
          "  ↑/↓ Navigate · tab Amend · f full diff",
        ];
      }
      case "edit-file":
        return [
          `● Edit(${pending.target}) (ctrl+o to expand)`,
          "",
          "Pending edit",
          rule,
          "",
          pending.target,
          "",
          "Accept this file edit?",
          ...options,
          "",
          "  ↑/↓ Navigate · tab Amend · f full diff",
        ];
      case "read-file":
        return [
          `● Read(${pending.target}) (ctrl+o to expand)`,
          "",
          "Read file",
          rule,
          "",
          pending.target,
          "",
          "Allow reading this file?",
          ...options,
          "",
          "  ↑/↓ Navigate · tab Amend",
        ];
      case "command": {
        const commandLines = pending.target.split("\n");
        const hidden = commandLines.length - 4;
        const review = this.#settings.version === "1.0" ? " · ctrl+r Review" : "";
        return [
          `● Bash(${commandLines[0] ?? ""}) (ctrl+o to expand)`,
          "",
          "Command",
          rule,
          "",
          "Requesting permission for:",
          ...commandLines.slice(0, 4).map((line) => `   ${line}`),
          ...(hidden > 0 ? [`   ⋯ (${hidden} lines hidden)`] : []),
          "",
          "Do you want to proceed?",
          ...options,
          "",
          `  ↑/↓ Navigate · tab Amend · ctrl+g edit/expand command${review}`,
        ];
      }
    }
  }

  /** Not captured from agy: the simulator's questions drawn in the style of its permission dialogs. */
  #questionLines(questions: readonly TuiQuestion[], width: number): string[] {
    const [first, ...others] = questions;
    const multi = this.#multiSelect();
    const rows = this.#options.map((o, i) => ({
      label: multi ? `${this.#ticked.has(o.id ?? "") ? "[x]" : "[ ]"} ${o.label}` : o.label,
      number: i + 1,
    }));
    return [
      `● Question(${first?.question ?? ""})`,
      "",
      "Question",
      "─".repeat(width),
      "",
      first?.question ?? "(question without content)",
      ...menuRows(rows, this.#cursor, width),
      ...others.map((q) => `  (also asked: ${q.question})`),
      "",
      multi ? "  ↑/↓ Navigate · space Toggle · enter Confirm" : "  ↑/↓ Navigate · enter Select",
    ];
  }

  #confirm(): TuiAnswer {
    const pointed = this.#options[this.#cursor];
    if (this.pending.kind === "permission") return pointed?.answer ?? DENY;
    if (pointed === undefined) return { kind: "dismiss" };
    if (this.#multiSelect() && this.#ticked.size > 0) {
      // Keep the options' order, not the order they were ticked in.
      const ids = this.#options.flatMap((o) => (o.id !== undefined && this.#ticked.has(o.id) ? [o.id] : []));
      return { kind: "question", selectedOptionIds: ids };
    }
    return pointed.answer;
  }

  #toggle(index: number): void {
    const id = this.#options[index]?.id;
    if (id === undefined) return;
    if (this.#ticked.has(id)) this.#ticked.delete(id);
    else this.#ticked.add(id);
  }

  #multiSelect(): boolean {
    return this.pending.kind === "question" && this.pending.questions[0]?.multiSelect === true;
  }
}
