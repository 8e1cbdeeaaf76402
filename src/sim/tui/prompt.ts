/**
 * The TUI's own numbered prompt for a WAITING step. It lives apart from the
 * engine's pending state on purpose: agy 1.0.x keeps this prompt open after
 * the step was answered over RPC until keys close it (spike-notes §5.4).
 */
import type { TuiAnswer, TuiPending } from "./tui-port.js";

/** Permission options in agy's order: 1 = Yes … 4 = No (spike-notes §5.6). */
export const PERMISSION_OPTIONS = [
  "Yes",
  "Yes, and always allow this command for this conversation",
  "Yes, and always allow in this workspace",
  "No",
] as const;

export type PromptKey =
  | { type: "digit"; digit: number }
  | { type: "up" | "down" | "enter" | "escape" };

/** What a key did: nothing final yet, or an answer to deliver (the prompt then closes). */
export type PromptOutcome = { done: false } | { done: true; answer: TuiAnswer };

export interface TuiPrompt {
  readonly pending: TuiPending;
  /** 0-based highlighted option. */
  readonly cursor: number;
  /** Option ids ticked in a multi-select question. */
  readonly ticked: ReadonlySet<string>;
  key(key: PromptKey): PromptOutcome;
  /** The prompt's lines, without the surrounding layout. */
  lines(): string[];
}

/** A numbered prompt for `pending`, pointer on option 1. */
export function createTuiPrompt(pending: TuiPending): TuiPrompt {
  return new NumberedPrompt(pending);
}

class NumberedPrompt implements TuiPrompt {
  readonly pending: TuiPending;
  #cursor = 0;
  readonly #ticked = new Set<string>();

  constructor(pending: TuiPending) {
    this.pending = pending;
  }

  get cursor(): number {
    return this.#cursor;
  }

  get ticked(): ReadonlySet<string> {
    return this.#ticked;
  }

  key(key: PromptKey): PromptOutcome {
    const count = this.#optionCount();
    switch (key.type) {
      case "up":
        this.#cursor = (this.#cursor + count - 1) % count;
        return { done: false };
      case "down":
        this.#cursor = (this.#cursor + 1) % count;
        return { done: false };
      case "digit":
        if (key.digit >= 1 && key.digit <= count) {
          this.#cursor = key.digit - 1;
          if (this.#multiSelect()) this.#toggle(this.#optionId(this.#cursor));
        }
        return { done: false };
      case "escape":
        return {
          done: true,
          answer: this.pending.kind === "permission" ? { kind: "permission", allow: false } : { kind: "dismiss" },
        };
      case "enter":
        return { done: true, answer: this.#confirm() };
    }
  }

  lines(): string[] {
    if (this.pending.kind === "permission") {
      const out = [`Allow this command? ${this.pending.target}`];
      if (this.pending.description !== "") out.push(`  ${this.pending.description}`);
      const pattern = this.pending.suggestedPersistPattern;
      PERMISSION_OPTIONS.forEach((text, i) => {
        const shown = i === 1 && pattern !== undefined ? `Yes, and always allow \`${pattern}\` for this conversation` : text;
        out.push(this.#optionLine(i, shown));
      });
      out.push("Enter to confirm · Esc to decline");
      return out;
    }
    const [first, ...others] = this.pending.questions;
    if (first === undefined) return ["(question without content)", "Esc to dismiss"];
    const out = [first.question];
    first.options.forEach((option, i) => out.push(this.#optionLine(i, option.text)));
    for (const other of others) out.push(`  (also asked: ${other.question})`);
    out.push(first.multiSelect ? "Digits toggle · Enter to confirm · Esc to dismiss" : "Enter to confirm · Esc to dismiss");
    return out;
  }

  #optionLine(i: number, text: string): string {
    const pointer = i === this.#cursor ? ">" : " ";
    const tick = this.#multiSelect() ? (this.#ticked.has(this.#optionId(i)) ? "[x] " : "[ ] ") : "";
    return ` ${pointer} ${i + 1}. ${tick}${text}`;
  }

  #confirm(): TuiAnswer {
    if (this.pending.kind === "permission") {
      return { kind: "permission", allow: this.#cursor !== PERMISSION_OPTIONS.length - 1 };
    }
    if (this.#multiSelect()) {
      // Keep the options' order, not the order they were ticked in.
      const ids = this.#options().map((o) => o.id).filter((id) => this.#ticked.has(id));
      return { kind: "question", selectedOptionIds: ids };
    }
    const id = this.#options()[this.#cursor]?.id;
    return id === undefined ? { kind: "dismiss" } : { kind: "question", selectedOptionIds: [id] };
  }

  #toggle(id: string): void {
    if (this.#ticked.has(id)) this.#ticked.delete(id);
    else this.#ticked.add(id);
  }

  #options(): { id: string; text: string }[] {
    return this.pending.kind === "question" ? (this.pending.questions[0]?.options ?? []) : [];
  }

  #optionId(i: number): string {
    return this.#options()[i]?.id ?? String(i + 1);
  }

  #multiSelect(): boolean {
    return this.pending.kind === "question" && this.pending.questions[0]?.multiSelect === true;
  }

  #optionCount(): number {
    return this.pending.kind === "permission" ? PERMISSION_OPTIONS.length : Math.max(1, this.#options().length);
  }
}
