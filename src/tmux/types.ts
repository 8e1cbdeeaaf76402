/**
 * The tmux driver's contract with the session runner and the CLI.
 */
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
   * dialog is agy's own leftover of an answered step (spike-notes §5.4) and
   * is closed with Escape before typing.
   */
  hasWaitingStep?: () => Promise<boolean>;
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
 * What to choose in a dialog agy draws, answered in the TUI itself
 * (spike-notes §13): never by digits unless the screen advertises them,
 * never by text.
 */
export type TuiChoice =
  /** The dialog's "Yes" row: `1. Yes` of a command, `1. Yes, allow creation` of a file, else the first row starting "Yes". */
  | { kind: "approve" }
  /** Escape: declines a permission or question dialog ("User declined the tool call"); never Enter. */
  | { kind: "decline" }
  /** A question's option, by its label (whitespace and case ignored) or, failing that, its printed number. */
  | { kind: "option"; label?: string; number?: number };

export interface PromptActionOptions {
  signal?: AbortSignal;
  /** Prompt kinds the action may act on (default: the dialogs `command`, `file`, `question`, `other`). */
  kinds?: readonly ScreenPromptKind[];
  /** How long each key waits for the screen to show its effect (default 3 000 ms). */
  settleTimeoutMs?: number;
  /** Screen polling interval (default 50 ms). */
  pollMs?: number;
}

/** What closing agy's own prompt after an RPC answer did (spike-notes §5.4). */
export interface ClosePromptResult {
  /**
   * `closed`: Escape was pressed and the dialog left; `none`: no dialog was
   * open, nothing was pressed; `still_open`: Escape was pressed and the
   * dialog stayed; `failed`: the pane could not be read or keyed.
   */
  result: "closed" | "none" | "still_open" | "failed";
  reason: string;
  /** Every key sent, in order (only ever `Escape`). */
  keys: string[];
  screen?: ScreenModel;
}

/** What answering a dialog in the TUI did. */
export interface TuiAnswerResult {
  /** `answered`: the key that confirms the intended option was pressed and the dialog left. */
  result: "answered" | "failed";
  reason: string;
  /** Every key sent, in order (`Down`, `Up`, `Enter`, `Escape`; a digit only where the screen advertises digits). */
  keys: string[];
  /** The last screen read: on a failure, the one that stopped it. */
  screen?: ScreenModel;
}
