/**
 * Types one user turn into agy's composer and reports honestly whether it
 * started (spike-notes §6.2). The text goes in as one bracketed paste, so
 * newlines stay data and nothing in it acts as a key; Enter is a separate
 * command, sent only once the paste shows in the composer. Every wait polls
 * the screen for a condition and has its own bound.
 *
 * Guards: a WAITING step (the Enter could answer its prompt), a numbered
 * prompt on screen (same reason, when no RPC client is bound), and a draft a
 * person typed (the turn would be appended to it).
 */
import { AgyBridgeError } from "../errors.js";
import {
  AGY_MARKERS,
  draftNeedle,
  draftTailNeedle,
  holdsDraft,
  parseScreen,
  pastePlaceholders,
  squeeze,
  type ComposerScreen,
  type ScreenMarkers,
} from "./composer-screen.js";
import { sanitizeTurnText } from "./sanitize-text.js";
import type { DeliverTurnOptions, TurnDeliveryResult } from "./types.js";

/** The pane operations delivery needs; the driver implements them with tmux commands. */
export interface TurnPane {
  /** `capture-pane -p -J` of the visible screen. */
  capture(signal?: AbortSignal): Promise<string>;
  /** Throws a `TmuxError` when the pane is gone or dead. */
  assertAlive(signal?: AbortSignal): Promise<void>;
  /** One `send-keys` call with tmux key names. */
  sendKeys(keys: readonly string[], signal?: AbortSignal): Promise<void>;
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
/** Clearing rounds at most when the composer is too tall to count its lines. */
const MAX_CLEAR_ROUNDS = 500;
/** Without a composer on screen there is nothing to watch; give the paste this long. */
const BLIND_SETTLE_MS = 200;

/**
 * Delivers `text` to `pane`. Rejects only for unusable input (NUL, over 1 MiB,
 * empty) or an abort; everything else, tmux failures included, is a result.
 */
export async function deliverTurnToPane(
  pane: TurnPane,
  text: string,
  options: DeliverTurnOptions,
  clock: TurnClock,
): Promise<TurnDeliveryResult> {
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
  readonly #markers: ScreenMarkers;
  readonly #needle: string;
  readonly #tailNeedle: string;
  readonly #signal: AbortSignal;
  #placeholders: string[] = [];

  constructor(pane: TurnPane, text: string, options: DeliverTurnOptions, clock: TurnClock) {
    this.#pane = pane;
    this.#text = text;
    this.#options = options;
    this.#clock = clock;
    this.#markers = options.markers ?? AGY_MARKERS;
    this.#needle = draftNeedle(text);
    this.#tailNeedle = draftTailNeedle(text);
    this.#signal = options.signal ?? new AbortController().signal;
  }

  async run(): Promise<TurnDeliveryResult> {
    const o = this.#options;
    if (o.force !== true && o.hasWaitingStep !== undefined && (await o.hasWaitingStep())) {
      return failed("The conversation has a step WAITING for an answer and Enter could answer its prompt; answer it first, or force the send.");
    }
    await this.#pane.assertAlive(this.#signal);
    let screen = await this.#waitReady();
    if (screen === undefined) {
      const ms = o.readyTimeoutMs ?? DEFAULTS.readyTimeoutMs;
      return failed(`The pane never showed agy's idle or running footer within ${seconds(ms)}; check that it runs agy at its composer.`);
    }
    if (o.force !== true && screen.prompt !== undefined) return failed(promptOpen(screen.prompt.title));
    if (holdsDraft(screen)) {
      if (o.clearDraft !== true) {
        return failed("The composer holds a draft someone typed and the turn would be appended to it; let them finish, or clear the draft.");
      }
      const cleared = await this.#clearDraft(screen);
      if (cleared === undefined) return failed("The draft in the composer could not be cleared with C-a C-k (the composer never showed empty), so nothing was pasted; clear it by hand and send again.");
      screen = cleared;
      // A draft taller than the screen hides whatever was drawn above it, a prompt included.
      if (o.force !== true && screen.prompt !== undefined) return failed(promptOpen(screen.prompt.title));
    }
    const running = screen.footer === "running";
    await this.#pane.paste(pastePayload(this.#text), this.#signal);
    const shown = await this.#waitPasteShown(screen);
    if (shown === "not_shown" && !running) {
      return failed(`The pasted text never showed in the composer within ${seconds(o.settleTimeoutMs ?? DEFAULTS.settleTimeoutMs)}, so Enter was not pressed; look at the pane (a dialog may have taken the paste).`);
    }
    // Mid-turn, agy queues the paste as the next turn: one Enter only, a second could queue an empty turn.
    const attempts = running || shown !== "shown" ? 1 : Math.max(1, o.enterAttempts ?? DEFAULTS.enterAttempts);
    return this.#submit(attempts, shown);
  }

  /** Presses Enter (bounded) and verifies; `seen` says whether the composer showed the paste. */
  async #submit(attempts: number, seen: PasteSeen): Promise<TurnDeliveryResult> {
    const verify = this.#options.verifyStarted;
    const bound = this.#options.verifyTimeoutMs ?? DEFAULTS.verifyTimeoutMs;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      await this.#pane.assertAlive(this.#signal);
      const blocked = await this.#blockedBeforeEnter(seen === "blind");
      if (blocked !== undefined) return failed(`${blocked}; the text is left in the composer, unsubmitted.`);
      await this.#pane.sendKeys(["Enter"], this.#signal);
      if (verify !== undefined) {
        if (await this.#poll(bound, () => verify(this.#signal))) {
          return { result: "delivered", reason: "The turn started: a new USER_INPUT step appeared after Enter." };
        }
      } else if (seen === "shown" && (await this.#poll(bound, async () => this.#draftLeft(await this.#screen())))) {
        return { result: "delivered", reason: "The turn was submitted: the draft left the composer after Enter." };
      }
      // A draft that never showed cannot be seen leaving: nothing on screen can confirm this turn.
      if (seen !== "shown") return { result: "unverified", reason: this.#unconfirmed(seen, verify !== undefined, bound) };
      if (this.#draftLeft(await this.#screen())) {
        return {
          result: "unverified",
          reason: `The draft left the composer, but no new USER_INPUT step appeared within ${seconds(bound)}; the turn may be queued behind a running one.`,
        };
      }
    }
    return failed(`Enter was pressed ${attempts} time${attempts === 1 ? "" : "s"} but the draft stayed in the composer; the turn did not start.`);
  }

  #unconfirmed(seen: "blind" | "not_shown", rpc: boolean, bound: number): string {
    const where =
      seen === "blind"
        ? "no agy composer is visible in the pane"
        : "a turn was running and the paste never showed in the composer (agy may have queued it)";
    return rpc
      ? `The text was pasted and Enter pressed, but no new USER_INPUT step appeared within ${seconds(bound)}, and ${where}.`
      : `The text was pasted and Enter pressed, but nothing confirms that a turn started: ${where}.`;
  }

  /**
   * The guards again, just before Enter: a turn running while we pasted may
   * have parked on a prompt since, and Enter would answer it.
   */
  async #blockedBeforeEnter(blind: boolean): Promise<string | undefined> {
    if (this.#options.force === true) return undefined;
    if (this.#options.hasWaitingStep !== undefined && (await this.#options.hasWaitingStep())) {
      return "A step started WAITING for an answer after the paste, so Enter was not pressed";
    }
    const prompt = blind ? undefined : (await this.#screen()).prompt;
    return prompt === undefined ? undefined : `A numbered prompt ("${clip(prompt.title)}") opened after the paste, so Enter was not pressed`;
  }

  async #screen(): Promise<ComposerScreen> {
    return parseScreen(await this.#pane.capture(this.#signal), this.#markers);
  }

  /** Polls the screen until a footer marker shows; undefined when the bound passes. */
  async #waitReady(): Promise<ComposerScreen | undefined> {
    const markers = this.#markers;
    let screen = await this.#screen();
    if (markers.idle.length === 0 && markers.running.length === 0) return screen;
    const bound = this.#options.readyTimeoutMs ?? DEFAULTS.readyTimeoutMs;
    const ready = await this.#poll(bound, async () => {
      screen = await this.#screen();
      return screen.footer !== undefined;
    });
    return ready ? screen : undefined;
  }

  /** Clears the draft and returns the screen showing the composer empty, or undefined when it never did. */
  async #clearDraft(start: ComposerScreen): Promise<ComposerScreen | undefined> {
    let screen = start;
    const empty = (s: ComposerScreen): boolean => s.region !== undefined && !holdsDraft(s);
    // C-a C-k clears a line (spike-notes §6.2 step 3); BSpace then joins the line above, so each round
    // removes one line. A clipped composer hides how many lines it holds: go on while rounds make progress.
    const rounds = start.clipped ? MAX_CLEAR_ROUNDS : (start.draft ?? "").split("\n").length + 1;
    for (let i = 0; i < rounds && !empty(screen); i++) {
      const before = screen.region?.join("\n");
      await this.#pane.sendKeys(["C-a", "C-k", "BSpace"], this.#signal);
      const changed = await this.#poll(1_000, async () => {
        screen = await this.#screen();
        return screen.region?.join("\n") !== before;
      });
      if (!changed) break;
    }
    return empty(screen) ? screen : undefined;
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
      const screen = await this.#screen();
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

function promptOpen(title: string): string {
  return `A numbered prompt ("${clip(title)}") is open in the TUI and Enter would answer it; close it first, or force the send.`;
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}
