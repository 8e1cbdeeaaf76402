/**
 * The tmux driver's contract with the session runner and the CLI.
 */
import type { ScreenMarkers } from "./composer-screen.js";

/** Which tmux server to talk to: `-L name`, `-S path`, or the default. */
export type TmuxSocket = { name: string } | { path: string } | undefined;

/** The honest outcome of typing a turn (spike-notes §6.2). */
export interface TurnDeliveryResult {
  result: "delivered" | "unverified" | "failed";
  /** One sentence: why it is not `delivered`, or how delivery was confirmed. */
  reason: string;
}

export interface DeliverTurnOptions {
  /** Type even though the conversation has a WAITING step (the Enter could answer it). */
  force?: boolean;
  /** Clear a draft a person has typed instead of refusing. */
  clearDraft?: boolean;
  /**
   * Answers whether the turn has started by now (e.g. a new USER_INPUT step
   * seen over RPC). Called repeatedly after Enter until true or the bound.
   * Without it the driver checks that the draft left the composer.
   */
  verifyStarted?: (signal: AbortSignal) => Promise<boolean>;
  /** Resolves true when a step is WAITING right now (the guard). */
  hasWaitingStep?: () => Promise<boolean>;
  signal?: AbortSignal;
  /** Footer and glyph wording; default agy 1.0.x's (`AGY_MARKERS`). */
  markers?: ScreenMarkers;
  /** How long to wait for the idle or running footer before refusing (default 30 000 ms). */
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

/** Keys that close the TUI's own prompt after an answer went over RPC (spike-notes §5.6). */
export type PromptKeys =
  | { kind: "permission"; allow: boolean }
  | { kind: "question"; optionIds: string[]; writeIn?: string }
  | { kind: "dismiss" };
