/**
 * `/model`: agy's `Switch Model` picker, drawn below an empty composer
 * (agy 1.1.27, spike-notes §13) — unnumbered model rows, an effort slider
 * moved with ←/→, and a keyboard line. The simulator's one model family is
 * listed; its efforts map to the simulator's model enums.
 */
import { menuRows, movePointer } from "./menu-rows.js";
import { EFFORTS, simModel } from "./status-row.js";

const EFFORT_HINT: Record<string, string> = {
  Low: "Fastest answers for simple tasks",
  Medium: "Balanced speed and reasoning for everyday work",
  High: "Deepest reasoning for complex problems — slower but strongest",
};

export interface ModelPicker {
  readonly pointer: number;
  readonly effort: number;
  key(key: "up" | "down" | "left" | "right"): void;
  /** The model enum Enter selects, or undefined when the simulator has none for the chosen effort. */
  selected(): string | undefined;
  lines(width: number): string[];
}

export function createModelPicker(current: string | undefined): ModelPicker {
  const { name, effort } = simModel(current);
  const rows = [name];
  let pointer = 0;
  let effortIndex = Math.max(
    0,
    EFFORTS.findIndex((e) => e.effort === effort),
  );
  return {
    get pointer() {
      return pointer;
    },
    get effort() {
      return effortIndex;
    },
    key(key) {
      if (key === "up" || key === "down") pointer = movePointer(pointer, key === "up" ? -1 : 1, rows.length);
      else effortIndex = movePointer(effortIndex, key === "left" ? -1 : 1, EFFORTS.length);
    },
    selected: () => EFFORTS[effortIndex]?.model,
    lines(width) {
      const labels = rows.map((row) => ({ label: row === name ? `${row.padEnd(29)}(current)` : row }));
      const stops = EFFORTS.map((_, i) => (i === effortIndex ? "◉" : "●")).join("━".repeat(14));
      const chosen = EFFORTS[effortIndex]?.effort ?? "Medium";
      return [
        "Switch Model",
        "",
        ...menuRows(labels, pointer, width),
        "",
        `  Effort  ◂        ${stops}        ▸`,
        `                  ${EFFORTS.map((e) => e.effort.toLowerCase()).join("          ")}`,
        `            ${EFFORT_HINT[chosen] ?? ""}`,
        "",
        "Keyboard: ↑/↓ Navigate  ←/→ Effort  enter Select  esc Go Back",
        "",
      ];
    },
  };
}
