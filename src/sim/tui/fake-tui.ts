/**
 * The fake agy TUI: renders a {@link SimTuiPort}'s view in a terminal and
 * turns keys into port calls, so tmux-driving code that works against it
 * works against agy (spike-notes §5.4, §5.6, §6).
 */
import { StringDecoder } from "node:string_decoder";
import type { SimTuiPort, TuiAnswer, TuiPending } from "./tui-port.js";
import { createDraft } from "./draft.js";
import { createKeyParser, type TuiKey } from "./key-parser.js";
import { createTuiPrompt, type TuiPrompt } from "./prompt.js";
import { renderScreen, type TuiNote } from "./render.js";

/** What an input stream may offer when it is a terminal. */
interface MaybeTty {
  isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
}

/** What an output stream may offer when it is a terminal. */
interface MaybeTtyOut {
  columns?: number;
  rows?: number;
  on?(event: "resize", listener: () => void): unknown;
  off?(event: "resize", listener: () => void): unknown;
}

export interface FakeTuiOptions {
  port: SimTuiPort;
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** Screen size; default: the output terminal's size, else 80×24. */
  columns?: number;
  rows?: number;
  /** Lines shown above the transcript (e.g. the server URLs; never secrets). */
  banner?: readonly string[];
}

export interface FakeTui {
  /** Switches the terminal to raw mode with bracketed paste, draws, and starts reading keys. */
  start(): void;
  /** Restores the terminal and stops reading. Idempotent. */
  stop(): void;
  /** Settles after {@link stop}, or when the user quits (C-c on an empty draft, C-d). */
  readonly closed: Promise<void>;
  /** The last drawn screen as plain lines. */
  screen(): string[];
}

/**
 * A fake agy TUI over `port`. Nothing happens until {@link FakeTui.start};
 * the caller owns the streams (the TUI never closes them).
 */
export function createFakeTui(options: FakeTuiOptions): FakeTui {
  return new TerminalTui(options);
}

/** How long a trailing ESC waits for the rest of a sequence before it counts as Escape. */
const ESCAPE_WAIT_MS = 25;
const DECLINED_NOTE = "User declined the tool call";
const DISMISSED_NOTE = "User dismissed the question";

class TerminalTui implements FakeTui {
  readonly #options: FakeTuiOptions;
  readonly #parser = createKeyParser();
  readonly #decoder = new StringDecoder("utf8");
  readonly #draft = createDraft();
  readonly #notes: TuiNote[] = [];
  /** Steps whose prompt was already opened (or answered), so it never reopens. */
  readonly #seen = new Set<string>();
  #prompt: TuiPrompt | undefined;
  #screen: string[] = [];
  #unsubscribe: (() => void) | undefined;
  #escTimer: NodeJS.Timeout | undefined;
  #started = false;
  #stopped = false;
  #resolveClosed!: () => void;
  readonly closed: Promise<void>;

  constructor(options: FakeTuiOptions) {
    this.#options = options;
    this.closed = new Promise((resolve) => {
      this.#resolveClosed = resolve;
    });
  }

  start(): void {
    if (this.#started) return;
    this.#started = true;
    const input = this.#options.input as NodeJS.ReadableStream & MaybeTty;
    if (input.isTTY === true) input.setRawMode?.(true);
    this.#write("\x1b[?2004h\x1b[?25l");
    this.#unsubscribe = this.#options.port.subscribe(() => this.#refresh());
    input.on("data", this.#onData);
    input.resume();
    (this.#options.output as MaybeTtyOut).on?.("resize", this.#redraw);
    this.#refresh();
  }

  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#unsubscribe?.();
    clearTimeout(this.#escTimer);
    const input = this.#options.input as NodeJS.ReadableStream & MaybeTty;
    input.off("data", this.#onData);
    input.pause();
    (this.#options.output as MaybeTtyOut).off?.("resize", this.#redraw);
    if (this.#started) {
      this.#write("\x1b[?2004l\x1b[?25h\r\n");
      if (input.isTTY === true) input.setRawMode?.(false);
    }
    this.#resolveClosed();
  }

  screen(): string[] {
    return [...this.#screen];
  }

  readonly #onData = (chunk: Buffer | string): void => {
    clearTimeout(this.#escTimer);
    const text = typeof chunk === "string" ? chunk : this.#decoder.write(chunk);
    this.#keys(this.#parser.push(text));
    if (this.#parser.waiting) {
      this.#escTimer = setTimeout(() => this.#keys(this.#parser.flush()), ESCAPE_WAIT_MS);
    }
  };

  #keys(keys: TuiKey[]): void {
    for (const key of keys) {
      if (this.#stopped) return;
      this.#handle(key);
    }
    this.#refresh();
  }

  readonly #redraw = (): void => this.#draw();

  #handle(key: TuiKey): void {
    if (this.#prompt !== undefined && this.#promptKey(this.#prompt, key)) return;
    const draft = this.#draft;
    switch (key.type) {
      case "text":
        draft.insert(key.text);
        return;
      case "paste":
        draft.paste(key.text);
        return;
      case "enter":
        this.#submit();
        return;
      case "escape":
        if (this.#options.port.view().running) this.#options.port.cancel();
        return;
      case "backspace":
        draft.backspace();
        return;
      case "line-start":
        draft.lineStart();
        return;
      case "line-end":
        draft.lineEnd();
        return;
      case "kill-to-end":
        draft.killToEnd();
        return;
      case "kill-line":
        draft.killLine();
        return;
      case "left":
        draft.left();
        return;
      case "right":
        draft.right();
        return;
      case "interrupt":
        if (draft.shown === "") this.stop();
        else draft.clear();
        return;
      case "eof":
        if (draft.shown === "") this.stop();
        return;
      case "up":
      case "down":
        return;
    }
  }

  /** Routes a key to the open prompt; returns false when the prompt does not use it. */
  #promptKey(prompt: TuiPrompt, key: TuiKey): boolean {
    let outcome;
    if (key.type === "text" && /^[0-9]+$/.test(key.text)) {
      // tmux may deliver "2" and "3" of a multi-select in one chunk.
      for (const digit of key.text) outcome = prompt.key({ type: "digit", digit: Number(digit) });
    } else if (key.type === "enter" || key.type === "escape" || key.type === "up" || key.type === "down") {
      outcome = prompt.key({ type: key.type });
    } else {
      return false;
    }
    if (outcome?.done === true) this.#closePrompt(prompt.pending, outcome.answer);
    return true;
  }

  #closePrompt(pending: TuiPending, answer: TuiAnswer): void {
    this.#prompt = undefined;
    const delivered = this.#options.port.answer(pending.stepIndex, answer);
    const declined = answer.kind === "dismiss" || (answer.kind === "permission" && !answer.allow);
    if (!delivered || declined) {
      // agy 1.0.x reports its stale prompt as declined even when RPC already answered it (spike-notes §5.4).
      this.#notes.push({
        after: this.#options.port.view().transcript.length,
        text: pending.kind === "permission" ? DECLINED_NOTE : DISMISSED_NOTE,
      });
    }
  }

  #submit(): void {
    const text = this.#draft.text();
    this.#draft.clear();
    if (text.trim() === "") return;
    if (text.trim() === "/clear") {
      this.#notes.length = 0;
      this.#options.port.clear();
      return;
    }
    this.#options.port.submitTurn(text);
  }

  /** Opens a prompt for a newly WAITING step (one prompt at a time), then draws. */
  #refresh(): void {
    if (this.#stopped) return;
    const pending = this.#options.port.view().pending;
    if (this.#prompt === undefined && pending !== undefined) {
      const key = `${pending.trajectoryId}#${pending.stepIndex}`;
      if (!this.#seen.has(key)) {
        this.#seen.add(key);
        this.#prompt = createTuiPrompt(pending);
      }
    }
    this.#draw();
  }

  #draw(): void {
    if (this.#stopped) return;
    const out = this.#options.output as NodeJS.WritableStream & MaybeTtyOut;
    const view = this.#options.port.view();
    this.#screen = renderScreen({
      columns: this.#options.columns ?? out.columns ?? 80,
      rows: this.#options.rows ?? out.rows ?? 24,
      banner: this.#options.banner ?? [],
      transcript: view.transcript,
      notes: this.#notes,
      prompt: this.#prompt?.lines(),
      draft: this.#draft.shown,
      running: view.running,
    });
    this.#write(`\x1b[H${this.#screen.map((line) => `${line}\x1b[K`).join("\r\n")}\x1b[J`);
  }

  #write(text: string): void {
    this.#options.output.write(text);
  }
}
