/**
 * The tmux turn-text sanitiser under arbitrary text: controls, escape
 * sequences (including the bracketed-paste end `ESC[201~`), CR/LF mixes,
 * lone surrogates, NUL, very long text. Promises: it returns text with no
 * control character but tab and newline, no CR, no lone surrogate, and
 * sanitising twice changes nothing; it refuses (with `invalid_argument`) only
 * text with NUL or over the size limit.
 */
import { AgyBridgeError } from "../../../src/errors.js";
import { MAX_TURN_BYTES, sanitizeTurnText } from "../../../src/tmux/sanitize-text.js";
import type { Rng } from "../rng.js";
import { invariant, type Campaign } from "../runner.js";

export interface TextInput {
  text: string;
}

const PIECES = [
  "\u001b[201~",
  "\u001b[200~",
  "\u001b",
  "\u0007",
  "\r\n",
  "\r",
  "\n",
  "\t",
  "\u009b",
  "\u007f",
  "\ud800",
  "\udc00",
  "\ud83d\ude00",
  "é",
  "a",
  " ",
  "\u0000",
  "\u2028",
  "\ufeff",
];

function generate(rng: Rng): TextInput {
  const parts: string[] = [];
  for (let n = rng.between(0, 40); n > 0; n--) {
    parts.push(rng.chance(0.5) ? rng.pick(PIECES) : String.fromCharCode(rng.int(rng.chance(0.7) ? 0xa0 : 0x10000)));
  }
  if (rng.chance(0.002)) parts.push("y".repeat(MAX_TURN_BYTES + rng.between(-2, 2)));
  return { text: parts.join("") };
}

const FORBIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/u;
const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function run(input: TextInput): "ok" | "typed_error" {
  let out: string;
  try {
    out = sanitizeTurnText(input.text);
  } catch (error) {
    if (error instanceof AgyBridgeError) {
      const allowed = input.text.includes("\u0000") || Buffer.byteLength(input.text, "utf8") > MAX_TURN_BYTES;
      invariant(allowed && error.code === "invalid_argument", () => `refused text without NUL within the limit: ${error.message}`);
    }
    throw error;
  }
  invariant(!FORBIDDEN.test(out), () => "a control character survived");
  invariant(!LONE.test(out), () => "a lone surrogate survived");
  invariant(sanitizeTurnText(out) === out, () => "sanitising twice changes the text");
  invariant(Buffer.byteLength(out, "utf8") <= MAX_TURN_BYTES, () => "the result is over the limit");
  return "ok";
}

export const sanitizeTextCampaign: Campaign<TextInput> = {
  name: "tmux text sanitiser",
  generate,
  run,
  isTyped: (error) => error instanceof AgyBridgeError && error.code === "invalid_argument",
  show: (input) => (input.text.length > 200 ? { length: input.text.length, start: input.text.slice(0, 200) } : input),
};
