/**
 * The fake agy TUI: renders a {@link SimTuiPort}'s view in a terminal the
 * way agy draws it and turns keys into port calls, so tmux-driving code that
 * works against it works against agy (spike-notes §5.4, §6, §13).
 */
import { StringDecoder } from "node:string_decoder";
import type { SimTuiPort, TuiAnswer, TuiPending } from "./tui-port.js";
import { createDraft } from "./draft.js";
import { editDraft } from "./draft-keys.js";
import { createKeyParser, type TuiKey } from "./key-parser.js";
import { createModelPicker, type ModelPicker } from "./model-picker.js";
import { createTuiPrompt, promptKeysOf, type TuiPrompt } from "./prompt.js";
import { renderScreen, type TuiNote, type TuiOverlay } from "./render.js";
import { createSlashPopup, isSlashDraft, SLASH_COMMANDS } from "./slash-popup.js";
import { modelLabel } from "./status-row.js";
import { TUI_MODES, type TuiDigits, type TuiMode, type TuiVersion } from "./tui-options.js";
import { createTrustScreen, type TrustScreen } from "./trust-screen.js";

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
  /** Which agy's screen to draw; default `1.1`. */
  version?: TuiVersion;
  /** Whether arrow menus take typed digits; default `ignore`, as on current agy. */
  digits?: TuiDigits;
  /** Start on agy's folder-trust screen for this path (shown as given, e.g. `~/project`). */
  trustPath?: string;
}

export interface FakeTui {
  /** Switches the terminal to raw mode with bracketed paste, draws, and starts reading keys. */
  start(): void;
  /** Restores the terminal and stops reading. Idempotent. */
  stop(): void;
  /** Settles after {@link stop}, or when the user quits (C-c on an empty draft, C-d, `No, exit`, `/quit`). */
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
const DECLINED_NOTE = "  ⎿  User declined the tool call";
const DISMISSED_NOTE = "  ⎿  User dismissed the question";

class TerminalTui implements FakeTui {
  readonly #options: FakeTuiOptions;
  readonly #version: TuiVersion;
  readonly #digits: TuiDigits;
  readonly #parser = createKeyParser();
  readonly #decoder = new StringDecoder("utf8");
  readonly #draft = createDraft();
  readonly #popup = createSlashPopup();
  readonly #notes: TuiNote[] = [];
  /** Steps whose prompt was already opened (or answered), so it never reopens. */
  readonly #seen = new Set<string>();
  #prompt: TuiPrompt | undefined;
  #trust: TrustScreen | undefined;
  #picker: ModelPicker | undefined;
  #mode: TuiMode = "default";
  /** Escape closed the popup for this draft; it shows again once the draft changes. */
  #popupClosedFor: string | undefined;
  #lastKey: TuiKey["type"] | undefined;
  #screen: string[] = [];
  #unsubscribe: (() => void) | undefined;
  #escTimer: NodeJS.Timeout | undefined;
  #started = false;
  #stopped = false;
  #resolveClosed!: () => void;
  readonly closed: Promise<void>;

  constructor(options: FakeTuiOptions) {
    this.#options = options;
    this.#version = options.version ?? "1.1";
    this.#digits = options.digits ?? "ignore";
    if (options.trustPath !== undefined) this.#trust = createTrustScreen(options.trustPath);
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
      this.#lastKey = key.type;
    }
    this.#refresh();
  }

  readonly #redraw = (): void => this.#draw();

  #handle(key: TuiKey): void {
    if (key.type === "interrupt" || key.type === "eof") return this.#quitKey(key.type);
    if (this.#trust !== undefined) return this.#trustKey(this.#trust, key);
    if (this.#prompt !== undefined) return this.#promptKey(this.#prompt, key);
    if (this.#picker !== undefined) return this.#pickerKey(this.#picker, key);
    if (key.type === "shift-tab") {
      this.#mode = TUI_MODES[(TUI_MODES.indexOf(this.#mode) + 1) % TUI_MODES.length] ?? "default";
      return;
    }
    if (this.#popupOpen() && this.#popupKey(key)) return;
    this.#composerKey(key);
  }

  #quitKey(type: "interrupt" | "eof"): void {
    if (this.#prompt === undefined && this.#trust === undefined && this.#picker === undefined && this.#draft.shown !== "") {
      if (type === "interrupt") this.#draft.clear();
      return;
    }
    this.stop();
  }

  #composerKey(key: TuiKey): void {
    if (editDraft(this.#draft, key)) return;
    if (key.type === "enter") {
      this.#submit();
    } else if (key.type === "escape") {
      if (this.#options.port.view().running) this.#options.port.cancel();
      // Double Esc clears the input (agy, 2026-07).
      else if (this.#lastKey === "escape") this.#draft.clear();
    }
  }

  /** A dialog holds the keyboard: it takes arrows, Enter and Escape; typed text is dropped. */
  #promptKey(prompt: TuiPrompt, key: TuiKey): void {
    let outcome;
    for (const promptKey of promptKeysOf(key)) outcome = prompt.key(promptKey);
    if (outcome?.done === true) this.#closePrompt(prompt.pending, outcome.answer);
  }

  #closePrompt(pending: TuiPending, answer: TuiAnswer): void {
    this.#prompt = undefined;
    const delivered = this.#options.port.answer(pending.stepIndex, answer);
    if (!delivered) {
      // A dialog whose step was already settled (answered over RPC) closes as declined, as agy does (spike-notes §5.4).
      this.#note([pending.kind === "permission" ? DECLINED_NOTE : DISMISSED_NOTE]);
    }
  }

  #trustKey(trust: TrustScreen, key: TuiKey): void {
    if (key.type === "up" || key.type === "down") trust.move(key.type === "up" ? -1 : 1);
    if (key.type !== "enter") return;
    if (!trust.trusted()) return this.stop();
    this.#trust = undefined;
  }

  #pickerKey(picker: ModelPicker, key: TuiKey): void {
    if (key.type === "up" || key.type === "down" || key.type === "left" || key.type === "right") picker.key(key.type);
    if (key.type === "escape") {
      this.#picker = undefined;
      this.#note(["> /model", "  ⎿  Exited /model command"]);
    } else if (key.type === "enter") {
      this.#picker = undefined;
      const chosen = picker.selected();
      const port = this.#options.port;
      if (chosen !== undefined && port.setModel !== undefined) {
        port.setModel(chosen);
        this.#note(["> /model", `  ⎿  Set model to ${modelLabel(chosen, this.#version)}`]);
      } else {
        this.#note(["> /model", "  ⎿  The simulator has no model for that effort; the model is unchanged"]);
      }
    }
  }

  #popupOpen(): boolean {
    const typed = this.#draft.shown.trimEnd();
    if (!isSlashDraft(typed) || typed === this.#popupClosedFor) return false;
    this.#popup.filter(typed);
    return this.#popup.matches.length > 0;
  }

  /** Keys the slash popup takes; the rest edit the draft. */
  #popupKey(key: TuiKey): boolean {
    switch (key.type) {
      case "up":
      case "down":
        this.#popup.move(key.type === "up" ? -1 : 1);
        return true;
      case "escape":
        this.#popupClosedFor = this.#draft.shown.trimEnd();
        return true;
      case "enter": {
        const command = this.#popup.highlighted();
        this.#draft.clear();
        if (command !== undefined) this.#runSlash(command);
        return true;
      }
      case "text":
        if (key.text !== "\t") return false;
        this.#draft.clear();
        this.#draft.insert(this.#popup.highlighted() ?? "");
        return true;
      default:
        return false;
    }
  }

  #submit(): void {
    const text = this.#draft.text();
    this.#draft.clear();
    if (text.trim() === "") return;
    const command = SLASH_COMMANDS.find((c) => c.name === text.trim());
    if (command !== undefined) return this.#runSlash(command.name);
    this.#options.port.submitTurn(text);
  }

  #runSlash(command: string): void {
    const port = this.#options.port;
    switch (command) {
      case "/clear":
        this.#notes.length = 0;
        port.clear();
        return;
      case "/model":
        this.#picker = createModelPicker(port.view().model);
        return;
      case "/quit":
        this.stop();
        return;
      case "/help":
        this.#note(["> /help", `  ⎿  Commands: ${SLASH_COMMANDS.map((c) => c.name).join(" ")} · shift+tab cycles modes`]);
        return;
      default:
        this.#note([`> ${command}`, `  ⎿  ${command} is not available in the simulator`]);
    }
  }

  #note(lines: string[]): void {
    this.#notes.push({ after: this.#options.port.view().transcript.length, lines });
  }

  /** Opens a dialog for a newly WAITING step (one at a time, never over the trust screen), then draws. */
  #refresh(): void {
    if (this.#stopped) return;
    const pending = this.#options.port.view().pending;
    if (this.#prompt === undefined && this.#trust === undefined && pending !== undefined) {
      const key = `${pending.trajectoryId}#${pending.stepIndex}`;
      if (!this.#seen.has(key)) {
        this.#seen.add(key);
        this.#picker = undefined;
        this.#prompt = createTuiPrompt(pending, { digits: this.#digits, version: this.#version });
      }
    }
    this.#draw();
  }

  #overlay(columns: number): TuiOverlay | undefined {
    if (this.#trust !== undefined) return { kind: "trust", lines: this.#trust.lines(columns) };
    if (this.#prompt !== undefined) return { kind: "dialog", lines: this.#prompt.lines(columns) };
    if (this.#picker !== undefined) return { kind: "picker", lines: this.#picker.lines(columns) };
    if (this.#popupOpen()) return { kind: "popup", lines: this.#popup.lines(columns) };
    return undefined;
  }

  #draw(): void {
    if (this.#stopped) return;
    const out = this.#options.output as NodeJS.WritableStream & MaybeTtyOut;
    const view = this.#options.port.view();
    const columns = Math.max(20, this.#options.columns ?? out.columns ?? 80);
    // A dialog or the picker hides the draft: agy draws no input box then, or an empty one.
    const hidden = this.#prompt !== undefined || this.#picker !== undefined;
    this.#screen = renderScreen({
      columns,
      rows: this.#options.rows ?? out.rows ?? 24,
      banner: this.#options.banner ?? [],
      transcript: view.transcript,
      notes: this.#notes,
      overlay: this.#overlay(columns),
      draft: hidden ? "" : this.#draft.shown,
      running: view.running,
      model: view.model,
      mode: this.#mode,
      version: this.#version,
    });
    this.#write(`\x1b[H${this.#screen.map((line) => `${line}\x1b[K`).join("\r\n")}\x1b[J`);
  }

  #write(text: string): void {
    this.#options.output.write(text);
  }
}
