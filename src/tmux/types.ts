/**
 * The tmux driver's contract with the session runner and the CLI.
 */
import type { SettledAnswer } from "./key-plans.js";
import type { ScreenModel, ScreenPromptKind } from "./screen-types.js";

/** Which tmux server to talk to: `-L name`, `-S path`, or the default. */
export type TmuxSocket = { name: string } | { path: string } | undefined;

/** The honest outcome of typing a turn (spike-notes §6.2). */
export interface TurnDeliveryResult {
  result: "delivered" | "unverified" | "failed";
  /** One sentence: why it is not `delivered`, or how delivery was confirmed. */
  reason: string;
  /** What the pane showed when delivery refused or stopped (state, prompt kind, question). */
  screen?: ScreenModel;
}

export interface DeliverTurnOptions {
  /**
   * Type even though RPC shows a WAITING step. The screen guard still holds:
   * nothing is ever typed while a prompt holds the keyboard (text + Enter in
   * an open dialog approves it, spike-notes §13).
   */
  force?: boolean;
  /** Clear a draft a person has typed instead of refusing. */
  clearDraft?: boolean;
  /**
   * The turn is a slash command (`/model`, `/clear`): without this a turn
   * starting with `/` is refused, since Enter submits the popup's highlighted
   * command, which may not be the typed one (spike-notes §13).
   */
  slash?: boolean;
  /**
   * Answers whether the turn has started by now (e.g. a new USER_INPUT step
   * seen over RPC). Called repeatedly after Enter until true or the bound.
   * Without it the driver checks that the draft left the composer.
   */
  verifyStarted?: (signal: AbortSignal) => Promise<boolean>;
  /**
   * Resolves true when a step is WAITING right now (the guard). When it
   * resolves false while a permission or question dialog is on screen, that
   * dialog is agy's own leftover of an answered step (spike-notes §5.4): it
   * is closed before typing only with a key the key table marks safe for a
   * settled step on `agyVersion`; where there is none the turn is refused
   * with the reason (see `closeStale`).
   */
  hasWaitingStep?: () => Promise<boolean>;
  /**
   * The agy version the keys are chosen for (the key table, docs/tmux.md);
   * null or absent: unknown, so the conservative row — no key that could
   * cancel, dismiss or answer at once.
   */
  agyVersion?: string | null;
  /**
   * The person's explicit choice (`send --close-stale`): close agy's leftover
   * dialog of a settled step with Escape even where the key table knows no
   * safe key for it (on agy 1.2.x that may interrupt the turn the answer
   * resumed, spike-notes K5).
   */
  closeStale?: boolean;
  signal?: AbortSignal;
  /** How long to wait for agy to be ready (composer drawn, nothing running) before refusing (default 30 000 ms). */
  readyTimeoutMs?: number;
  /** How long to wait for the paste to show in the composer (default 5 000 ms). */
  settleTimeoutMs?: number;
  /** How long each Enter attempt waits for the turn to start (default 5 000 ms). */
  verifyTimeoutMs?: number;
  /** Enter presses at most (default 3); a draft still in the composer gets another. */
  enterAttempts?: number;
  /** Screen polling interval (default 100 ms). */
  pollMs?: number;
}

/**
 * What to choose in a dialog agy draws, answered in the TUI itself with the
 * keys the key table gives for the agy version (docs/tmux.md): never by
 * text.
 */
export type TuiChoice =
  /** The dialog's "Yes" row: `1. Yes` of a command, `1. Yes, allow creation` of a file, else the first row starting "Yes". */
  | { kind: "approve" }
  /** The dialog's "No" row, found by its label (`No`, `No, cancel`, `No, deny creation`); a question without one is skipped with Escape where that declines. */
  | { kind: "decline" }
  /** A question's option, by its label (whitespace and case ignored) or, failing that, its printed number. */
  | { kind: "option"; label?: string; number?: number };

export interface PromptActionOptions {
  signal?: AbortSignal;
  /** The agy version the keys are chosen for (the key table); null or absent: the conservative row. */
  agyVersion?: string | null;
  /** Prompt kinds the action may act on (default: the dialogs `command`, `file`, `question`, `other`). */
  kinds?: readonly ScreenPromptKind[];
  /** How long each key waits for the screen to show its effect (default 3 000 ms). */
  settleTimeoutMs?: number;
  /** Screen polling interval (default 50 ms). */
  pollMs?: number;
}

/** How agy's leftover dialog is closed after an answer over RPC (`closePrompt`). */
export interface ClosePromptOptions extends PromptActionOptions {
  /** What the RPC answer chose: on agy 1.2.x the leftover dialog is closed with that option's own digit (spike-notes K7). */
  answer?: SettledAnswer;
  /**
   * Resolves true when a step WAITS now: then the dialog on screen may be
   * that step's own, and nothing is pressed. Without it the caller vouches
   * that the dialog's step has settled.
   */
  hasWaitingStep?: () => Promise<boolean>;
  /** How long agy is given to close its dialog by itself before any key (default 1 500 ms). */
  closeWaitMs?: number;
  /** The person's explicit choice: Escape where the table knows no safe key (see `DeliverTurnOptions.closeStale`). */
  closeStale?: boolean;
}

/** What closing agy's own prompt after an RPC answer did (spike-notes §5.4, K7). */
export interface ClosePromptResult {
  /**
   * `closed`: the dialog left — by itself (`keys` empty) or after the key
   * the table chose; `none`: no dialog was open, nothing was pressed;
   * `still_open`: the key was pressed and the dialog stayed; `left_open`:
   * no key is safe for it on this agy version (or a step waits again), so
   * nothing was pressed and the dialog is left for a person; `failed`: the
   * pane could not be read or keyed.
   */
  result: "closed" | "none" | "still_open" | "left_open" | "failed";
  reason: string;
  /** Every key sent, in order (`Escape` on agy 1.0.x, the answer's digit on 1.2.x, or none). */
  keys: string[];
  screen?: ScreenModel;
}

/** What answering a dialog in the TUI did. */
export interface TuiAnswerResult {
  /** `answered`: the key that confirms the intended option was pressed and the dialog left. */
  result: "answered" | "failed";
  reason: string;
  /** Every key sent, in order (`Down`, `Up`, `Enter`, `Escape`; a digit only where the key table says it answers at once). */
  keys: string[];
  /** The last screen read: on a failure, the one that stopped it. */
  screen?: ScreenModel;
}
