/**
 * A dialog could not be answered in the TUI: the pointer was not where the
 * last key should have put it, the dialog was not the expected one, or it
 * stayed open. Nothing more was pressed; `screen` is what stopped it and
 * `keys` what had been sent.
 */
import { AgyBridgeError } from "../errors.js";
import type { ScreenModel } from "./screen-types.js";
import type { TuiAnswerResult } from "./types.js";

export class TuiAnswerError extends AgyBridgeError {
  override name = "TuiAnswerError";
  readonly screen: ScreenModel | undefined;
  readonly keys: readonly string[];

  constructor(result: TuiAnswerResult, context: string) {
    super("tmux", `${context}: ${result.reason}`);
    this.screen = result.screen;
    this.keys = [...result.keys];
  }
}
