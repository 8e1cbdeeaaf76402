/**
 * Makes a user turn safe to type as one bracketed paste (spike-notes §6.2
 * step 5): the terminal sees the text between `ESC[200~` and `ESC[201~`, so
 * any ESC inside would end the paste early and let the rest act as keys.
 */
import { AgyBridgeError } from "../errors.js";

/** Largest turn accepted, in UTF-8 bytes after sanitising. */
export const MAX_TURN_BYTES = 1024 * 1024;

// C0 controls except TAB (0x09) and LF (0x0a), DEL, and the C1 controls (0x80–0x9f;
// a terminal may read U+009B as CSI, the same as ESC [).
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/gu;
// A lone surrogate has no UTF-8 form; tmux would receive U+FFFD anyway, so say so up front.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * The text to paste: CRLF and CR become LF; control characters other than
 * tab and newline are removed (ESC, BEL, DEL, C1); a lone surrogate becomes
 * U+FFFD. Throws `invalid_argument`
 * for a NUL byte (text with NUL is binary, not a turn) and for more than
 * {@link MAX_TURN_BYTES}.
 */
export function sanitizeTurnText(text: string): string {
  if (text.includes("\u0000")) {
    throw new AgyBridgeError("invalid_argument", "The turn text contains a NUL byte; send text, not binary data.");
  }
  const clean = text.replace(/\r\n?/g, "\n").replace(CONTROLS, "").replace(LONE_SURROGATE, "\ufffd");
  const bytes = Buffer.byteLength(clean, "utf8");
  if (bytes > MAX_TURN_BYTES) {
    throw new AgyBridgeError("invalid_argument", `The turn text is ${bytes} bytes, over the 1 MiB limit; attach a file and refer to it instead.`);
  }
  return clean;
}
