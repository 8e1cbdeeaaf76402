/**
 * The seam between the simulated agy conversation (engine + language server)
 * and the fake TUI that runs in a tmux pane. The engine implements it; the TUI
 * only renders a {@link TuiView} and calls back on keys. Tests wire the TUI to
 * a compiler-checked fake of this interface, or to the real engine.
 */

export interface TuiQuestion {
  question: string;
  options: { id: string; text: string }[];
  multiSelect: boolean;
}

/** The prompt the conversation is waiting on, keyed by the WAITING step. */
export type TuiPending =
  | {
      kind: "permission";
      trajectoryId: string;
      stepIndex: number;
      /** The command line (or other target) awaiting approval. */
      target: string;
      description: string;
      suggestedPersistPattern?: string;
    }
  | {
      kind: "question";
      trajectoryId: string;
      stepIndex: number;
      questions: TuiQuestion[];
    };

export interface TuiTranscriptEntry {
  role: "user" | "assistant" | "tool" | "error";
  text: string;
}

export interface TuiView {
  conversationId: string;
  /** A turn is in progress: the running footer (`esc to cancel`) shows. */
  running: boolean;
  /** Settled entries plus the growing text of a GENERATING planner, in order. */
  transcript: TuiTranscriptEntry[];
  /** What the conversation waits on right now; undefined when nothing is WAITING. */
  pending?: TuiPending | undefined;
}

export type TuiAnswer =
  | { kind: "permission"; allow: boolean }
  | { kind: "question"; selectedOptionIds: string[] }
  | { kind: "dismiss" };

export interface SimTuiPort {
  view(): TuiView;
  /** Calls `listener` after every change of the view; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void;
  /** A typed turn: becomes a USER_INPUT step and starts the matching scenario (or queues mid-turn). */
  submitTurn(text: string): void;
  /**
   * Answers the prompt of step `stepIndex` from the TUI. Returns false when that
   * step is no longer WAITING (answered over RPC, timed out): the TUI then just
   * closes its own prompt, as agy does ("User declined the tool call").
   */
  answer(stepIndex: number, answer: TuiAnswer): boolean;
  /** Esc while a turn runs: interrupts RUNNING/GENERATING steps, as CancelCascadeSteps does. */
  cancel(): void;
  /** `/clear`: a new root conversation on the same server; the TUI follows it. */
  clear(): void;
}
