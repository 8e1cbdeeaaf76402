/**
 * A captured screen (`capture-pane` text), redacted row by row without
 * changing any row's length: first every secret pattern (`scrubText`), then
 * — unless text is kept — every word that is not agy's screen furniture;
 * with text kept but commands not, the words of the command lines and
 * outputs seen on RPC. Same lengths keep the layout, so the redacted screen
 * reads to the same screen model (state, composer, mode, model label, the
 * prompt's kind, options and pointer) with its free text masked.
 */
import { scrubText, type ScrubContext } from "./secret-patterns.js";
import { isFurnitureWord } from "./screen-words.js";
import { maskText } from "./text-mask.js";

export interface ScreenRedaction {
  keepText: boolean;
  keepCommands: boolean;
  /** Words of command lines and outputs seen so far (masked on screen unless commands are kept). */
  commandWords: ReadonlySet<string>;
}

const WORD = /[\p{L}\p{N}_]+/gu;

export function redactScreen(screen: string, ctx: ScrubContext, options: ScreenRedaction): string {
  const scrubbed = scrubText(screen, ctx);
  if (!options.keepText) return scrubbed.replace(WORD, (word) => (isFurnitureWord(word) ? word : maskText(word)));
  if (options.keepCommands) return scrubbed;
  return maskWords(scrubbed, options.commandWords);
}

/** `text` with every word in `words` masked, except agy's screen furniture (`Run`, `Yes`). */
export function maskWords(text: string, words: ReadonlySet<string>): string {
  if (words.size === 0) return text;
  return text.replace(WORD, (word) => (words.has(word) && !isFurnitureWord(word) ? maskText(word) : word));
}

/** The words of a command line or output, as {@link redactScreen} matches them. */
export function wordsOf(text: string): string[] {
  return text.match(WORD) ?? [];
}
