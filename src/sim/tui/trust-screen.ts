/**
 * agy's folder-trust screen at first launch (agy 1.1.27, spike-notes §13):
 * no rules and no composer, two unnumbered options, a model-only status row.
 */
import { menuRows, movePointer } from "./menu-rows.js";

export const TRUST_OPTIONS = ["Yes, I trust this folder", "No, exit"] as const;

export interface TrustScreen {
  readonly pointer: number;
  move(delta: number): void;
  /** True when the pointed option trusts the folder. */
  trusted(): boolean;
  lines(width: number): string[];
}

/** `path` as agy shows it: under the home directory as `~/…`. */
export function createTrustScreen(path: string): TrustScreen {
  let pointer = 0;
  return {
    get pointer() {
      return pointer;
    },
    move(delta) {
      pointer = movePointer(pointer, delta, TRUST_OPTIONS.length);
    },
    trusted: () => pointer === 0,
    lines: (width) => [
      "Accessing workspace:",
      "",
      path,
      "",
      "Do you trust the contents of this project?",
      "",
      "Antigravity CLI requires permission to read, edit, and execute files here.",
      "",
      ...menuRows(
        TRUST_OPTIONS.map((label) => ({ label })),
        pointer,
        width,
      ),
      "",
      "  ↑/↓ Navigate · enter Confirm",
    ],
  };
}
