/**
 * The keys that close agy's own numbered prompt after the answer went over
 * RPC (spike-notes §5.4: the TUI keeps its prompt open otherwise, and the
 * next typed turn lands in it). Key lists from spike-notes §5.6.
 */
import { AgyBridgeError } from "../errors.js";
import type { PromptKeys } from "./types.js";

/** Permission options are numbered 1 = Yes (once) … 4 = No (spike-notes §5.6). */
const PERMISSION_ALLOW = "1";
const PERMISSION_DENY = "4";

/**
 * The tmux key names for `keys`, sent in one `send-keys` call without `-l`
 * so the digit and Enter cannot be split apart. Option ids must be digits:
 * they are sent as key names, and a name like `C-c` would be a different key.
 */
export function promptKeyNames(keys: PromptKeys): string[] {
  switch (keys.kind) {
    case "permission":
      return [keys.allow ? PERMISSION_ALLOW : PERMISSION_DENY, "Enter"];
    case "question": {
      // Only the first question's options can be typed; a write-in alone cannot (spike-notes §5.6).
      if (keys.optionIds.length === 0) return ["Escape"];
      for (const id of keys.optionIds) {
        if (!/^[0-9]{1,3}$/.test(id)) {
          throw new AgyBridgeError("invalid_argument", `Question option ids are typed as digits, and ${JSON.stringify(id.slice(0, 20))} is not one; pass the option's number.`);
        }
      }
      return [...keys.optionIds, "Enter"];
    }
    case "dismiss":
      return ["Escape"];
  }
}
