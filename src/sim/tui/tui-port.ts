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

/** What a permission gate asks for; decides the dialog agy draws (spike-notes §13). */
export type TuiPermissionAction = "command" | "read-file" | "create-file" | "edit-file";

/** The prompt the conversation is waiting on, keyed by the WAITING step. */
export type TuiPending =
  | {
      kind: "permission";
      trajectoryId: string;
      stepIndex: number;
      /** The command line (or the file path) awaiting approval. */
      target: string;
      description: string;
      suggestedPersistPattern?: string;
      /** Default `command`. */
      action?: TuiPermissionAction;
      /** The same command was denied before in this conversation: agy then offers two "always deny" options. */
      deniedBefore?: boolean;
      /** For `create-file`: the lines the file would get (the dialog's diff preview); for `edit-file`: the lines it adds. */
      preview?: string[];
      /** For `edit-file`: the lines the edit removes (agy 1.2.x `Pending edit`, spike-notes §13 #32, K8). */
      removed?: string[];
      /** The file lies outside the workspace: 1.2.x adds `Reason: outside workspace` and an "always allow non-workspace access" option (spike-notes §13 #32, K8). */
      outsideWorkspace?: boolean;
    }
  | {
      kind: "question";
      trajectoryId: string;
      stepIndex: number;
      questions: TuiQuestion[];
    };

export interface TuiTranscriptEntry {
  /** `reasoning` is agy's `▸ Thought for …` row. */
  role: "user" | "assistant" | "tool" | "error" | "reasoning";
  /** For a tool entry: the result shown under `⎿` (may be empty). */
  text: string;
  /** A tool entry's call, drawn as agy's tool row `● Name(arg)`. */
  call?: { name: string; arg: string; expandable?: boolean };
  /** A tool entry whose dialog was declined keeps the dialog's header word above the result (`Command`). */
  header?: string;
}

export interface TuiView {
  conversationId: string;
  /** A turn is in progress: the running footer (`esc to cancel`) shows. */
  running: boolean;
  /** Settled entries plus the growing text of a GENERATING planner, in order. */
  transcript: TuiTranscriptEntry[];
  /** What the conversation waits on right now; undefined when nothing is WAITING. */
  pending?: TuiPending | undefined;
  /** The model enum the next typed turn uses (the status row's label); absent: the TUI's default. */
  model?: string | undefined;
}

export type TuiAnswer =
  | { kind: "permission"; allow: boolean }
  | {
      kind: "question";
      /** The first question's choice (every version's TUI answers it). */
      selectedOptionIds: string[];
      /**
       * agy 1.2.x forms answer every question, one digit each (spike-notes §13 #33, K9): one
       * entry per question, in order; empty ids and no write-in = skipped.
       */
      responses?: { selectedOptionIds: string[]; writeIn?: string }[];
    }
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
  /**
   * agy 1.2.x Esc at an approval (spike-notes K5): cancels the tool
   * call and ends the current turn, parked or running (its open steps become
   * CANCELED; queued turns still play). Returns false when no turn ran.
   * Optional: without it the TUI falls back to {@link cancel}.
   */
  interruptTurn?(): boolean;
  /** `/clear`: a new root conversation on the same server; the TUI follows it. */
  clear(): void;
  /** `/model`: later typed turns use `model` (an enum such as `MODEL_PLACEHOLDER_M71`). Optional: without it the picker only closes. */
  setModel?(model: string): void;
}
