/**
 * Our tmux driver: each operation is one tmux command run with an argv
 * (never a shell) and a deadline, on a chosen server (`-L`, `-S` or the
 * default). Text reaches a pane only through `load-buffer -` on stdin and
 * `paste-buffer -p`, never as a command-line argument: tmux's own parser
 * and argument size limit (about 16 KB) never see it.
 *
 * tmux 3.3 quirks this file absorbs: `display-message -p -t <missing>`
 * exits 0 with empty output, and `send-keys` to a dead pane exits 0 and
 * drops the keys, so liveness is checked through `#{pane_dead}` first.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { AgyBridgeError, TmuxError } from "../errors.js";
import { deliverTurnToPane, type TurnClock, type TurnPane } from "./deliver-turn.js";
import type { ChosenKey } from "./key-table.js";
import { readScreen } from "./screen-model.js";
import type { ScreenModel } from "./screen-types.js";
import { answerOnScreen, closeAnsweredPrompt, type PromptPane } from "./tui-prompt.js";
import { spawnTmux, type TmuxExec } from "./spawn-tmux.js";
import { paneTarget, socketArgs } from "./target.js";
import type {
  ClosePromptOptions,
  ClosePromptResult,
  DeliverTurnOptions,
  PromptActionOptions,
  TmuxSocket,
  TuiAnswerResult,
  TuiChoice,
  TurnDeliveryResult,
} from "./types.js";

export interface TmuxDriverOptions {
  /** `{ name }` → `-L name`, `{ path }` → `-S path`, undefined → tmux's default server. */
  socket?: TmuxSocket;
  /** The tmux executable (default `tmux`, looked up on PATH). */
  tmuxBinary?: string;
  /** Runs one tmux command; default {@link spawnTmux}. */
  exec?: TmuxExec;
  /** Deadline of each tmux command (default 5 000 ms, as agy's reference driver uses). */
  timeoutMs?: number;
  /** Clock for delivery's polling; default the real one. */
  clock?: TurnClock;
}

export interface PaneInfo {
  /** `%N` */
  paneId: string;
  /** The pane's process (agy, or its shell). */
  pid: number;
  /** The pane's program exited and tmux keeps the pane (remain-on-exit). */
  dead: boolean;
}

export interface CommandOptions {
  signal?: AbortSignal | undefined;
}

export interface TmuxDriver {
  readonly socket: TmuxSocket;
  /** Runs `tmux <socket flags> args…`; returns stdout, throws a `TmuxError` on a non-zero exit. */
  run(args: readonly string[], options?: CommandOptions & { stdin?: string }): Promise<string>;
  /** The pane behind `target`; throws `TmuxError` "no_target" when there is none. */
  paneInfo(target: string, options?: CommandOptions): Promise<PaneInfo>;
  /** `display-message -p -t T '#{pane_pid}'`: the pid of the pane's process. */
  panePid(target: string, options?: CommandOptions): Promise<number>;
  /** `capture-pane -p -J`: the visible screen as text, wrapped lines joined. */
  capturePane(target: string, options?: CommandOptions): Promise<string>;
  /** `capture-pane` then {@link readScreen}: what the pane shows now, as the screen model. */
  readPane(target: string, options?: CommandOptions): Promise<ScreenModel>;
  /**
   * One `send-keys` call with tmux key names (no `-l`), after checking the
   * pane is alive. A raw tool for callers of the library: agy-bridge's own
   * key presses into agy go through `deliverTurn`, `closePrompt` and
   * `answerPrompt`, which choose every key from the key table.
   */
  sendKeys(target: string, keys: readonly string[], options?: CommandOptions): Promise<void>;
  /** Pastes exactly `text` as one bracketed paste through a uniquely named buffer. */
  pasteText(target: string, text: string, options?: CommandOptions): Promise<void>;
  /** Types a user turn and reports whether it started (see `deliverTurnToPane`). */
  deliverTurn(target: string, text: string, options?: DeliverTurnOptions): Promise<TurnDeliveryResult>;
  /**
   * Closes the dialog agy may keep open after an RPC answer (spike-notes
   * §5.4, K7): waits (bounded) for agy to close it, then presses only a key
   * the key table marks safe for a settled step on `options.agyVersion` —
   * Escape on 1.0.x, the answer's own digit on 1.2.x; else leaves it
   * (`left_open`) with the reason.
   */
  closePrompt(target: string, options?: ClosePromptOptions): Promise<ClosePromptResult>;
  /**
   * Answers the dialog on screen in the TUI itself with the keys the key
   * table gives `options.agyVersion`: the option's digit alone where a digit
   * answers at once, else the pointer moved one Up/Down at a time and re-read
   * after each key, Enter only on the intended row; a decline is the "No"
   * row found by its label.
   */
  answerPrompt(target: string, choice: TuiChoice, options?: PromptActionOptions): Promise<TuiAnswerResult>;
}

/** A driver for one tmux server. Nothing runs until a method is called. */
export function createTmuxDriver(options: TmuxDriverOptions = {}): TmuxDriver {
  return new SpawnTmuxDriver(options);
}

const DEFAULT_TIMEOUT_MS = 5_000;
const REAL_CLOCK: TurnClock = {
  now: () => Date.now(),
  sleep: (ms, signal) => sleep(ms, undefined, signal === undefined ? undefined : { signal }),
};

class SpawnTmuxDriver implements TmuxDriver {
  readonly socket: TmuxSocket;
  readonly #binary: string;
  readonly #exec: TmuxExec;
  readonly #timeoutMs: number;
  readonly #clock: TurnClock;
  readonly #flags: string[];

  constructor(options: TmuxDriverOptions) {
    this.socket = options.socket;
    this.#flags = socketArgs(options.socket);
    this.#binary = options.tmuxBinary ?? "tmux";
    this.#exec = options.exec ?? spawnTmux;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#clock = options.clock ?? REAL_CLOCK;
  }

  async run(args: readonly string[], options: CommandOptions & { stdin?: string } = {}): Promise<string> {
    const execOptions = { timeoutMs: this.#timeoutMs, ...options };
    const result = await this.#exec(this.#binary, [...this.#flags, ...args], execOptions).catch((error: unknown) => {
      if (error instanceof TmuxError && error.failure === "timeout") {
        throw new TmuxError(
          "timeout",
          `tmux ${args[0] ?? ""} did not finish within ${this.#timeoutMs} ms on ${this.#where()}; check that the server is responsive.`,
          { cause: error },
        );
      }
      throw error;
    });
    if (result.code === 0) return result.stdout;
    throw this.#failure(args, result.stderr);
  }

  async paneInfo(target: string, options: CommandOptions = {}): Promise<PaneInfo> {
    const t = paneTarget(target);
    const out = await this.run(["display-message", "-p", "-t", t, "#{pane_id} #{pane_pid} #{pane_dead}"], options);
    const match = /^(%[0-9]+) ([0-9]+) ([01])$/.exec(out.trim());
    if (match === null) throw noTarget(target, this.#where());
    return { paneId: match[1] as string, pid: Number(match[2]), dead: match[3] === "1" };
  }

  async panePid(target: string, options: CommandOptions = {}): Promise<number> {
    return (await this.paneInfo(target, options)).pid;
  }

  async capturePane(target: string, options: CommandOptions = {}): Promise<string> {
    return this.run(["capture-pane", "-p", "-J", "-t", paneTarget(target)], options);
  }

  async readPane(target: string, options: CommandOptions = {}): Promise<ScreenModel> {
    return readScreen(await this.capturePane(target, options));
  }

  async sendKeys(target: string, keys: readonly string[], options: CommandOptions = {}): Promise<void> {
    if (keys.length === 0) throw new AgyBridgeError("invalid_argument", "send-keys needs at least one key name.");
    await this.#assertAlive(target, options.signal);
    await this.run(["send-keys", "-t", paneTarget(target), ...keys], options);
  }

  async pasteText(target: string, text: string, options: CommandOptions = {}): Promise<void> {
    const t = paneTarget(target);
    if (text === "") throw new AgyBridgeError("invalid_argument", "There is no text to paste.");
    // A unique name: two deliveries at once (or a person's own buffers) never paste each other's text.
    const buffer = `agyb-${randomUUID()}`;
    await this.run(["load-buffer", "-b", buffer, "-"], { ...options, stdin: text });
    try {
      // -p bracketed paste (newlines stay data), -r keep LF as LF, -d delete the buffer afterwards.
      await this.run(["paste-buffer", "-p", "-r", "-d", "-b", buffer, "-t", t], options);
    } catch (error) {
      await this.run(["delete-buffer", "-b", buffer]).catch(() => undefined);
      throw error;
    }
  }

  async deliverTurn(target: string, text: string, options: DeliverTurnOptions = {}): Promise<TurnDeliveryResult> {
    paneTarget(target);
    const pane: TurnPane = {
      capture: (signal) => this.capturePane(target, { signal }),
      assertAlive: (signal) => this.#assertAlive(target, signal),
      sendKeys: (keys, signal) => this.run(["send-keys", "-t", paneTarget(target), ...keyNames(keys)], { signal }).then(() => undefined),
      paste: (payload, signal) => this.pasteText(target, payload, { signal }),
    };
    return deliverTurnToPane(pane, text, options, this.#clock);
  }

  async closePrompt(target: string, options: ClosePromptOptions = {}): Promise<ClosePromptResult> {
    return closeAnsweredPrompt(this.#promptPane(target), options, this.#clock);
  }

  async answerPrompt(target: string, choice: TuiChoice, options: PromptActionOptions = {}): Promise<TuiAnswerResult> {
    return answerOnScreen(this.#promptPane(target), choice, options, this.#clock);
  }

  #promptPane(target: string): PromptPane {
    paneTarget(target);
    return {
      read: (signal) => this.readPane(target, { signal }),
      sendKeys: (keys, signal) => this.sendKeys(target, keyNames(keys), { signal }),
    };
  }

  async #assertAlive(target: string, signal?: AbortSignal): Promise<void> {
    const info = await this.paneInfo(target, { signal });
    if (info.dead) {
      throw new TmuxError("pane_dead", `The program in tmux pane ${target} (${info.paneId}) has exited; restart agy there or pick another pane.`);
    }
  }

  #where(): string {
    const s = this.socket;
    if (s === undefined) return "the default tmux server";
    return "name" in s ? `tmux server -L ${s.name}` : `tmux server -S ${s.path}`;
  }

  #failure(args: readonly string[], stderr: string): TmuxError {
    const said = stderr.trim().split("\n")[0] ?? "";
    const target = args[args.indexOf("-t") + 1];
    if (/no server running|error connecting to|server exited unexpectedly|no such file or directory/i.test(said)) {
      return new TmuxError("no_server", `No tmux server is running on ${this.#where()}; start agy in tmux there, or choose the socket with -L or -S.`);
    }
    if (/can't find (pane|session|window)|no such (window|session|pane)/i.test(said) && target !== undefined) {
      return noTarget(target.replace(/:$/, ""), this.#where());
    }
    return new TmuxError("failed", `tmux ${args[0] ?? ""} failed: ${said || "no message"}; check the pane and the tmux server.`);
  }
}

/** The tmux names of keys the key table chose. */
function keyNames(keys: readonly ChosenKey[]): string[] {
  return keys.map((k) => k.key);
}

function noTarget(target: string, where: string): TmuxError {
  return new TmuxError("no_target", `There is no tmux pane ${target} on ${where}; list panes with \`tmux list-panes -a\` and pass its %id or =session.`);
}
