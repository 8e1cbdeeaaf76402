/**
 * Waits for the first line a child process prints: most spawned servers
 * announce where they listen on it.
 */
import { createInterface } from "node:readline";

/**
 * The first line of `stream`. Fails after `ms` with a sentence naming `who`,
 * followed by what `seen()` returns (e.g. the child's stderr so far).
 */
export function firstLine(stream: NodeJS.ReadableStream, who: string, ms: number, seen?: () => string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${who} printed no line within ${ms / 1000} s${seen === undefined ? "" : `; ${seen()}`}`)), ms);
    createInterface({ input: stream }).once("line", (line) => {
      clearTimeout(timer);
      resolve(line);
    });
  });
}
