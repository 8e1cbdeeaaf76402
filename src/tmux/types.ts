/**
 * The tmux driver's contract with the session runner and the CLI.
 */

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
   * Resolves true once the turn has started (e.g. a new USER_INPUT step seen
   * over RPC). Without it the driver checks that the draft left the composer.
   */
  verifyStarted?: (signal: AbortSignal) => Promise<boolean>;
  /** Resolves true when a step is WAITING right now (the guard). */
  hasWaitingStep?: () => Promise<boolean>;
  signal?: AbortSignal;
}

/** Keys that close the TUI's own prompt after an answer went over RPC (spike-notes §5.6). */
export type PromptKeys =
  | { kind: "permission"; allow: boolean }
  | { kind: "question"; optionIds: string[]; writeIn?: string }
  | { kind: "dismiss" };
