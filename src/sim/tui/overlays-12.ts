/**
 * Two agy 1.2.x screens that sit below an empty composer and hold the
 * keyboard (spike-notes §13 #34, #35, K10, K16): the `/effort` slider (`Set
 * Effort`) and the `?` shortcuts overlay. Drawn in our own words from the
 * facts; neither shows `? for shortcuts`.
 */
import { movePointer } from "./menu-rows.js";
import { EFFORTS, simModel } from "./status-row.js";

const EFFORT_HINT: Record<string, string> = {
  Low: "Quicker answers with lighter reasoning",
  Medium: "Balanced speed and reasoning",
  High: "Deeper reasoning, slower answers",
};

export interface EffortPicker {
  readonly effort: number;
  key(key: "left" | "right"): void;
  /** The model enum Enter selects, or undefined when the simulator has none for that effort. */
  selected(): string | undefined;
  lines(width: number): string[];
}

/** `/effort`: a slider only — no model rows (spike-notes §13 #34, §13 #35). */
export function createEffortPicker(current: string | undefined): EffortPicker {
  const { effort } = simModel(current);
  const currentIndex = Math.max(
    0,
    EFFORTS.findIndex((e) => e.effort === effort),
  );
  let index = currentIndex;
  return {
    get effort() {
      return index;
    },
    key(key) {
      index = movePointer(index, key === "left" ? -1 : 1, EFFORTS.length);
    },
    selected: () => EFFORTS[index]?.model,
    lines() {
      const stops = EFFORTS.map((_, i) => (i === index ? "◉" : "○")).join("─".repeat(14));
      const chosen = EFFORTS[index]?.effort ?? "Medium";
      return [
        "Set Effort",
        "",
        `  ◂        ${stops}        ▸`,
        `          ${EFFORTS.map((e) => e.effort.toLowerCase()).join("          ")}`,
        `    ${EFFORT_HINT[chosen] ?? ""}${index === currentIndex ? "  (current)" : ""}`,
        "",
        "Keyboard: ←/→ Effort  enter Select  esc Go Back",
        "",
      ];
    },
  };
}

/** The key list agy 1.2.1 shows (spike-notes K15, K16), the keys the simulator plays first. */
const SHORTCUTS: readonly [string, string][] = [
  ["alt+enter, ctrl+j, shift+enter", "Insert newline"],
  ["\\ + enter", "Insert newline fallback"],
  ["ctrl+c, esc", "Go back / dismiss"],
  ["ctrl+d", "Exit"],
  ["ctrl+o", "Toggle trajectory view"],
  ["enter", "Send message or confirm"],
  ["shift+tab", "Cycle mode"],
  ["up / down", "Move up / down"],
];

/** The `?` overlay, on its `shortcuts` view. */
export function shortcutsOverlayLines(): string[] {
  return [
    "Antigravity CLI   general    commands    shortcuts   (←/→ or tab to cycle)",
    "Keyboard Shortcuts",
    "  /keybindings to customize",
    "",
    ...SHORTCUTS.map(([keys, what], i) => `${i === 0 ? ">" : " "} ${keys.padEnd(32)}${what}`),
    "",
    "Keyboard: ↑/↓ Navigate  ←/→ Switch View  esc Close",
    "",
  ];
}
