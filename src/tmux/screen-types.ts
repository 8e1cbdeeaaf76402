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

/**
 * What holds the keyboard. The first nine are agy 1.0 – 1.2.4's; the rest
 * were added for agy 1.2.x (spike-notes "agy 1.2.x screens"):
 * - `amend`: a command approval after Tab — option 1 reads `Yes, and tell
 *   Antigravity CLI what to do next` with an input row under it, footer
 *   `enter Submit`. A person is typing an instruction there: hands off.
 * - `slider`: a panel that is only a slider (`/effort`'s `Set Effort`), no option rows.
 * - `overlay`: the `?` help overlay (`Keyboard Shortcuts`, `esc Close`); its rows are not options.
 * - `artifact_review`: `/artifact`'s review panel (`Action required (N left)`,
 *   `y/n Approve/reject`); its options are the artifacts listed.
 * - `setup`: a first-run screen (sign-in method, the OAuth URL, Terms of
 *   Service): setup is required and NO key may be sent — not even one that
 *   looks like a harmless move (Enter toggles consent on the Terms screen).
 */
export type ScreenPromptKind =
  | "command"
  | "file"
  | "question"
  | "trust"
  | "picker"
  | "menu"
  | "survey"
  | "slash"
  | "other"
  | "amend"
  | "slider"
  | "overlay"
  | "artifact_review"
  | "setup";

/** What a `file` dialog asks to do: `Create file` (create), `Pending edit` (edit), `File access` (access, a read). */
export type FileAction = "create" | "edit" | "access";

/** Which first-run screen a `setup` prompt is. */
export type SetupScreen = "sign_in" | "oauth" | "terms";

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
  /** Only on a `file` prompt whose header or question names it: what the dialog asks to allow. */
  fileAction?: FileAction;
  /** Only on a `question` form that prints `Question i/N:`: which question of how many is on screen. */
  form?: QuestionForm;
  /** Only on a `setup` prompt: which first-run screen it is. */
  setup?: SetupScreen;
}

/** `Question 2/3: …` with a `← Back` hint in the footer from question 2 on (agy 1.2.x). */
export interface QuestionForm {
  /** 1-based: the question the options belong to. */
  index: number;
  /** How many questions the form asks. */
  total: number;
  /** The footer offers `← Back` (to the previous question). */
  back: boolean;
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
  /**
   * Only when the status row shows agy's task strip (`· 2 task(s) · /tasks`, agy
   * 1.2.x): how many background tasks run. They do not make the screen busy.
   */
  backgroundTasks?: number;
  /**
   * Only when the last row is a status line the user configured in place of
   * agy's (`✦ … [WORKING...]`): `custom`. Its words are not agy's, so they say
   * nothing about busy or ready, and `model` / `mode` are null.
   */
  statusLine?: "custom";
}
