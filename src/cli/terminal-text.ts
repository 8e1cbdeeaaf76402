/**
 * The CLI's one door to a person's terminal. Text from agy's side — the
 * conversation, tool output, a server's error message, a process's path —
 * may hold control sequences a terminal would act on: ESC starts CSI (move
 * the cursor, hide text) and OSC (0 sets the window title, 8 makes links,
 * 52 writes the clipboard), C1 bytes U+0080–U+009F are the same controls in
 * one character, BEL and BS ring and erase, CR overwrites a line, and bidi
 * overrides reorder what is shown. Every human line the CLI prints passes
 * through {@link terminalText}, which shows each such character as visible
 * text (`\x1b`, `\x9b`, `\u202e`) so nothing reaches the terminal raw.
 * Machine output (`--json`) never passes through it: it stays exact.
 *
 * Two layers use it: each command makes agy's text safe where it composes a
 * human line (so a line's shape is ours), and `main` hands every command a
 * stderr ({@link safeStderr}) that passes each write through it once more —
 * so an error message no command thought about is still safe.
 */

export interface TerminalTextOptions {
  /** Keep line feeds (multi-line output such as a streamed answer); otherwise they show as `\n`. */
  keepNewlines?: boolean;
}

// C0 but tab and line feed, DEL, C1; line/paragraph separators; bidi embeddings, overrides and isolates.
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;

/** `text` with every control character shown as an escape a person can read. */
export function terminalText(text: string, options: TerminalTextOptions = {}): string {
  return text.replace(CONTROL, (char) => {
    if (char === "\n") return options.keepNewlines === true ? "\n" : "\\n";
    const code = char.codePointAt(0) as number;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/** The colours `watch` gives its lines on a terminal (SGR sequences). */
export const TERMINAL_STYLE = {
  user: "\x1b[1;36m",
  assistant: "\x1b[0m",
  tool: "\x1b[2m",
  gate: "\x1b[1;33m",
  resolved: "\x1b[32m",
  status: "\x1b[35m",
  failure: "\x1b[31m",
  reset: "\x1b[0m",
} as const;

/** `watch`'s spinner: back to the line's start and clear it, or redraw it dimmed. */
export const LINE_REDRAW = { clear: "\r\x1b[K", dim: "\r\x1b[2m" } as const;

/**
 * The only escape sequences the CLI itself writes to stderr: the styles and
 * redraws above. They pass the stderr filter as they are; agy's text never
 * carries them raw, because it was made safe where the line was composed.
 */
const OWN_SEQUENCE = new RegExp(
  [...Object.values(LINE_REDRAW), ...new Set(Object.values(TERMINAL_STYLE))].map((seq) => seq.replace(/[[\]\\^$.|?*+()]/g, "\\$&")).join("|"),
  "gu",
);

/** `text` safe for a terminal, but for the CLI's own colour and redraw sequences. */
export function stderrText(text: string): string {
  let out = "";
  let last = 0;
  for (const match of text.matchAll(OWN_SEQUENCE)) {
    out += terminalText(text.slice(last, match.index), { keepNewlines: true }) + match[0];
    last = match.index + match[0].length;
  }
  return out + terminalText(text.slice(last), { keepNewlines: true });
}

/**
 * `stream` with every write made safe by {@link stderrText}; everything else
 * (`isTTY`, events, its fd for a child's stdio) is the stream's own.
 */
export function safeStderr<T extends NodeJS.WritableStream>(stream: T): T {
  return new Proxy(stream, {
    get(target, property) {
      if (property === "write") {
        return (chunk: unknown, ...rest: unknown[]) =>
          (target.write as (...args: unknown[]) => boolean).call(
            target,
            typeof chunk === "string" ? stderrText(chunk) : chunk instanceof Uint8Array ? stderrText(Buffer.from(chunk).toString("utf8")) : chunk,
            ...rest,
          );
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
