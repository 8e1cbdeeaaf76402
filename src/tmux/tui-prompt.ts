/**
 * Acting on a dialog in agy's TUI without ever answering the wrong way.
 * Every key comes from the key table (key-table.ts) for the agy version in
 * front of us and the screen just read: on agy 1.2.x a digit answers a menu
 * at once (spike-notes K1) and Escape at an approval cancels the tool call
 * and ends the turn (K5); on agy ~1.0.14 arrow menus ignore digits, so
 * `4 Enter` can approve a deny (§13 #14).
 *
 * - After an answer went over RPC, agy may keep its own dialog drawn (§5.4;
 *   unknown on 1.2.x, K7): `closeAnsweredPrompt` gives agy a bounded while
 *   to close it by itself, then closes it only with a key the table marks
 *   safe for a settled step on this version — Escape on 1.0.x (§5.4), the
 *   digit of the option the RPC answer chose on 1.2.x (K7), after checking
 *   its label. Where there is none the dialog is left (`left_open`) for a
 *   person, with the reason.
 * - Answering in the TUI itself, `answerOnScreen` presses the option's digit
 *   alone where the table says a digit answers at once, else moves the
 *   pointer one Up/Down at a time from where the screen says it is,
 *   re-reading after each key, and presses Enter only once the `>` is on the
 *   intended row. A decline is the dialog's "No" row, found by its label
 *   (K2, K3, K8), never a position; a question without one is skipped with
 *   Escape where the table says Escape declines it. When the screen is not
 *   what the last key should have made it, nothing more is pressed and the
 *   result is `failed` with that screen.
 */
import { choosePlan, closePlan, declinePlan } from "./key-plans.js";
import {
  chooseKey,
  explicitKey,
  KeyRefusal,
  keyTableFor,
  promptSituation,
  situationWords,
  versionWords,
  type ChosenKey,
  type KeyContext,
  type KeyEffect,
  type KeySituation,
  type KeyTable,
} from "./key-table.js";
import { DIALOG_KINDS, described, promptSignature, targetOption } from "./prompt-keys.js";
import type { ScreenModel, ScreenPrompt, ScreenPromptKind } from "./screen-types.js";
import type { ClosePromptOptions, ClosePromptResult, PromptActionOptions, TuiAnswerResult, TuiChoice } from "./types.js";

/** The pane operations the prompt actions need; the driver implements them with tmux commands. */
export interface PromptPane {
  /** `capture-pane` read into the screen model. */
  read(signal?: AbortSignal): Promise<ScreenModel>;
  /** One `send-keys` call with the keys the key table chose, after checking the pane is alive. */
  sendKeys(keys: readonly ChosenKey[], signal?: AbortSignal): Promise<void>;
}

export interface PromptClock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

const DEFAULT_SETTLE_MS = 3_000;
const DEFAULT_POLL_MS = 50;
const DEFAULT_CLOSE_WAIT_MS = 1_500;

/** Closes the dialog agy left open after an RPC answer, with a key the table marks safe for a settled step (see the file comment). */
export async function closeAnsweredPrompt(pane: PromptPane, options: ClosePromptOptions, clock: PromptClock): Promise<ClosePromptResult> {
  const run = new PromptRun(pane, options, clock);
  try {
    const first = await run.read();
    const prompt = dialogOn(first, run.kinds);
    if (prompt === undefined)
      return { result: "none", reason: `No dialog was open (${screenSummary(first)}), so no key was pressed.`, keys: [], screen: first };
    // agy may close its dialog by itself once the answer reached it: give it a bounded while before any key.
    const waited = await run.pollFor(options.closeWaitMs ?? DEFAULT_CLOSE_WAIT_MS, gone(prompt));
    if (waited.ok)
      return {
        result: "closed",
        reason: `agy closed its ${prompt.kind} dialog by itself after the answer; no key was pressed.`,
        keys: [],
        screen: waited.screen,
      };
    const left = (reason: string): ClosePromptResult => ({ result: "left_open", reason, keys: run.keys, screen: run.lastScreen().screen ?? waited.screen });
    // The answered step may still read WAITING for a moment; a step that keeps waiting may own the dialog on screen.
    if (options.hasWaitingStep !== undefined && !(await run.waitUntil(async () => !(await options.hasWaitingStep!())))) {
      return left(
        `${capitalised(situationWords(promptSituation(prompt)))} is still drawn, but a step is WAITING again, so it may be that step's own; nothing was pressed — answer it, or close it in the agy TUI.`,
      );
    }
    // Read again right before choosing a key: the label under the digit is checked on this very screen.
    const fresh = await run.read();
    if (gone(prompt)(fresh))
      return { result: "closed", reason: `agy closed its ${prompt.kind} dialog by itself after the answer; no key was pressed.`, keys: [], screen: fresh };
    const still = dialogOn(fresh, run.kinds) ?? prompt;
    const situation = promptSituation(still);
    const what = situationWords(situation);
    const plan = closePlan(run.table, still, options.answer);
    let key: ChosenKey;
    if (plan.how === "none") {
      if (options.closeStale !== true) {
        return left(
          `agy kept ${what} drawn after the answer over RPC, and ${plan.reason}; it was left open — close it in the agy TUI, or send with --close-stale to close it with Escape.`,
        );
      }
      key = explicitKey(run.table, situation, "Escape", true);
    } else if (plan.how === "escape") {
      const chosen = chooseKey(run.table, situation, "Escape", "dismisses", { settled: true });
      if (chosen instanceof KeyRefusal) return left(`${chosen.reason}; ${what} was left open.`);
      key = chosen;
    } else {
      // The digit of the option the answer chose: its label was checked on the screen just read.
      const chosen = chooseKey(run.table, situation, plan.digit, "answers_at_once", { settled: true });
      if (chosen instanceof KeyRefusal) return left(`${chosen.reason}; ${what} was left open.`);
      key = chosen;
    }
    // Once more right before the key: a gate that parked since would own a dialog drawn in the same place.
    if (options.hasWaitingStep !== undefined && (await options.hasWaitingStep())) {
      return left(
        `${capitalised(what)} is still drawn, but a step started WAITING just now, so it may be that step's own; nothing was pressed — answer it, or close it in the agy TUI.`,
      );
    }
    const after = await run.pressUntilGone(key, still);
    const how = key.key === "Escape" ? "Escape" : `The digit ${key.key} (the option the answer chose)`;
    if (after.gone)
      return { result: "closed", reason: `${how} closed ${what} agy had left open (spike-notes ${key.fact}).`, keys: run.keys, screen: after.screen };
    return {
      result: "still_open",
      reason: `${how} was pressed but ${what} was still open after ${seconds(run.settleMs)} (${screenSummary(after.screen)}); close it in the agy TUI.`,
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
  const fail = (reason: string, screen?: ScreenModel): TuiAnswerResult => ({
    result: "failed",
    reason,
    keys: run.keys,
    ...(screen === undefined ? run.lastScreen() : { screen }),
  });
  try {
    let screen = await run.read();
    const prompt = dialogOn(screen, run.kinds);
    if (prompt === undefined) return fail(`No ${run.kinds.join("/")} dialog is open (${screenSummary(screen)}), so nothing was pressed.`, screen);
    const situation = promptSituation(prompt);
    let plan;
    if (choice.kind === "decline") {
      plan = declinePlan(run.table, prompt);
    } else {
      const target = targetOption(prompt, choice);
      if ("failure" in target) return fail(`Nothing was pressed: ${target.failure}.`, screen);
      plan = choosePlan(run.table, prompt, target.position);
    }
    if (plan.how === "refused") return fail(`Nothing was pressed: ${plan.reason}.`, screen);
    if (plan.how === "escape") {
      const key = run.choose(situation, "Escape", "declines");
      if (key instanceof KeyRefusal) return fail(`Nothing was pressed: ${key.reason}.`, screen);
      const after = await run.pressUntilGone(key, prompt);
      return after.gone
        ? { result: "answered", reason: `Escape skipped ${situationWords(situation)} (spike-notes ${key.fact}).`, keys: run.keys, screen: after.screen }
        : fail(`Escape was pressed but ${situationWords(situation)} stayed open (${screenSummary(after.screen)}); answer it in the agy TUI.`, after.screen);
    }
    const option = prompt.options[plan.position - 1]!;
    if (plan.how === "digit") {
      // The label under the digit was read on this screen; the digit alone answers it (no Enter: it would hit the next screen, K1).
      const key = run.choose(situation, plan.digit, "answers_at_once", { advertisedDigits: prompt.keys === "digits" });
      if (key instanceof KeyRefusal) return fail(`Nothing was pressed: ${key.reason}.`, screen);
      const after = await run.pressUntilGone(key, prompt);
      return after.gone
        ? {
            result: "answered",
            reason: `Chose ${plan.digit}. ${option.label} with its digit alone, which answers at once on ${versionWords(run.table)} (spike-notes ${key.fact}).`,
            keys: run.keys,
            screen: after.screen,
          }
        : fail(`The digit ${plan.digit} was pressed but the dialog stayed open (${screenSummary(after.screen)}).`, after.screen);
    }
    const signature = promptSignature(prompt);
    if (prompt.pointer === null) return fail(`Nothing was pressed: the dialog shows no highlighted row (${described(prompt)}).`, screen);
    let pointer: number = prompt.pointer;
    while (pointer !== plan.position) {
      const name = plan.position > pointer ? "Down" : "Up";
      const key = run.choose(situation, name, "moves_pointer");
      if (key instanceof KeyRefusal) return fail(`${key.reason}; nothing more was pressed.`, screen);
      const from = pointer;
      const expected = from + (name === "Down" ? 1 : -1);
      await run.press(key);
      // An `unknown` read is a redraw caught half-way: read again rather than judge it.
      const moved = await run.poll(
        (s) => s.state !== "unknown" && !(s.prompt !== null && promptSignature(s.prompt) === signature && s.prompt.pointer === from),
      );
      screen = moved.screen;
      if (!moved.ok)
        return fail(`${name} was pressed but the pointer stayed on row ${from} within ${seconds(run.settleMs)}; nothing more was pressed.`, screen);
      if (screen.prompt === null || promptSignature(screen.prompt) !== signature) {
        return fail(`After ${name} the screen no longer shows the same dialog (${screenSummary(screen)}); nothing more was pressed.`, screen);
      }
      if (screen.prompt.pointer !== expected) {
        return fail(`After ${name} the pointer is on row ${screen.prompt.pointer ?? "none"}, not ${expected}; nothing more was pressed.`, screen);
      }
      pointer = expected;
    }
    // The last read shows the `>` on the intended row of the same dialog: only now is Enter safe.
    const enter = run.choose(situation, "Enter", "selects_pointed");
    if (enter instanceof KeyRefusal) return fail(`${enter.reason}; nothing more was pressed.`, screen);
    const after = await run.pressUntilGone(enter, screen.prompt ?? prompt);
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

/** `prompt` has left the screen (another dialog in its place counts as left); an `unknown` read is a redraw half-way. */
function gone(prompt: ScreenPrompt): (screen: ScreenModel) => boolean {
  const signature = promptSignature(prompt);
  return (s) => s.state !== "unknown" && (s.state !== "prompt" || s.prompt === null || promptSignature(s.prompt) !== signature);
}

class PromptRun {
  readonly keys: string[] = [];
  readonly kinds: readonly ScreenPromptKind[];
  readonly settleMs: number;
  readonly table: KeyTable;
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
    this.table = keyTableFor(options.agyVersion);
  }

  choose(situation: KeySituation, key: string, wanted: KeyEffect, context: KeyContext = {}): ChosenKey | KeyRefusal {
    return chooseKey(this.table, situation, key, wanted, context);
  }

  async read(): Promise<ScreenModel> {
    this.#last = await this.#pane.read(this.#options.signal);
    return this.#last;
  }

  lastScreen(): { screen?: ScreenModel } {
    return this.#last === undefined ? {} : { screen: this.#last };
  }

  async press(key: ChosenKey): Promise<void> {
    this.keys.push(key.key);
    await this.#pane.sendKeys([key], this.#options.signal);
  }

  /** Presses `key` and reads until `prompt` has left the screen. */
  async pressUntilGone(key: ChosenKey, prompt: ScreenPrompt): Promise<{ gone: boolean; screen: ScreenModel }> {
    await this.press(key);
    const seen = await this.poll(gone(prompt));
    return { gone: seen.ok, screen: seen.screen };
  }

  /** Reads every pollMs until `done` holds or the settle bound passes. */
  poll(done: (screen: ScreenModel) => boolean): Promise<{ ok: boolean; screen: ScreenModel }> {
    return this.pollFor(this.settleMs, done);
  }

  /** Calls `check` every pollMs until it holds (true) or the settle bound passes (false). */
  async waitUntil(check: () => Promise<boolean>): Promise<boolean> {
    const deadline = this.#clock.now() + this.settleMs;
    const interval = this.#options.pollMs ?? DEFAULT_POLL_MS;
    for (;;) {
      if (await check()) return true;
      if (this.#clock.now() >= deadline) return false;
      await this.#clock.sleep(interval, this.#options.signal);
    }
  }

  async pollFor(bound: number, done: (screen: ScreenModel) => boolean): Promise<{ ok: boolean; screen: ScreenModel }> {
    const deadline = this.#clock.now() + bound;
    const interval = this.#options.pollMs ?? DEFAULT_POLL_MS;
    for (;;) {
      const screen = await this.read();
      if (done(screen)) return { ok: true, screen };
      if (this.#clock.now() >= deadline) return { ok: false, screen };
      await this.#clock.sleep(interval, this.#options.signal);
    }
  }
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
