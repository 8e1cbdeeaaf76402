/**
 * The tmux layer: a driver that types user turns into agy's TUI and presses
 * its prompt keys, plus pure readers of captured screens. Imports only
 * `protocol/` and `errors.ts` (never `rpc/`): callers bind RPC checks in
 * through `DeliverTurnOptions`.
 */
export { createTmuxDriver } from "./tmux-driver.js";
export type { CommandOptions, PaneInfo, TmuxDriver, TmuxDriverOptions } from "./tmux-driver.js";
export { spawnTmux } from "./spawn-tmux.js";
export type { TmuxExec, TmuxExecOptions, TmuxExecResult } from "./spawn-tmux.js";
export { deliverTurnToPane, pastePayload } from "./deliver-turn.js";
export type { TurnClock, TurnPane } from "./deliver-turn.js";
export { sanitizeTurnText, MAX_TURN_BYTES } from "./sanitize-text.js";
export { DIALOG_KINDS, targetOption } from "./prompt-keys.js";
export {
  chooseKey,
  effectOf,
  KEY_SITUATIONS,
  KeyRefusal,
  keyTableFor,
  NEWEST_KNOWN_VERSION,
  parseVersion,
  promptSituation,
  situationOf,
  STEP_DIALOGS,
  TABLE_KEYS,
} from "./key-table.js";
export type { ChosenKey, KeyContext, KeyEffect, KeyFact, KeyLine, KeyRow, KeySituation, KeyTable, StepDialog, TableKey } from "./key-table.js";
export { choosePlan, closePlan, declinePlan, noOption, yesOption } from "./key-plans.js";
export type { ChoosePlan, ClosePlan, DeclinePlan, SettledAnswer } from "./key-plans.js";
export { answerOnScreen, closeAnsweredPrompt, dialogOn, screenSummary } from "./tui-prompt.js";
export type { PromptClock, PromptPane } from "./tui-prompt.js";
export { TuiAnswerError } from "./tui-answer-error.js";
export { isPaneTarget, paneTarget, socketArgs } from "./target.js";
export {
  AGY_MARKERS,
  draftNeedle,
  draftOf,
  isSeparatorLine,
  parseScreen,
  pastePlaceholders,
} from "./composer-screen.js";
export type { ComposerScreen, FooterState, PromptOption, ScreenMarkers, VisiblePrompt } from "./composer-screen.js";
export { readScreen } from "./screen-model.js";
export type {
  ComposerState,
  FileAction,
  PermissionMode,
  QuestionForm,
  ScreenModel,
  ScreenOption,
  ScreenPrompt,
  ScreenPromptKind,
  ScreenState,
  SetupScreen,
} from "./screen-types.js";
export type {
  ClosePromptOptions,
  ClosePromptResult,
  DeliverTurnOptions,
  PromptActionOptions,
  TmuxSocket,
  TuiAnswerResult,
  TuiChoice,
  TurnDeliveryResult,
} from "./types.js";
