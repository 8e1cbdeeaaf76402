/**
 * The dialogs of agy 1.2.x as other projects captured them live on
 * 1.2.1–1.2.17 (docs/spike-notes.md §13 #29–#33, K1–K9), drawn with the
 * simulator's own commands and paths:
 *
 * - `Command` — `Run this command?`, `1. Yes, run command`, two always-allow
 *   options, `4. No, cancel` (spike-notes §13 #29, K2), or the two-option form `1. Yes, run
 *   command` / `2. No, cancel` (spike-notes §13 #30, K3); Tab opens the amend field (spike-notes §13 #31, K4).
 * - `Create file` (also outside the workspace), `Pending edit`, `File access`
 *   (spike-notes §13 #32, K8).
 * - Question forms `Question i/N` with `Write-in...`, `esc Skip` and, from
 *   question 2, `← Back` (spike-notes §13 #33, K9).
 *
 * Keys (spike-notes K1, K5, K6, K9): a digit answers at once, without Enter (an Enter
 * that follows reaches whatever screen comes next); Enter confirms the
 * pointed option; Escape at a command, Create file or File access dialog
 * cancels the tool call and ends the turn (outcome `interrupt`), does nothing
 * in `Pending edit`, and skips the current question of a form.
 */
import type { TuiAnswer, TuiPending, TuiQuestion } from "./tui-port.js";
import type { TuiCommandOptions } from "./tui-options.js";
import { menuRows, movePointer } from "./menu-rows.js";
import type { PromptKey, PromptOutcome, TuiPrompt } from "./prompt.js";

const ALLOW: TuiAnswer = { kind: "permission", allow: true };
const DENY: TuiAnswer = { kind: "permission", allow: false };
/** Option 1's label once Tab opened the amend field (spike-notes §13 #31, K4). */
export const AMEND_LABEL = "Yes, and tell Antigravity CLI what to do next";
export const WRITE_IN_LABEL = "Write-in...";

interface Option {
  label: string;
  answer: TuiAnswer;
}

type Permission = Extract<TuiPending, { kind: "permission" }>;
type Question = Extract<TuiPending, { kind: "question" }>;

export interface Prompt12Settings {
  /** How many options a command dialog offers (spike-notes §13 #29, K2: 4, spike-notes §13 #30, K3: 2). */
  commandOptions: TuiCommandOptions;
}

/** A 1.2.x dialog for `pending`, pointer on option 1. */
export function createTuiPrompt12(pending: TuiPending, settings: Prompt12Settings): TuiPrompt {
  return pending.kind === "permission" ? new PermissionDialog12(pending, settings) : new QuestionForm12(pending);
}

/** agy quotes the first 80 characters of a command in its always-allow labels (agy 1.1.27). */
function quoted(pending: Permission): string {
  const chars = Array.from(pending.suggestedPersistPattern ?? pending.target);
  return `'${chars.length <= 80 ? chars.join("") : `${chars.slice(0, 80).join("")}...`}'`;
}

function permissionOptions(pending: Permission, settings: Prompt12Settings): Option[] {
  const outside = pending.outsideWorkspace === true;
  switch (pending.action ?? "command") {
    case "create-file":
      return [
        { label: "Yes, allow creation", answer: ALLOW },
        ...(outside ? [{ label: "Yes, and always allow non-workspace access", answer: ALLOW }] : []),
        { label: "No, deny creation", answer: DENY },
      ];
    case "edit-file":
      return [
        { label: "Yes, accept this change", answer: ALLOW },
        { label: "No, reject this change", answer: DENY },
      ];
    case "read-file":
      return [
        { label: "Yes, allow access", answer: ALLOW },
        ...(outside ? [{ label: "Yes, and always allow non-workspace access", answer: ALLOW }] : []),
        { label: "No, deny access", answer: DENY },
      ];
    case "command": {
      if (settings.commandOptions === 2) {
        return [
          { label: "Yes, run command", answer: ALLOW },
          { label: "No, cancel", answer: DENY },
        ];
      }
      const prefix = quoted(pending);
      return [
        { label: "Yes, run command", answer: ALLOW },
        { label: `Yes, and always allow in this conversation for commands that start with ${prefix}`, answer: ALLOW },
        { label: `Yes, and always allow for commands that start with ${prefix} (Persist to settings.json)`, answer: ALLOW },
        { label: "No, cancel", answer: DENY },
      ];
    }
  }
}

class PermissionDialog12 implements TuiPrompt {
  readonly pending: Permission;
  readonly ticked: ReadonlySet<string> = new Set();
  readonly #options: Option[];
  #cursor = 0;
  /** The amend field's text, once Tab opened it (command dialogs only). */
  #amend: string | undefined;

  constructor(pending: Permission, settings: Prompt12Settings) {
    this.pending = pending;
    this.#options = permissionOptions(pending, settings);
  }

  get cursor(): number {
    return this.#cursor;
  }

  get labels(): readonly string[] {
    return this.#options.map((o, i) => (i === 0 && this.#amend !== undefined ? AMEND_LABEL : o.label));
  }

  get amendText(): string | undefined {
    return this.#amend;
  }

  key(key: PromptKey): PromptOutcome {
    const action = this.pending.action ?? "command";
    if (this.#amend !== undefined) {
      // The amend field takes text (digits included); Escape still interrupts the turn (spike-notes K5).
      if (key.type === "digit") {
        this.#amend += String(key.digit);
        return { done: false };
      }
      if (key.type === "text") {
        this.#amend += key.text;
        return { done: false };
      }
      if (key.type === "toggle") {
        this.#amend += " ";
        return { done: false };
      }
      if (key.type === "backspace") {
        this.#amend = Array.from(this.#amend).slice(0, -1).join("");
        return { done: false };
      }
    }
    switch (key.type) {
      case "up":
      case "down":
        this.#cursor = movePointer(this.#cursor, key.type === "up" ? -1 : 1, this.#options.length);
        return { done: false };
      case "digit": {
        // A digit answers at once (spike-notes K1); one with no option under it does nothing.
        const option = this.#options[key.digit - 1];
        return key.digit >= 1 && option !== undefined ? { done: true, answer: option.answer } : { done: false };
      }
      case "tab":
        if (action === "command") {
          this.#amend ??= "";
          this.#cursor = 0;
        }
        return { done: false };
      case "escape":
        // Pending edit: "Esc disabled during file edits" (spike-notes K6).
        return action === "edit-file" ? { done: false } : { done: true, interrupt: true };
      case "enter": {
        const option = this.#options[this.#cursor] ?? this.#options[this.#options.length - 1];
        if (option === undefined) return { done: true, answer: DENY };
        if (this.#cursor === 0 && this.#amend !== undefined && this.#amend.trim() !== "") {
          return { done: true, answer: option.answer, instruction: this.#amend.trim() };
        }
        return { done: true, answer: option.answer };
      }
      default:
        return { done: false };
    }
  }

  lines(width: number): string[] {
    const pending = this.pending;
    const rule = "─".repeat(width);
    const rows = menuRows(
      this.labels.map((label, i) => ({ label, number: i + 1 })),
      this.#cursor,
      width,
    );
    const reason = pending.outsideWorkspace === true ? ["Reason: outside workspace"] : [];
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
          ...reason,
          "",
          "Allow creation of this file?",
          ...rows,
          "",
          "  ↑/↓ Navigate · tab Amend · f full diff",
        ];
      }
      case "edit-file": {
        const removed = pending.removed ?? [];
        const added = pending.preview ?? [];
        const counts = [...(added.length > 0 ? [`+${added.length}`] : []), ...(removed.length > 0 ? [`-${removed.length}`] : [])].join(" ");
        return [
          `● Edit(${pending.target}) (ctrl+o to expand)`,
          "",
          "Pending edit",
          rule,
          "",
          `${pending.target}  ${counts}`,
          ...removed.map((line) => `   1 -  ${line}`),
          ...added.map((line, i) => `${String(i + 1).padStart(4)} +  ${line}`),
          "",
          "  shift+tab to auto-approve file edits",
          "Accept this file edit?",
          ...rows,
          "",
          "  ↑/↓ Navigate · tab Amend · f full diff",
        ];
      }
      case "read-file":
        return [
          `● Read(${pending.target}) (ctrl+o to expand)`,
          "",
          "File access",
          rule,
          "",
          `Read: ${pending.target}`,
          ...reason,
          "",
          "Allow access to this file?",
          ...rows,
          "",
          "  ↑/↓ Navigate",
        ];
      case "command": {
        const commandLines = pending.target.split("\n");
        const hidden = commandLines.length - 4;
        const options =
          this.#amend === undefined
            ? rows
            : [
                // The input row sits right under option 1 (spike-notes §13 #31, K4): `    > text█`.
                ...menuRows([{ label: AMEND_LABEL, number: 1 }], this.#cursor === 0 ? 0 : -1, width),
                `    > ${this.#amend}█`,
                ...menuRows(
                  this.labels.slice(1).map((label, i) => ({ label, number: i + 2 })),
                  this.#cursor - 1,
                  width,
                ),
              ];
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
          "Run this command?",
          ...options,
          "",
          this.#amend !== undefined ? "  enter Submit" : "  ↑/↓ Navigate · tab Amend · ctrl+g edit/expand command",
        ];
      }
    }
  }
}

/** One answer per question of a form, filled in as the person goes. */
interface Given {
  selectedOptionIds: string[];
  writeIn?: string;
}

class QuestionForm12 implements TuiPrompt {
  readonly pending: Question;
  readonly #ticked = new Set<string>();
  readonly #given: (Given | undefined)[] = [];
  #index = 0;
  #cursor = 0;
  /** The `Your answer:` field of `Write-in...` (1.2.17), once opened. */
  #writeIn: string | undefined;

  constructor(pending: Question) {
    this.pending = pending;
  }

  get cursor(): number {
    return this.#cursor;
  }

  get ticked(): ReadonlySet<string> {
    return this.#ticked;
  }

  /** Which question (0-based) the form shows. */
  get questionIndex(): number {
    return this.#index;
  }

  get labels(): readonly string[] {
    return [...this.#question().options.map((o) => o.text), WRITE_IN_LABEL];
  }

  #question(): TuiQuestion {
    return this.pending.questions[this.#index] ?? { question: "(question without content)", options: [], multiSelect: false };
  }

  key(key: PromptKey): PromptOutcome {
    if (this.#writeIn !== undefined) return this.#writeInKey(key);
    const question = this.#question();
    const count = question.options.length + 1;
    switch (key.type) {
      case "up":
      case "down":
        this.#cursor = movePointer(this.#cursor, key.type === "up" ? -1 : 1, count);
        return { done: false };
      case "left":
        // `← Back` from question 2 on (spike-notes §13 #33, K9).
        if (this.#index > 0) {
          this.#index -= 1;
          this.#cursor = 0;
          this.#ticked.clear();
        }
        return { done: false };
      case "toggle":
        if (question.multiSelect) this.#toggle(this.#cursor);
        return { done: false };
      case "digit":
        if (key.digit < 1 || key.digit > count) return { done: false };
        this.#cursor = key.digit - 1;
        // Multi-select forms were not captured: there a digit ticks its option and Enter commits.
        if (question.multiSelect && this.#cursor < question.options.length) {
          this.#toggle(this.#cursor);
          return { done: false };
        }
        return this.#commitPointed();
      case "enter":
        return this.#commitPointed();
      case "escape":
        // `esc Skip` (spike-notes §13 #33, K9): this question stays unanswered and the form moves on.
        return this.#commit(undefined);
      default:
        return { done: false };
    }
  }

  #writeInKey(key: PromptKey): PromptOutcome {
    const text = this.#writeIn ?? "";
    switch (key.type) {
      case "digit":
        this.#writeIn = text + String(key.digit);
        return { done: false };
      case "text":
        this.#writeIn = text + key.text;
        return { done: false };
      case "toggle":
        this.#writeIn = `${text} `;
        return { done: false };
      case "backspace":
        this.#writeIn = Array.from(text).slice(0, -1).join("");
        return { done: false };
      case "escape":
        this.#writeIn = undefined;
        return { done: false };
      case "enter":
        this.#writeIn = undefined;
        return text.trim() === "" ? { done: false } : this.#commit({ selectedOptionIds: [], writeIn: text.trim() });
      default:
        return { done: false };
    }
  }

  #commitPointed(): PromptOutcome {
    const question = this.#question();
    if (this.#cursor >= question.options.length) {
      this.#writeIn = "";
      return { done: false };
    }
    if (question.multiSelect && this.#ticked.size > 0) {
      return this.#commit({ selectedOptionIds: question.options.flatMap((o) => (this.#ticked.has(o.id) ? [o.id] : [])) });
    }
    const option = question.options[this.#cursor];
    return this.#commit(option === undefined ? undefined : { selectedOptionIds: [option.id] });
  }

  /** Records this question's answer and moves on; the last question submits the form (no review step, spike-notes §13 #33, K9). */
  #commit(given: Given | undefined): PromptOutcome {
    this.#given[this.#index] = given;
    this.#ticked.clear();
    this.#cursor = 0;
    if (this.#index + 1 < this.pending.questions.length) {
      this.#index += 1;
      return { done: false };
    }
    const responses = this.pending.questions.map((_, i) => this.#given[i] ?? { selectedOptionIds: [] });
    if (responses.every((r) => r.selectedOptionIds.length === 0 && r.writeIn === undefined)) return { done: true, answer: { kind: "dismiss" } };
    return { done: true, answer: { kind: "question", selectedOptionIds: responses[0]?.selectedOptionIds ?? [], responses } };
  }

  #toggle(index: number): void {
    const id = this.#question().options[index]?.id;
    if (id === undefined) return;
    if (this.#ticked.has(id)) this.#ticked.delete(id);
    else this.#ticked.add(id);
  }

  lines(width: number): string[] {
    const questions = this.pending.questions;
    const question = this.#question();
    const multi = question.multiSelect;
    const rows = this.labels.map((label, i) => ({
      label: multi && i < question.options.length ? `${this.#ticked.has(question.options[i]?.id ?? "") ? "[x]" : "[ ]"} ${label}` : label,
      number: i + 1,
    }));
    const field = this.#writeIn !== undefined ? ["", `Your answer: ${this.#writeIn}█`] : [];
    const footer =
      this.#writeIn !== undefined
        ? "  enter Submit · esc Go Back"
        : `  ↑/↓ Navigate · ${multi ? "space Toggle · " : ""}enter Select · esc Skip${this.#index > 0 ? " · ← Back" : ""}`;
    return [
      ...questions.map((q) => `? ${q.question}`),
      "",
      "Question",
      "─".repeat(width),
      "",
      `Question ${this.#index + 1}/${questions.length}: ${question.question}`,
      "",
      ...menuRows(rows, this.#cursor, width),
      ...field,
      "",
      footer,
    ];
  }
}
