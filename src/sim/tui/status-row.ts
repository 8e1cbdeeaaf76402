/**
 * agy's status row under the composer (spike-notes §13): a left part at
 * column 0 (`? for shortcuts`, `esc to cancel`, or nothing) and the model
 * label right-aligned. The row is one column short of the pane, so the label
 * loses its last character (`Gemini 3.8 Flash · hig`), two with a mode
 * prefix (`plan · Gemini 3.8 Flash · hi`), as captured on 1.1.27 and 1.2.4.
 */
import { MODE_PREFIX, type TuiMode, type TuiVersion } from "./tui-options.js";

/** The simulator's own models (the names its GetAvailableModels reports), as name and effort. */
const SIM_MODELS: Record<string, { name: string; effort: string }> = {
  MODEL_PLACEHOLDER_M20: { name: "Gemini", effort: "Medium" },
  MODEL_PLACEHOLDER_M71: { name: "Gemini", effort: "High" },
};

export const DEFAULT_MODEL = "MODEL_PLACEHOLDER_M20";

/** Efforts in the picker's slider order, with the model enum each one selects. */
export const EFFORTS: readonly { effort: string; model: string | undefined }[] = [
  { effort: "Low", model: undefined },
  { effort: "Medium", model: "MODEL_PLACEHOLDER_M20" },
  { effort: "High", model: "MODEL_PLACEHOLDER_M71" },
];

export function simModel(model: string | undefined): { name: string; effort: string } {
  return SIM_MODELS[model ?? DEFAULT_MODEL] ?? { name: model ?? "Gemini", effort: "Medium" };
}

/** The full label before the cut: 1.0.x `Gemini (Medium)`, from 1.1 `Gemini · medium`. */
export function modelLabel(model: string | undefined, version: TuiVersion): string {
  const { name, effort } = simModel(model);
  return version === "1.0" ? `${name} (${effort})` : `${name} · ${effort.toLowerCase()}`;
}

export interface StatusRowInput {
  columns: number;
  /** What sits at column 0, or "" for a model-only row. */
  left: string;
  model: string | undefined;
  mode: TuiMode;
  version: TuiVersion;
  /** Background tasks: the label gains `· N task(s) · /tasks` (spike-notes §13 #26); 0 or absent: none. */
  tasks?: number;
}

/** The status row: `columns - 1` wide, label right-aligned and cut. */
export function statusRow(input: StatusRowInput): string {
  const width = input.columns - 1;
  const prefix = MODE_PREFIX[input.mode];
  const tasks = input.tasks !== undefined && input.tasks > 0 ? ` · ${input.tasks} task(s) · /tasks` : "";
  const label = `${prefix === undefined ? "" : `${prefix} · `}${modelLabel(input.model, input.version)}${tasks}`;
  // 1.0.x's label is drawn whole (no capture shows it cut).
  const cut = input.version === "1.0" ? 0 : prefix === undefined ? 1 : 2;
  const shown = Array.from(label)
    .slice(0, Math.max(0, label.length - cut))
    .join("");
  const gap = width - input.left.length - shown.length;
  if (gap < 1) return `${input.left} ${shown}`.slice(0, Math.max(input.left.length, width));
  return `${input.left}${" ".repeat(gap)}${shown}`;
}
