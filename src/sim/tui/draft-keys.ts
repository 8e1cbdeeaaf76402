/** The editing keys of agy's input box, applied to a {@link Draft} (spike-notes §6.2 step 3). */
import type { Draft } from "./draft.js";
import type { TuiKey } from "./key-parser.js";

/** Applies an editing key; returns false for keys that do not edit (Enter, Escape, arrows up/down, …). */
export function editDraft(draft: Draft, key: TuiKey): boolean {
  switch (key.type) {
    case "text":
      draft.insert(key.text);
      return true;
    case "paste":
      draft.paste(key.text);
      return true;
    case "backspace":
      draft.backspace();
      return true;
    case "line-start":
      draft.lineStart();
      return true;
    case "line-end":
      draft.lineEnd();
      return true;
    case "kill-to-end":
      draft.killToEnd();
      return true;
    case "kill-line":
      draft.killLine();
      return true;
    case "left":
      draft.left();
      return true;
    case "right":
      draft.right();
      return true;
    default:
      return false;
  }
}
