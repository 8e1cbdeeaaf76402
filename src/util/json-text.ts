/**
 * JSON text that parses faster than the plain UTF-8 decoding of the same
 * bytes, for large, nearly all-ASCII answers and files (agy's snapshots).
 */
import { isAscii, isUtf8 } from "node:buffer";

/** Bytes per block when looking for non-ASCII bytes: a scattered emoji costs a block's scan. */
const BLOCK_BYTES = 2048;

/**
 * JSON text for `JSON.parse` that parses to the same value as `utf8(bytes)`,
 * or undefined when that cannot be had cheaply. agy's answers are nearly all
 * ASCII, but a single emoji turns the UTF-8 text into a two-byte string twice
 * the size, decoded and parsed on slow paths. Valid UTF-8 whose non-ASCII
 * bytes are sparse becomes ASCII instead: each non-ASCII character is written
 * as a JSON `\uXXXX` escape, which `JSON.parse` reads as the character itself
 * inside a string (outside one both texts are invalid JSON). A non-ASCII run
 * right after a backslash would turn an invalid escape into a valid one, so
 * such text takes the plain path.
 */
export function asciiJsonText(bytes: Uint8Array): string | undefined {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (isAscii(buffer)) return buffer.toString("latin1");
  if (!isUtf8(buffer)) return undefined;
  const length = buffer.byteLength;
  const pieces: string[] = [];
  let copied = 0;
  let blocksWithNonAscii = 0;
  for (let block = 0; block < length; block += BLOCK_BYTES) {
    const end = Math.min(length, block + BLOCK_BYTES);
    if (end <= copied || isAscii(buffer.subarray(block, end))) continue;
    // Dense non-ASCII text (say, a conversation in Japanese) is cheaper decoded as UTF-8.
    if (++blocksWithNonAscii * 16 > length / BLOCK_BYTES + 16) return undefined;
    for (let at = Math.max(block, copied); at < end; at++) {
      if ((buffer[at] ?? 0) < 0x80) continue;
      if (at > 0 && buffer[at - 1] === 0x5c) return undefined;
      let runEnd = at + 1;
      while (runEnd < length && (buffer[runEnd] ?? 0) >= 0x80) runEnd++;
      pieces.push(buffer.toString("latin1", copied, at), jsonEscapes(buffer.toString("utf8", at, runEnd)));
      copied = runEnd;
      at = runEnd - 1;
    }
  }
  pieces.push(buffer.toString("latin1", copied, length));
  return pieces.join("");
}

/** `\uXXXX` for every UTF-16 code unit of `text`. */
function jsonEscapes(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) out += `\\u${text.charCodeAt(i).toString(16).padStart(4, "0")}`;
  return out;
}
