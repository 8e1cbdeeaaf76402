/**
 * Acting on a dialog in agy's TUI without ever answering the wrong way
 * (spike-notes §13): agy's arrow menus may ignore typed digits, and Enter
 * confirms whatever row the `>` is on, so `4 Enter` can approve a deny.
 *
 * - After an answer went over RPC, agy keeps its own dialog open (§5.4):
 *   `closeAnsweredPrompt` presses Escape — only Escape, and only when a
 *   dialog is on screen (an Escape while agy runs would cancel the turn) —
 *   then reads the screen until the dialog has left, bounded.
 * - Answering in the TUI itself, `answerOnScreen` moves the pointer one
 *   Up/Down at a time from where the screen says it is, re-reads after each
 *   key, and presses Enter only once the `>` is on the intended row; a
 *   decline is Escape. When the screen is not what the last key should have
 *   made it, nothing more is pressed and the result is `failed` with that
 *   screen. Digits only where the screen itself advertises them.
 */
import { DIALOG_KINDS, described, promptSignature, targetOption } from "./prompt-keys.js";
import type { ScreenModel, ScreenPrompt, ScreenPromptKind } from "./screen-types.js";
import type { ClosePromptResult, PromptActionOptions, TuiAnswerResult, TuiChoice } from "./types.js";

/** The pane operations the prompt actions need; the driver implements them with tmux commands. */
export interface PromptPane {
  /** `capture-pane` read into the screen model. */
  read(signal?: AbortSignal): Promise<ScreenModel>;
  /** One `send-keys` call with tmux key names, after checking the pane is alive. */
  sendKeys(keys: readonly string[], signal?: AbortSignal): Promise<void>;
}

export interface PromptClock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

const DEFAULT_SETTLE_MS = 3_000;
const DEFAULT_POLL_MS = 50;

/** Closes the dialog agy left open after an RPC answer: Escape, then the screen until it is gone. */
export async function closeAnsweredPrompt(pane: PromptPane, options: PromptActionOptions, clock: PromptClock): Promise<ClosePromptResult> {
  const run = new PromptRun(pane, options, clock);
  try {
    const screen = await run.read();
    const prompt = dialogOn(screen, run.kinds);
    if (prompt === undefined) return { result: "none", reason: `No dialog was open (${screenSummary(screen)}), so no key was pressed.`, keys: [], screen };
    const after = await run.pressUntilGone("Escape", prompt);
    if (after.gone) return { result: "closed", reason: `Escape closed the ${prompt.kind} dialog.`, keys: run.keys, screen: after.screen };
    return {
      result: "still_open",
      reason: `Escape was pressed but the ${prompt.kind} dialog was still open after ${seconds(run.settleMs)} (${screenSummary(after.screen)}); close it in the agy TUI.`,
      keys: run.keys,
      screen: after.screen,
    };
  } catch (error) {
    if (options.signal?.aborted === true) throw error;
    return { result: "failed", reason: `The pane could not be read or keyed: ${(error as Error).message}`, keys: run.keys, ...run.lastScreen() };
  }
}

/** Answers the dialog on screen in the TUI itself (see the file comment). */
export async function answerOnScreen(pane: PromptPane, choice: TuiChoice, options: PromptActionOptions, clock: PromptClock): Promise<TuiAnswerResult> {
  const run = new PromptRun(pane, options, clock);
  const fail = (reason: string, screen?: ScreenModel): TuiAnswerResult => ({ result: "failed", reason, keys: run.keys, ...(screen === undefined ? run.lastScreen() : { screen }) });
  try {
    let screen = await run.read();
    const prompt = dialogOn(screen, run.kinds);
    if (prompt === undefined) return fail(`No ${run.kinds.join("/")} dialog is open (${screenSummary(screen)}), so nothing was pressed.`, screen);
    if (choice.kind === "decline") {
      const after = await run.pressUntilGone("Escape", prompt);
      return after.gone
        ? { result: "answered", reason: `Escape declined the ${prompt.kind} dialog.`, keys: run.keys, screen: after.screen }
        : fail(`Escape was pressed but the ${prompt.kind} dialog stayed open (${screenSummary(after.screen)}); decline it in the agy TUI.`, after.screen);
    }
    const target = targetOption(prompt, choice);
    if ("failure" in target) return fail(`Nothing was pressed: ${target.failure}.`, screen);
    const option = prompt.options[target.position - 1]!;
    if (prompt.keys === "digits") {
      if (option.number === null) return fail(`Nothing was pressed: the dialog takes digits but option "${option.label}" has no number.`, screen);
      const after = await run.pressUntilGone(String(option.number), prompt);
      return after.gone
        ? { result: "answered", reason: `Chose ${option.number}. ${option.label} with its digit, as the dialog advertises.`, keys: run.keys, screen: after.screen }
        : fail(`The digit ${option.number} was pressed but the dialog stayed open (${screenSummary(after.screen)}).`, after.screen);
    }
    const signature = promptSignature(prompt);
    if (prompt.pointer === null) return fail(`Nothing was pressed: the dialog shows no highlighted row (${described(prompt)}).`, screen);
    let pointer: number = prompt.pointer;
    while (pointer !== target.position) {
      const key = target.position > pointer ? "Down" : "Up";
      const from = pointer;
      const expected = from + (key === "Down" ? 1 : -1);
      await run.press(key);
      // An `unknown` read is a redraw caught half-way: read again rather than judge it.
      const moved = await run.poll((s) => s.state !== "unknown" && !(s.prompt !== null && promptSignature(s.prompt) === signature && s.prompt.pointer === from));
      screen = moved.screen;
      if (!moved.ok) return fail(`${key} was pressed but the pointer stayed on row ${from} within ${seconds(run.settleMs)}; nothing more was pressed.`, screen);
      if (screen.prompt === null || promptSignature(screen.prompt) !== signature) {
        return fail(`After ${key} the screen no longer shows the same dialog (${screenSummary(screen)}); nothing more was pressed.`, screen);
      }
      if (screen.prompt.pointer !== expected) {
        return fail(`After ${key} the pointer is on row ${screen.prompt.pointer ?? "none"}, not ${expected}; nothing more was pressed.`, screen);
      }
      pointer = expected;
    }
    // The last read shows the `>` on the intended row of the same dialog: only now is Enter safe.
    const after = await run.pressUntilGone("Enter", screen.prompt ?? prompt);
    return after.gone
      ? { result: "answered", reason: `Moved the pointer to "${option.label}" and confirmed it with Enter.`, keys: run.keys, screen: after.screen }
      : fail(`Enter was pressed on "${option.label}" but the dialog stayed open (${screenSummary(after.screen)}).`, after.screen);
  } catch (error) {
    if (options.signal?.aborted === true) throw error;
    return fail(`The pane could not be read or keyed: ${(error as Error).message}`);
  }
}

/** One line about a screen for failure sentences: state, prompt kind and question, composer. */
export function screenSummary(screen: ScreenModel): string {
  if (screen.prompt !== null) return `the screen shows a ${described(screen.prompt)}`;
  const composer = screen.composer === "draft" ? "a draft in the composer" : screen.composer === "empty" ? "an empty composer" : "no composer";
  return `the screen is ${screen.state}, with ${composer}`;
}

/** The prompt on screen when it is one of `kinds`. */
export function dialogOn(screen: ScreenModel, kinds: readonly ScreenPromptKind[] = DIALOG_KINDS): ScreenPrompt | undefined {
  return screen.state === "prompt" && screen.prompt !== null && kinds.includes(screen.prompt.kind) ? screen.prompt : undefined;
}

class PromptRun {
  readonly keys: string[] = [];
  readonly kinds: readonly ScreenPromptKind[];
  readonly settleMs: number;
  readonly #pane: PromptPane;
  readonly #options: PromptActionOptions;
  readonly #clock: PromptClock;
  #last: ScreenModel | undefined;

  constructor(pane: PromptPane, options: PromptActionOptions, clock: PromptClock) {
    this.#pane = pane;
    this.#options = options;
    this.#clock = clock;
    this.kinds = options.kinds ?? DIALOG_KINDS;
    this.settleMs = options.settleTimeoutMs ?? DEFAULT_SETTLE_MS;
  }

  async read(): Promise<ScreenModel> {
    this.#last = await this.#pane.read(this.#options.signal);
    return this.#last;
  }

  lastScreen(): { screen?: ScreenModel } {
    return this.#last === undefined ? {} : { screen: this.#last };
  }

  async press(key: string): Promise<void> {
    this.keys.push(key);
    await this.#pane.sendKeys([key], this.#options.signal);
  }

  /** Presses `key` and reads until `prompt` has left the screen (another dialog in its place counts as left). */
  async pressUntilGone(key: string, prompt: ScreenPrompt): Promise<{ gone: boolean; screen: ScreenModel }> {
    const signature = promptSignature(prompt);
    await this.press(key);
    const seen = await this.poll((s) => s.state !== "unknown" && (s.state !== "prompt" || s.prompt === null || promptSignature(s.prompt) !== signature));
    return { gone: seen.ok, screen: seen.screen };
  }

  /** Reads every pollMs until `done` holds or the settle bound passes. */
  async poll(done: (screen: ScreenModel) => boolean): Promise<{ ok: boolean; screen: ScreenModel }> {
    const deadline = this.#clock.now() + this.settleMs;
    const interval = this.#options.pollMs ?? DEFAULT_POLL_MS;
    for (;;) {
      const screen = await this.read();
      if (done(screen)) return { ok: true, screen };
      if (this.#clock.now() >= deadline) return { ok: false, screen };
      await this.#clock.sleep(interval, this.#options.signal);
    }
  }
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
