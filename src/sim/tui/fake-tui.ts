/**
 * The fake agy TUI: renders a {@link SimTuiPort}'s view in a terminal the
 * way agy draws it and turns keys into port calls, so tmux-driving code that
 * works against it works against agy (spike-notes §5.4, §6, §13).
 */
import { StringDecoder } from "node:string_decoder";
import type { SimTuiPort, TuiPending } from "./tui-port.js";
import { createDraft } from "./draft.js";
import { editDraft } from "./draft-keys.js";
import { createKeyParser, type TuiKey } from "./key-parser.js";
import { createModelPicker, type ModelPicker } from "./model-picker.js";
import { createTuiPrompt, promptKeysOf, type PromptOutcome, type TuiPrompt } from "./prompt.js";
import { renderScreen, type TuiNote, type TuiOverlay } from "./render.js";
import { createSlashPopup, isSlashDraft, SLASH_COMMANDS, SLASH_COMMANDS_12 } from "./slash-popup.js";
import { modelLabel, simModel } from "./status-row.js";
import { isTui12, TUI_MODES, type TuiCommandOptions, type TuiDigits, type TuiMode, type TuiStaleDialog, type TuiVersion } from "./tui-options.js";
import { createEffortPicker, shortcutsOverlayLines, type EffortPicker } from "./overlays-12.js";
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
  /**
   * After an answer over RPC: `stay` (default) keeps the dialog drawn until
   * keys close it (agy 1.0.10, spike-notes §5.4); `close` closes it by itself.
   * Unknown on 1.2.x (spike-notes K7), so both are playable.
   */
  staleDialog?: TuiStaleDialog;
  /** Version 1.2: a command dialog offers 4 options (default, spike-notes §13 #29, K2) or 2 (spike-notes §13 #30, K3). */
  commandOptions?: TuiCommandOptions;
  /** Background tasks shown on the status row as `· N task(s) · /tasks` (spike-notes §13 #26); default 0, none shown. */
  tasks?: number;
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
/** What agy 1.2.x leaves above the composer when Escape interrupted the turn (spike-notes §13 #39, K5). */
export const INTERRUPTED_NOTE = "  ⎿  Interrupted · What should Antigravity CLI do instead?";

class TerminalTui implements FakeTui {
  readonly #options: FakeTuiOptions;
  readonly #version: TuiVersion;
  readonly #digits: TuiDigits;
  readonly #parser: ReturnType<typeof createKeyParser>;
  readonly #decoder = new StringDecoder("utf8");
  readonly #draft = createDraft();
  readonly #popup: ReturnType<typeof createSlashPopup>;
  readonly #commands: typeof SLASH_COMMANDS;
  readonly #staleDialog: TuiStaleDialog;
  readonly #notes: TuiNote[] = [];
  /** Steps whose prompt was already opened (or answered), so it never reopens. */
  readonly #seen = new Set<string>();
  #prompt: TuiPrompt | undefined;
  #trust: TrustScreen | undefined;
  #picker: ModelPicker | undefined;
  /** 1.2: the `/effort` slider. */
  #effort: EffortPicker | undefined;
  /** 1.2: the `?` shortcuts overlay is open. */
  #shortcuts = false;
  /** Escape interrupted the turn: agy's `Interrupted` line shows once the turn has stopped. */
  #interruptNote = false;
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
    this.#staleDialog = options.staleDialog ?? "stay";
    // agy 1.2.x: LF and M-Enter insert a newline; only CR submits (spike-notes K15).
    this.#parser = createKeyParser({ newlines: isTui12(this.#version) });
    this.#commands = isTui12(this.#version) ? SLASH_COMMANDS_12 : SLASH_COMMANDS;
    this.#popup = createSlashPopup(this.#commands);
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
    if (this.#effort !== undefined) return this.#effortKey(this.#effort, key);
    if (this.#shortcuts) {
      if (key.type === "escape") this.#shortcuts = false;
      return;
    }
    if (key.type === "shift-tab") {
      this.#mode = TUI_MODES[(TUI_MODES.indexOf(this.#mode) + 1) % TUI_MODES.length] ?? "default";
      return;
    }
    if (this.#popupOpen() && this.#popupKey(key)) return;
    this.#composerKey(key);
  }

  #quitKey(type: "interrupt" | "eof"): void {
    // agy 1.2.x binds ctrl+c with Escape to "go back / dismiss" (spike-notes K16, K17): at a dialog,
    // the slider or the overlay it is the Escape there (at an approval: the turn is interrupted).
    if (type === "interrupt" && isTui12(this.#version) && this.#trust === undefined) {
      if (this.#prompt !== undefined) return this.#promptKey(this.#prompt, { type: "escape" });
      if (this.#effort !== undefined) return this.#effortKey(this.#effort, { type: "escape" });
      if (this.#shortcuts) {
        this.#shortcuts = false;
        return;
      }
    }
    if (
      this.#prompt === undefined &&
      this.#trust === undefined &&
      this.#picker === undefined &&
      this.#effort === undefined &&
      !this.#shortcuts &&
      this.#draft.shown !== ""
    ) {
      if (type === "interrupt") this.#draft.clear();
      return;
    }
    this.stop();
  }

  #composerKey(key: TuiKey): void {
    if (isTui12(this.#version)) {
      // `?` on an empty composer opens the shortcuts overlay (spike-notes §13 #35).
      if (key.type === "text" && key.text.startsWith("?") && this.#draft.shown === "") {
        this.#shortcuts = true;
        if (key.text.length > 1) this.#composerKey({ type: "text", text: key.text.slice(1) });
        return;
      }
      if (key.type === "newline") {
        this.#draft.insert("\n");
        return;
      }
    }
    if (editDraft(this.#draft, key)) return;
    if (key.type === "enter") {
      this.#submit();
    } else if (key.type === "escape") {
      const view = this.#options.port.view();
      if (view.running) {
        this.#options.port.cancel();
        // 1.2.x leaves its Interrupted line once the turn has stopped (spike-notes §13 #39); a parked gate is not stopped.
        if (isTui12(this.#version) && view.pending === undefined) this.#interruptNote = true;
      }
      // Double Esc clears the input (agy, 2026-07).
      else if (this.#lastKey === "escape") this.#draft.clear();
    }
  }

  /**
   * A dialog holds the keyboard: it takes arrows, Enter and Escape (1.2: and
   * digits, Tab, the amend field's text); other typed text is dropped. When a
   * key closes the dialog, the keys after it reach the next screen — a digit
   * then Enter sends the Enter to the composer or the next dialog (spike-notes K1).
   */
  #promptKey(prompt: TuiPrompt, key: TuiKey): void {
    const chars = key.type === "text" ? Array.from(key.text) : [undefined];
    for (let i = 0; i < chars.length; i += 1) {
      const char = chars[i];
      const keys = promptKeysOf(char === undefined ? key : { type: "text", text: char });
      for (const promptKey of keys) {
        const outcome = prompt.key(promptKey);
        if (!outcome.done) continue;
        this.#closePrompt(prompt.pending, outcome);
        const rest = chars.slice(i + 1).join("");
        if (rest !== "") this.#handle({ type: "text", text: rest });
        return;
      }
    }
  }

  #closePrompt(pending: TuiPending, outcome: Extract<PromptOutcome, { done: true }>): void {
    this.#prompt = undefined;
    if (outcome.interrupt === true) {
      this.#interruptTurn();
      return;
    }
    const port = this.#options.port;
    const delivered = port.answer(pending.stepIndex, outcome.answer);
    if (!delivered) {
      // 1.2: a key on a dialog whose step is already settled only closes it (our modelling, docs/simulator.md).
      if (isTui12(this.#version)) return;
      // A dialog whose step was already settled (answered over RPC) closes as declined, as agy does (spike-notes §5.4).
      this.#note([pending.kind === "permission" ? DECLINED_NOTE : DISMISSED_NOTE]);
      return;
    }
    // The amend field's text is an instruction for after the approval (spike-notes §13 #31, K4): it is queued as the next turn.
    if (outcome.instruction !== undefined) port.submitTurn(outcome.instruction);
  }

  /** agy 1.2.x Escape at an approval: the tool call is cancelled and the turn ends (spike-notes K5). */
  #interruptTurn(): void {
    const port = this.#options.port;
    let stopped: boolean;
    if (port.interruptTurn !== undefined) stopped = port.interruptTurn();
    else {
      stopped = port.view().running;
      port.cancel();
    }
    if (stopped) this.#interruptNote = true;
  }

  #effortKey(picker: EffortPicker, key: TuiKey): void {
    if (key.type === "left" || key.type === "right") picker.key(key.type);
    if (key.type === "escape") {
      this.#effort = undefined;
      this.#note(["> /effort", "  ⎿  Exited /effort command"]);
    } else if (key.type === "enter") {
      this.#effort = undefined;
      const chosen = picker.selected();
      const port = this.#options.port;
      if (chosen !== undefined && port.setModel !== undefined) {
        port.setModel(chosen);
        this.#note(["> /effort", `  ⎿  Set effort to ${simModel(chosen).effort.toLowerCase()}`]);
      } else {
        this.#note(["> /effort", "  ⎿  The simulator has no model for that effort; the effort is unchanged"]);
      }
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
    const command = this.#commands.find((c) => c.name === text.trim());
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
      case "/effort":
        this.#effort = createEffortPicker(port.view().model);
        return;
      case "/quit":
        this.stop();
        return;
      case "/help":
        this.#note(["> /help", `  ⎿  Commands: ${this.#commands.map((c) => c.name).join(" ")} · shift+tab cycles modes`]);
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
    const view = this.#options.port.view();
    const pending = view.pending;
    if (this.#prompt !== undefined && this.#staleDialog === "close") {
      // `--tui-stale-dialog close`: once its step is no longer the one waiting (answered over RPC), the dialog closes by itself.
      const open = this.#prompt.pending;
      if (pending === undefined || pending.trajectoryId !== open.trajectoryId || pending.stepIndex !== open.stepIndex) this.#prompt = undefined;
    }
    if (this.#interruptNote && !view.running) {
      this.#interruptNote = false;
      // A cancelled tool row already carries the line (1.2 draws it under the row); otherwise it stands alone.
      const last = view.transcript[view.transcript.length - 1];
      if (!(last?.role === "tool" && last.text === "Interrupted")) this.#note([INTERRUPTED_NOTE]);
    }
    if (this.#prompt === undefined && this.#trust === undefined && pending !== undefined) {
      const key = `${pending.trajectoryId}#${pending.stepIndex}`;
      if (!this.#seen.has(key)) {
        this.#seen.add(key);
        this.#picker = undefined;
        this.#effort = undefined;
        this.#shortcuts = false;
        this.#prompt = createTuiPrompt(pending, {
          digits: this.#digits,
          version: this.#version,
          ...(this.#options.commandOptions !== undefined ? { commandOptions: this.#options.commandOptions } : {}),
        });
      }
    }
    this.#draw();
  }

  #overlay(columns: number): TuiOverlay | undefined {
    if (this.#trust !== undefined) return { kind: "trust", lines: this.#trust.lines(columns) };
    if (this.#prompt !== undefined) return { kind: "dialog", lines: this.#prompt.lines(columns) };
    if (this.#picker !== undefined) return { kind: "picker", lines: this.#picker.lines(columns) };
    if (this.#effort !== undefined) return { kind: "picker", lines: this.#effort.lines(columns) };
    if (this.#shortcuts) return { kind: "picker", lines: shortcutsOverlayLines() };
    if (this.#popupOpen()) return { kind: "popup", lines: this.#popup.lines(columns) };
    return undefined;
  }

  #draw(): void {
    if (this.#stopped) return;
    const out = this.#options.output as NodeJS.WritableStream & MaybeTtyOut;
    const view = this.#options.port.view();
    const columns = Math.max(20, this.#options.columns ?? out.columns ?? 80);
    // A dialog or the picker hides the draft: agy draws no input box then, or an empty one.
    const hidden = this.#prompt !== undefined || this.#picker !== undefined || this.#effort !== undefined || this.#shortcuts;
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
      tasks: this.#options.tasks ?? 0,
    });
    this.#write(`\x1b[H${this.#screen.map((line) => `${line}\x1b[K`).join("\r\n")}\x1b[J`);
  }

  #write(text: string): void {
    this.#options.output.write(text);
  }
}
