/**
 * Turns the bytes a terminal (or tmux) writes into key events for the fake
 * TUI. Bracketed paste (`ESC[200~ … ESC[201~`) arrives as one `paste` event
 * whatever the chunking; inside it CR, LF and CRLF are newlines of the draft,
 * never a submit (agy 1.0.x behaviour relied on by tmux drivers, spike-notes §6.2).
 */

export type TuiKey =
  | { type: "text"; text: string }
  | { type: "paste"; text: string }
  | {
      type:
        | "enter"
        | "escape"
        | "backspace"
        | "line-start"
        | "line-end"
        | "kill-to-end"
        | "kill-line"
        | "interrupt"
        | "eof"
        | "up"
        | "down"
        | "left"
        | "right"
        | "shift-tab"
        /** agy 1.2.x: LF (C-j) or M-Enter, which insert a newline (only with `newlines`). */
        | "newline";
    };

export interface KeyParser {
  /** Feeds one chunk of decoded input; returns the complete keys it holds. */
  push(chunk: string): TuiKey[];
  /** True while an ESC at the end of the input may still start a sequence. */
  readonly waiting: boolean;
  /**
   * Gives up waiting: a held ESC becomes Escape (and any unfinished sequence
   * its plain characters). Call it after a short quiet period, as terminals do.
   */
  flush(): TuiKey[];
}

const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";

const CONTROL_KEYS: Record<string, TuiKey> = {
  "\r": { type: "enter" },
  "\n": { type: "enter" },
  "\x01": { type: "line-start" },
  "\x05": { type: "line-end" },
  "\x0b": { type: "kill-to-end" },
  "\x15": { type: "kill-line" },
  "\x7f": { type: "backspace" },
  "\x08": { type: "backspace" },
  "\x03": { type: "interrupt" },
  "\x04": { type: "eof" },
};

const CSI_KEYS: Record<string, TuiKey> = {
  A: { type: "up" },
  B: { type: "down" },
  C: { type: "right" },
  D: { type: "left" },
  // shift+tab (back-tab): cycles agy's permission modes.
  Z: { type: "shift-tab" },
};

export interface KeyParserOptions {
  /**
   * agy 1.2.x (spike-notes K15): a lone LF (C-j) and M-Enter (ESC CR)
   * are `newline` keys, which insert a line break; only CR (and CRLF) is
   * Enter. Default false: LF is Enter and M-Enter is Escape then Enter, as the
   * simulator of older agy always read them.
   */
  newlines?: boolean;
}

/** A parser that keeps state across chunks (an unfinished paste or escape sequence). */
export function createKeyParser(options: KeyParserOptions = {}): KeyParser {
  return new StatefulKeyParser(options.newlines === true);
}

class StatefulKeyParser implements KeyParser {
  #pending = "";
  #paste: string | undefined;
  readonly #newlines: boolean;

  constructor(newlines: boolean) {
    this.#newlines = newlines;
  }

  get waiting(): boolean {
    return this.#pending !== "";
  }

  flush(): TuiKey[] {
    const held = this.#pending;
    this.#pending = "";
    if (held === "") return [];
    const keys: TuiKey[] = [{ type: "escape" }];
    if (held.length > 1) keys.push({ type: "text", text: held.slice(1) });
    return keys;
  }

  push(chunk: string): TuiKey[] {
    const keys: TuiKey[] = [];
    let rest = this.#pending + chunk;
    this.#pending = "";
    while (rest.length > 0) {
      if (this.#paste !== undefined) {
        this.#paste += rest;
        rest = "";
        const end = this.#paste.indexOf(PASTE_END);
        if (end < 0) break;
        rest = this.#paste.slice(end + PASTE_END.length);
        keys.push({ type: "paste", text: normalizeNewlines(this.#paste.slice(0, end)) });
        this.#paste = undefined;
        continue;
      }
      const consumed = this.#one(rest, keys);
      if (consumed === 0) {
        // An escape sequence cut by the chunk boundary: wait for the rest.
        this.#pending = rest;
        break;
      }
      rest = rest.slice(consumed);
    }
    return keys;
  }

  /** Parses one key at the start of `s`; returns how many chars it used (0 = incomplete). */
  #one(s: string, keys: TuiKey[]): number {
    const ch = s[0] as string;
    if (ch === "\x1b") return this.#escape(s, keys);
    if (ch === "\n" && this.#newlines) {
      keys.push({ type: "newline" });
      return 1;
    }
    const control = CONTROL_KEYS[ch];
    if (control !== undefined) {
      // CRLF is one Enter.
      const length = ch === "\r" && s[1] === "\n" ? 2 : 1;
      keys.push(control);
      return length;
    }
    if (ch < " " && ch !== "\t") return 1; // other control bytes are ignored
    let end = 1;
    while (end < s.length && !isSpecial(s[end] as string)) end++;
    const text = s.slice(0, end);
    const last = keys[keys.length - 1];
    if (last?.type === "text") last.text += text;
    else keys.push({ type: "text", text });
    return end;
  }

  #escape(s: string, keys: TuiKey[]): number {
    if (s.startsWith(PASTE_START)) {
      this.#paste = "";
      return PASTE_START.length;
    }
    // A lone ESC is either `send-keys Escape` or the start of a split
    // sequence (a paste marker); the caller decides with flush() after a pause.
    if (s.length === 1) return 0;
    const second = s[1];
    if (second === "[") {
      const match = /^\x1b\[[0-9;]*([@-~])/.exec(s);
      if (match === null) {
        if (/^\x1b\[[0-9;]*$/.test(s)) return 0;
        keys.push({ type: "escape" });
        return 1;
      }
      const key = CSI_KEYS[match[1] as string];
      if (key !== undefined) keys.push(key);
      return match[0].length;
    }
    if (second === "O" && s.length >= 3) {
      const key = CSI_KEYS[s[2] as string];
      if (key !== undefined) keys.push(key);
      return 3;
    }
    if (this.#newlines && (second === "\r" || second === "\n")) {
      // M-Enter: a newline, not Escape then Enter (spike-notes K15).
      keys.push({ type: "newline" });
      return s[1] === "\r" && s[2] === "\n" ? 3 : 2;
    }
    // ESC followed by an ordinary key: Escape, then that key.
    keys.push({ type: "escape" });
    return 1;
  }
}

function isSpecial(ch: string): boolean {
  return ch === "\x1b" || (ch < " " && ch !== "\t") || ch === "\x7f";
}

function normalizeNewlines(text: string): string {
  return text.replace(/\r\n?/g, "\n");
}
