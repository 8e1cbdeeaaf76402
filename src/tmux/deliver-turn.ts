/**
 * Types one user turn into agy's composer and reports honestly whether it
 * started (spike-notes §6.2). The text goes in as one bracketed paste, so
 * newlines stay data and nothing in it acts as a key; Enter is a separate
 * command, sent only once the paste shows in the composer. Every wait polls
 * the screen for a condition and has its own bound.
 *
 * It types only when the screen model says agy is `ready` with an empty
 * composer (a mode placeholder counts as empty; `? for shortcuts` is not
 * required, agy 1.2.1 stops drawing it) and RPC shows no WAITING step: text
 * plus Enter in an open dialog approves it (spike-notes §13), and on agy
 * 1.2.x a turn starting with a digit answers a menu at once (K1), so nothing
 * is typed, and no clearing key is sent, while a prompt holds the keyboard.
 * A leftover dialog of a step RPC shows settled is closed first only with a
 * key the key table marks safe for a settled step on this agy version;
 * where there is none the turn is refused with the reason (`closeStale` is
 * the person's explicit choice to close it with Escape). A multi-line turn
 * is one bracketed paste and one CR (K15). A turn starting with `/` is a
 * slash command: refused unless asked for, and then submitted only when the
 * popup highlights the typed command. Every key comes from the key table.
 */
import { AgyBridgeError } from "../errors.js";
import { draftNeedle, draftTailNeedle, parseScreen, pastePlaceholders, squeeze, type ComposerScreen } from "./composer-screen.js";
import { chooseKey, KeyRefusal, keyTableFor, situationOf, versionWords, type ChosenKey, type KeySituation, type KeyTable } from "./key-table.js";
import { described } from "./prompt-keys.js";
import { readScreen } from "./screen-model.js";
import type { ScreenModel } from "./screen-types.js";
import { sanitizeTurnText } from "./sanitize-text.js";
import { closeAnsweredPrompt, dialogOn, screenSummary, type PromptPane } from "./tui-prompt.js";
import type { DeliverTurnOptions, TurnDeliveryResult } from "./types.js";

/** The pane operations delivery needs; the driver implements them with tmux commands. */
export interface TurnPane {
  /** `capture-pane -p -J` of the visible screen. */
  capture(signal?: AbortSignal): Promise<string>;
  /** Throws a `TmuxError` when the pane is gone or dead. */
  assertAlive(signal?: AbortSignal): Promise<void>;
  /** One `send-keys` call with the keys the key table chose. */
  sendKeys(keys: readonly ChosenKey[], signal?: AbortSignal): Promise<void>;
  /** `load-buffer` + `paste-buffer -p -r -d` of exactly `text`. */
  paste(text: string, signal?: AbortSignal): Promise<void>;
}

export interface TurnClock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

const DEFAULTS = {
  readyTimeoutMs: 30_000,
  settleTimeoutMs: 5_000,
  verifyTimeoutMs: 5_000,
  enterAttempts: 3,
  pollMs: 100,
};
/** Clearing rounds at most (a draft taller than the screen hides how many lines it holds). */
const MAX_CLEAR_ROUNDS = 500;
/** BSpace presses per clearing round at most, where BSpace is the only clearing key (agy 1.2.x). */
const BSPACE_ROUND = 1_000;
/** Without a composer on screen there is nothing to watch; give the paste this long. */
const BLIND_SETTLE_MS = 200;

/**
 * Delivers `text` to `pane`. Rejects only for unusable input (NUL, over 1 MiB,
 * empty) or an abort; everything else, tmux failures included, is a result.
 */
export async function deliverTurnToPane(pane: TurnPane, text: string, options: DeliverTurnOptions, clock: TurnClock): Promise<TurnDeliveryResult> {
  const clean = sanitizeTurnText(text);
  if (clean.trim() === "") {
    throw new AgyBridgeError("invalid_argument", "The turn text is empty (or only control characters); give some text to send.");
  }
  try {
    return await new Delivery(pane, clean, options, clock).run();
  } catch (error) {
    if (options.signal?.aborted === true) throw AgyBridgeError.from(error, "aborted");
    const failure = AgyBridgeError.from(error, "tmux");
    return { result: "failed", reason: failure.message };
  }
}

/** "shown": the composer showed the paste; "blind": no composer to watch; "not_shown": it never showed. */
type PasteSeen = "shown" | "blind" | "not_shown";

class Delivery {
  readonly #pane: TurnPane;
  readonly #text: string;
  readonly #options: DeliverTurnOptions;
  readonly #clock: TurnClock;
  readonly #needle: string;
  readonly #tailNeedle: string;
  readonly #signal: AbortSignal;
  /** The slash command typed (`/model`), when the turn is one. */
  readonly #command: string | undefined;
  readonly #table: KeyTable;
  #placeholders: string[] = [];
  #last: ScreenModel | undefined;

  constructor(pane: TurnPane, text: string, options: DeliverTurnOptions, clock: TurnClock) {
    this.#pane = pane;
    this.#text = text;
    this.#options = options;
    this.#clock = clock;
    this.#needle = draftNeedle(text);
    this.#tailNeedle = draftTailNeedle(text);
    this.#signal = options.signal ?? new AbortController().signal;
    this.#command = slashCommandOf(text);
    this.#table = keyTableFor(options.agyVersion);
  }

  async run(): Promise<TurnDeliveryResult> {
    const o = this.#options;
    if (this.#command !== undefined && o.slash !== true) {
      return failed(
        `The turn starts with "/", so agy reads it as a slash command and Enter would run whichever command its popup highlights (not always ${this.#command}); nothing was typed. Send it as a slash command (--slash) or reword it.`,
      );
    }
    if (o.force !== true && o.hasWaitingStep !== undefined && (await o.hasWaitingStep())) {
      return failed("The conversation has a step WAITING for an answer and Enter could answer its prompt; answer it first, or force the send.");
    }
    await this.#pane.assertAlive(this.#signal);
    const ready = await this.#waitReady();
    if ("refused" in ready) return ready.refused;
    if (ready.screen.composer === "draft") {
      if (o.clearDraft !== true) {
        return this.#failed(
          "The composer holds a draft someone typed and the turn would be appended to it; let them finish, or clear the draft.",
          ready.screen,
        );
      }
      const refused = await this.#clearDraft();
      if (refused !== undefined) return refused;
    }
    // Right before the paste: a prompt that took the keyboard since (a digit-leading turn would answer it, K1) stops it.
    const capture = await this.#pane.capture(this.#signal);
    const now = this.#read(capture);
    if (now.state !== "ready" || now.composer !== "empty") {
      return this.#failed(`Just before the paste ${screenSummary(now)}, so nothing was typed.`, now);
    }
    if (o.force !== true && o.hasWaitingStep !== undefined && (await o.hasWaitingStep())) {
      return this.#failed("A step started WAITING for an answer just before the paste, so nothing was typed; answer it first.", now);
    }
    const baseline = parseScreen(capture);
    await this.#pane.paste(pastePayload(this.#text), this.#signal);
    const shown = await this.#waitPasteShown(baseline);
    if (shown === "not_shown") {
      return this.#failed(
        `The pasted text never showed in the composer within ${seconds(o.settleTimeoutMs ?? DEFAULTS.settleTimeoutMs)}, so Enter was not pressed; look at the pane (a dialog may have taken the paste).`,
        this.#last,
      );
    }
    if (this.#command !== undefined) {
      const refused = await this.#checkSlashPopup();
      if (refused !== undefined) return refused;
    }
    const attempts = shown === "shown" ? Math.max(1, o.enterAttempts ?? DEFAULTS.enterAttempts) : 1;
    return this.#submit(attempts, shown);
  }

  /** Presses Enter (bounded) and verifies; `seen` says whether the composer showed the paste. */
  async #submit(attempts: number, seen: PasteSeen): Promise<TurnDeliveryResult> {
    const verify = this.#options.verifyStarted;
    const bound = this.#options.verifyTimeoutMs ?? DEFAULTS.verifyTimeoutMs;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      await this.#pane.assertAlive(this.#signal);
      const blocked = await this.#blockedBeforeEnter(attempt);
      if (blocked !== undefined) return this.#failed(`${blocked}; the text is left in the composer, unsubmitted.`, this.#last);
      // CR submits; the paste's newlines stayed data (K15).
      const enter = this.#choose(this.#command !== undefined && this.#last?.prompt?.kind === "slash" ? "slash" : "composer", "Enter", "submits");
      if (enter instanceof KeyRefusal) return this.#failed(`${enter.reason}; the text is left in the composer, unsubmitted.`, this.#last);
      await this.#pane.sendKeys([enter], this.#signal);
      if (verify !== undefined) {
        if (await this.#poll(bound, () => verify(this.#signal))) {
          return { result: "delivered", reason: "The turn started: a new USER_INPUT step appeared after Enter." };
        }
      } else if (seen === "shown" && (await this.#poll(bound, async () => this.#draftLeft(await this.#composer())))) {
        return { result: "delivered", reason: "The turn was submitted: the draft left the composer after Enter." };
      }
      // A draft that never showed cannot be seen leaving: nothing on screen can confirm this turn.
      if (seen !== "shown") return { result: "unverified", reason: this.#unconfirmed(verify !== undefined, bound) };
      if (this.#draftLeft(await this.#composer())) {
        return {
          result: "unverified",
          reason: `The draft left the composer, but no new USER_INPUT step appeared within ${seconds(bound)}; the turn may be queued behind a running one.`,
        };
      }
    }
    return failed(`Enter was pressed ${attempts} time${attempts === 1 ? "" : "s"} but the draft stayed in the composer; the turn did not start.`);
  }

  #unconfirmed(rpc: boolean, bound: number): string {
    const where = "no agy composer is visible in the pane";
    return rpc
      ? `The text was pasted and Enter pressed, but no new USER_INPUT step appeared within ${seconds(bound)}, and ${where}.`
      : `The text was pasted and Enter pressed, but nothing confirms that a turn started: ${where}.`;
  }

  /**
   * The guards again, just before each Enter: a step may have parked on a
   * dialog since the paste, and Enter would confirm its highlighted option.
   */
  async #blockedBeforeEnter(attempt: number): Promise<string | undefined> {
    if (this.#options.force !== true && this.#options.hasWaitingStep !== undefined && (await this.#options.hasWaitingStep())) {
      return "A step started WAITING for an answer after the paste, so Enter was not pressed";
    }
    const screen = await this.#screen();
    if (screen.state === "prompt" && screen.prompt !== null) {
      if (screen.prompt.kind === "slash" && this.#command !== undefined && highlightedCommand(screen) === this.#command) return undefined;
      return `A ${described(screen.prompt)} took the keyboard after the paste, so Enter was not pressed`;
    }
    if (screen.state === "prompt") return "Something took the keyboard after the paste, so Enter was not pressed";
    // A busy screen after the first Enter is the turn itself; before it, someone else's.
    if (attempt === 1 && screen.state === "busy") return "agy started working after the paste, so Enter was not pressed";
    return undefined;
  }

  /**
   * Waits until agy is ready (bounded). A dialog whose step RPC shows settled
   * is agy's leftover (spike-notes §5.4) and is closed with Escape once; any
   * other prompt refuses at once, naming what is on screen.
   */
  async #waitReady(): Promise<{ screen: ScreenModel } | { refused: TurnDeliveryResult }> {
    const bound = this.#options.readyTimeoutMs ?? DEFAULTS.readyTimeoutMs;
    const deadline = this.#clock.now() + bound;
    let closedStale = false;
    for (;;) {
      const screen = await this.#screen();
      if (screen.state === "ready" && screen.composer !== "absent") return { screen };
      if (screen.state === "prompt") {
        const dialog = dialogOn(screen);
        const check = this.#options.hasWaitingStep;
        if (dialog !== undefined && !closedStale && check !== undefined && !(await check())) {
          closedStale = true;
          const closed = await closeAnsweredPrompt(
            this.#promptPane(),
            {
              signal: this.#signal,
              agyVersion: this.#table.version,
              hasWaitingStep: check,
              closeWaitMs: 0,
              ...(this.#options.closeStale === true ? { closeStale: true } : {}),
            },
            this.#clock,
          );
          if (closed.result === "closed") continue;
          return {
            refused: this.#failed(
              `agy's leftover ${dialog.kind} dialog of an answered step is still open, so nothing was typed: ${closed.reason}`,
              closed.screen ?? screen,
            ),
          };
        }
        return {
          refused: this.#failed(
            `${capitalised(screenSummary(screen))}, which holds the keyboard: a typed turn would go into it, so nothing was typed. Answer or close it first.`,
            screen,
          ),
        };
      }
      if (this.#clock.now() >= deadline) {
        const what = screen.state === "busy" ? "agy was still working" : "no agy composer could be recognised";
        return {
          refused: this.#failed(`agy was not ready to type into within ${seconds(bound)} (${what}; ${screenSummary(screen)}); nothing was typed.`, screen),
        };
      }
      await this.#clock.sleep(this.#options.pollMs ?? DEFAULTS.pollMs, this.#signal);
    }
  }

  /**
   * Clears the draft with the clearing keys the key table gives the
   * composer on this version — C-a C-k BSpace on 1.0/1.1 (spike-notes §6.2
   * step 3), BSpace alone on 1.2.x and unknown versions (ctrl+k approves a
   * subagent on 1.2.x, K16) — re-reading before each round: a
   * prompt that took the keyboard stops it (clearing keys must never reach a
   * dialog). Undefined when the composer shows empty; else the refusal.
   */
  async #clearDraft(): Promise<TurnDeliveryResult | undefined> {
    for (let round = 0; round < MAX_CLEAR_ROUNDS; round++) {
      const before = await this.#pane.capture(this.#signal);
      const screen = this.#read(before);
      if (screen.state === "ready" && screen.composer === "empty") return undefined;
      if (screen.state !== "ready" || screen.composer !== "draft") {
        return this.#failed(`While clearing the draft, ${screenSummary(screen)}, so no more clearing keys were sent and nothing was pasted.`, screen);
      }
      const keys = this.#clearingKeys(screen);
      if (keys instanceof KeyRefusal) {
        return this.#failed(
          `The composer holds a draft and no key is known to clear it safely on ${versionWords(this.#table)} (${keys.reason}); clear it by hand and send again.`,
          screen,
        );
      }
      await this.#pane.sendKeys(keys, this.#signal);
      const changed = await this.#poll(1_000, async () => (await this.#pane.capture(this.#signal)) !== before);
      if (!changed) break;
    }
    const screen = await this.#screen();
    if (screen.state === "ready" && screen.composer === "empty") return undefined;
    return this.#failed(
      "The draft in the composer could not be cleared with C-a C-k (the composer never showed empty), so nothing was pasted; clear it by hand and send again.",
      screen,
    );
  }

  /**
   * With the slash command pasted, the popup's highlighted entry must be the
   * typed command before Enter (Enter submits the highlighted one, spike-notes
   * §13); otherwise Escape closes the popup and delivery fails.
   */
  async #checkSlashPopup(): Promise<TurnDeliveryResult | undefined> {
    const screen = await this.#screen();
    if (screen.state === "ready") return undefined;
    if (screen.prompt?.kind !== "slash") {
      return this.#failed(`After typing ${this.#command ?? ""}, ${screenSummary(screen)}, so Enter was not pressed.`, screen);
    }
    const highlighted = highlightedCommand(screen);
    if (highlighted === this.#command) return undefined;
    const escape = this.#choose("slash", "Escape", "dismisses");
    if (escape instanceof KeyRefusal) {
      return this.#failed(
        `The slash popup highlights ${highlighted ?? "no entry"}, not the typed ${this.#command ?? ""}, so Enter was not pressed; ${escape.reason}, so the popup is left open with the text in the composer — close it in the agy TUI.`,
        screen,
      );
    }
    await this.#pane.sendKeys([escape], this.#signal);
    return this.#failed(
      `The slash popup highlights ${highlighted ?? "no entry"}, not the typed ${this.#command ?? ""}, so Enter was not pressed; Escape closed the popup and the text is left in the composer.`,
      screen,
    );
  }

  #choose(situation: KeySituation, key: string, wanted: Parameters<typeof chooseKey>[3]): ChosenKey | KeyRefusal {
    return chooseKey(this.#table, situation, key, wanted);
  }

  /** One clearing round for the draft on `screen`: C-a C-k BSpace where they edit the draft, else BSpace per character. */
  #clearingKeys(screen: ScreenModel): ChosenKey[] | KeyRefusal {
    const situation = situationOf(screen);
    const classic = ["C-a", "C-k", "BSpace"].map((k) => this.#choose(situation, k, "edits_draft"));
    const chosen = classic.filter((k): k is ChosenKey => !(k instanceof KeyRefusal));
    if (chosen.length === classic.length) return chosen;
    const back = this.#choose(situation, "BSpace", "edits_draft");
    if (back instanceof KeyRefusal) return back;
    const count = Math.min(BSPACE_ROUND, Array.from(screen.draft ?? "").length + 2);
    return Array.from({ length: Math.max(1, count) }, () => back);
  }

  #promptPane(): PromptPane {
    return {
      read: async (signal) => this.#read(await this.#pane.capture(signal)),
      sendKeys: (keys, signal) => this.#pane.sendKeys(keys, signal),
    };
  }

  #read(captured: string): ScreenModel {
    this.#last = readScreen(captured);
    return this.#last;
  }

  async #screen(): Promise<ScreenModel> {
    return this.#read(await this.#pane.capture(this.#signal));
  }

  /** The composer's rows, for watching the paste arrive and leave. */
  async #composer(): Promise<ComposerScreen> {
    return parseScreen(await this.#pane.capture(this.#signal));
  }

  #failed(reason: string, screen: ScreenModel | undefined): TurnDeliveryResult {
    return { result: "failed", reason, ...(screen === undefined ? {} : { screen }) };
  }

  async #waitPasteShown(baseline: ComposerScreen): Promise<PasteSeen> {
    if (baseline.region === undefined) {
      await this.#clock.sleep(BLIND_SETTLE_MS, this.#signal);
      return "blind";
    }
    const before = baseline.region.join("\n");
    const placeholdersBefore = new Set(pastePlaceholders(baseline.region));
    const bound = this.#options.settleTimeoutMs ?? DEFAULTS.settleTimeoutMs;
    const seen = await this.#poll(bound, async () => {
      const screen = await this.#composer();
      if (screen.region === undefined || screen.region.join("\n") === before) return false;
      const fresh = pastePlaceholders(screen.region).filter((p) => !placeholdersBefore.has(p));
      if (fresh.length > 0) {
        this.#placeholders = fresh;
        return true;
      }
      return this.#draftShows(screen);
    });
    return seen ? "shown" : "not_shown";
  }

  /** The paste shows: its head, or (once it outgrew the screen) its tail. */
  #draftShows(screen: ComposerScreen): boolean {
    const draft = screen.draft ?? "";
    if (this.#needle === "") return draft !== "";
    const squeezed = squeeze(draft);
    return squeezed.includes(this.#needle) || squeezed.includes(this.#tailNeedle);
  }

  #draftLeft(screen: ComposerScreen): boolean {
    if (screen.region === undefined) return false;
    const region = screen.region.join("\n");
    if (this.#placeholders.some((p) => region.includes(p))) return false;
    return !this.#draftShows(screen);
  }

  /** Calls `check` every pollMs until it is true (→ true) or `bound` ms pass (→ false). */
  async #poll(bound: number, check: () => Promise<boolean>): Promise<boolean> {
    const deadline = this.#clock.now() + bound;
    const interval = this.#options.pollMs ?? DEFAULTS.pollMs;
    for (;;) {
      if (await check()) return true;
      if (this.#clock.now() >= deadline) return false;
      await this.#clock.sleep(interval, this.#signal);
    }
  }
}

/** `/model` of `/model gemini`: the command a turn starting with `/` runs; undefined for other turns. */
export function slashCommandOf(text: string): string | undefined {
  const trimmed = text.trimStart();
  if (!trimmed.startsWith("/")) return undefined;
  return /^\S+/.exec(trimmed)?.[0];
}

/** The command of the popup row under the pointer (`/add-dir Add a directory…` → `/add-dir`). */
function highlightedCommand(screen: ScreenModel): string | undefined {
  const prompt = screen.prompt;
  if (prompt === null || prompt.pointer === null) return undefined;
  const row = prompt.options[prompt.pointer - 1];
  return row === undefined ? undefined : /^\S+/.exec(row.label.trim())?.[0];
}

/**
 * The bytes pasted: the text itself, plus a newline when it ends with a
 * backslash, which agy's composer would otherwise read with the Enter as
 * "insert a newline" (spike-notes §6.2 step 5).
 */
export function pastePayload(text: string): string {
  return text.endsWith("\\") ? `${text}\n` : text;
}

function failed(reason: string): TurnDeliveryResult {
  return { result: "failed", reason };
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
