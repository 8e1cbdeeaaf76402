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
 * the input box is three rows tall (one project's reading of 1.2.1, which
 * later live captures contradict: a doubted fact, kept playable). `1.2`: agy
 * 1.2.x as captured live on 1.2.1–1.2.17 — the 1.2.x dialogs (`Run this
 * command?` … `4. No, cancel`, `Pending edit`, `File access`, question forms
 * `Question i/N`), digits that answer a menu at once, Escape that interrupts
 * the turn at an approval, LF / M-Enter that insert a newline.
 */
export type TuiVersion = "1.0" | "1.1" | "1.2.1" | "1.2";
export const TUI_VERSIONS: readonly TuiVersion[] = ["1.0", "1.1", "1.2.1", "1.2"];

/** The screen and keys of agy 1.2.x as captured on 1.2.1–1.2.17. */
export function isTui12(version: TuiVersion | undefined): boolean {
  return version === "1.2";
}

/**
 * A `--tui-version` value: one of {@link TUI_VERSIONS}, or a full agy
 * version, read as the persona of its line (`1.0.14` → `1.0`, `1.1.27` →
 * `1.1`, `1.2.10` → `1.2`; `1.2.1` stays the doubted `1.2.1` persona, so
 * write `1.2` for 1.2.1 as captured live). Undefined when it is none of them.
 */
export function resolveTuiVersion(text: string): { version: TuiVersion; full?: string } | undefined {
  const known = TUI_VERSIONS.find((v) => v === text);
  if (known !== undefined) return { version: known };
  const match = /^1\.([0-2])\.(\d{1,4})$/.exec(text);
  if (match === null) return undefined;
  const line = match[1] === "0" ? "1.0" : match[1] === "1" ? "1.1" : "1.2";
  return { version: line, full: text };
}

/**
 * After an answer given over RPC, whether agy's own dialog closes by itself
 * (`close`) or stays drawn until keys close it (`stay`, as on 1.0.10,
 * spike-notes §5.4). Unknown on 1.2.x (spike-notes K7), so both are
 * playable; the default is `stay`.
 */
export type TuiStaleDialog = "close" | "stay";
export const TUI_STALE_DIALOGS: readonly TuiStaleDialog[] = ["close", "stay"];

/** How many options a 1.2 command dialog offers: 4 (`Yes, run command` … `No, cancel`) or 2 (spike-notes §13 #30, K3). */
export type TuiCommandOptions = 2 | 4;

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
