/**
 * The composer's draft: text plus a cursor, edited with the few keys a tmux
 * driver uses (C-a / C-k to clear, spike-notes §6.2 step 3). Large pastes are shown
 * as a `[Pasted text #N +K lines]` placeholder while the full text is what
 * gets submitted (agy 1.0.x collapses pastes of about 13+ lines, spike-notes §6.2).
 */

/** Pastes with at least this many lines collapse to a placeholder. */
export const PASTE_COLLAPSE_LINES = 13;

export interface Draft {
  /** What the composer shows (placeholders, not the pasted text). */
  readonly shown: string;
  /** Cursor offset into {@link shown}. */
  readonly cursor: number;
  insert(text: string): void;
  paste(text: string): void;
  backspace(): void;
  lineStart(): void;
  lineEnd(): void;
  left(): void;
  right(): void;
  /** Emacs C-k: kill to the end of the line, or the newline when already there. */
  killToEnd(): void;
  /** C-u: kill from the line start to the cursor. */
  killLine(): void;
  /** The text to submit: placeholders expanded, trailing whitespace dropped. */
  text(): string;
  clear(): void;
}

/** An empty composer draft. */
export function createDraft(): Draft {
  return new ComposerDraft();
}

class ComposerDraft implements Draft {
  #shown = "";
  #cursor = 0;
  #pasteCount = 0;
  readonly #pastes = new Map<string, string>();

  get shown(): string {
    return this.#shown;
  }

  get cursor(): number {
    return this.#cursor;
  }

  insert(text: string): void {
    this.#shown = this.#shown.slice(0, this.#cursor) + text + this.#shown.slice(this.#cursor);
    this.#cursor += text.length;
  }

  paste(text: string): void {
    const lines = text.replace(/\n$/, "").split("\n").length;
    if (lines < PASTE_COLLAPSE_LINES) {
      this.insert(text);
      return;
    }
    this.#pasteCount += 1;
    const placeholder = `[Pasted text #${this.#pasteCount} +${lines} lines]`;
    this.#pastes.set(placeholder, text);
    this.insert(placeholder);
  }

  backspace(): void {
    if (this.#cursor === 0) return;
    this.#shown = this.#shown.slice(0, this.#cursor - 1) + this.#shown.slice(this.#cursor);
    this.#cursor -= 1;
  }

  lineStart(): void {
    this.#cursor = this.#shown.lastIndexOf("\n", this.#cursor - 1) + 1;
  }

  lineEnd(): void {
    const end = this.#shown.indexOf("\n", this.#cursor);
    this.#cursor = end < 0 ? this.#shown.length : end;
  }

  left(): void {
    this.#cursor = Math.max(0, this.#cursor - 1);
  }

  right(): void {
    this.#cursor = Math.min(this.#shown.length, this.#cursor + 1);
  }

  killToEnd(): void {
    const newline = this.#shown.indexOf("\n", this.#cursor);
    let end = newline < 0 ? this.#shown.length : newline;
    if (end === this.#cursor && newline >= 0) end += 1;
    this.#shown = this.#shown.slice(0, this.#cursor) + this.#shown.slice(end);
  }

  killLine(): void {
    const start = this.#shown.lastIndexOf("\n", this.#cursor - 1) + 1;
    this.#shown = this.#shown.slice(0, start) + this.#shown.slice(this.#cursor);
    this.#cursor = start;
  }

  text(): string {
    let out = this.#shown;
    for (const [placeholder, full] of this.#pastes) {
      out = out.split(placeholder).join(full);
    }
    return out.trimEnd();
  }

  clear(): void {
    this.#shown = "";
    this.#cursor = 0;
    this.#pastes.clear();
  }
}
