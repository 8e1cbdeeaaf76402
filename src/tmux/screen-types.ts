/**
 * The screen model: what a supervisor needs from one `capture-pane` text of
 * agy's TUI. This is the contract `agy-bridge screen --json` prints and
 * `readScreen(text)` returns; other programs are written against it, so
 * fields are extended, never renamed.
 */

/**
 * `prompt` whenever something holds the keyboard (a typed turn would go into
 * it); else `busy` while agy generates; else `ready` when a composer is
 * drawn; else `unknown` (never a guess that types).
 */
export type ScreenState = "ready" | "busy" | "prompt" | "unknown";

/** `absent` when no input box is drawn (a dialog replaced it); a mode placeholder is `empty`. */
export type ComposerState = "empty" | "draft" | "absent";

/** agy 1.2.x's permission modes (shift+tab cycles them). */
export type PermissionMode = "default" | "plan" | "accept-edits";

export type ScreenPromptKind = "command" | "file" | "question" | "trust" | "picker" | "menu" | "survey" | "slash" | "other";

export interface ScreenOption {
  /** Wrapped rows folded into one label, whitespace collapsed. */
  label: string;
  /** The printed number, or null for unnumbered rows. */
  number: number | null;
}

export interface ScreenPrompt {
  kind: ScreenPromptKind;
  /** The prompt's question (`Do you want to proceed?`), or null when it asks none. */
  question: string | null;
  /** In screen order. */
  options: ScreenOption[];
  /** The 1-based position of the `>` row in `options`, or null when none is highlighted. */
  pointer: number | null;
  /** `digits` only where the screen itself advertises them (`1-6 Select`, `[0] Skip`); else `arrows`. */
  keys: "arrows" | "digits";
}

export interface ScreenModel {
  state: ScreenState;
  composer: ComposerState;
  /** The person's text when `composer` is `draft`, else null. */
  draft: string | null;
  mode: PermissionMode | null;
  /** The right-aligned model label without the cut-off effort (`Gemini 3.8 Flash`), or null. */
  model: string | null;
  prompt: ScreenPrompt | null;
}
