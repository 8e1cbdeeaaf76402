/**
 * The knobs that pick which agy the fake TUI looks like (spike-notes §13):
 * the build's screen, whether its arrow menus take digits, and the
 * permission modes shift+tab cycles.
 */

/**
 * `1.0`: agy 1.0.x — model label `Gemini (Medium)`, the command dialog's
 * footer adds `ctrl+r Review`. `1.1` (default): agy 1.1.13–1.1.27 — label
 * `<model> · <effort>` cut by the short status row. `1.2.1`: like 1.1, but
 * after a turn that used a tool the status row loses `? for shortcuts` and
 * the input box is three rows tall.
 */
export type TuiVersion = "1.0" | "1.1" | "1.2.1";
export const TUI_VERSIONS: readonly TuiVersion[] = ["1.0", "1.1", "1.2.1"];

/**
 * `ignore` (default): typed digits do nothing in an arrow menu, as another
 * project reports for agy ~1.0.14+ — so `4 Enter` confirms the highlighted
 * `1. Yes`. `accept`: a digit moves the pointer to that option, as our own
 * live 1.0.10 notes record (spike-notes §5.6).
 */
export type TuiDigits = "accept" | "ignore";
export const TUI_DIGITS: readonly TuiDigits[] = ["accept", "ignore"];

/** agy's permission modes, in shift+tab order. */
export type TuiMode = "default" | "accept-edits" | "plan";
export const TUI_MODES: readonly TuiMode[] = ["default", "accept-edits", "plan"];

/** The EMPTY composer's placeholder in a mode (agy 1.2.4); a draft hides it. */
export const MODE_PLACEHOLDER: Record<TuiMode, string | undefined> = {
  default: undefined,
  "accept-edits": "Accept-edits mode: file edits auto-approved (shift+tab to cycle)",
  plan: "Plan mode: research & plan only (shift+tab to cycle)",
};

/** The status row's prefix before the model label in a mode (`plan · Gemini …`). */
export const MODE_PREFIX: Record<TuiMode, string | undefined> = {
  default: undefined,
  "accept-edits": "accept-edits",
  plan: "plan",
};
