/**
 * Writes a capture directory. Everything handed to it is already redacted:
 * the recorder redacts before it writes, so nothing raw ever reaches disk.
 */
import { appendFileSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AgyBridgeError } from "../errors.js";
import { ANSWERS_FILE, SCREENS_DIR, STEPS_DIR, STREAM_DIR, SUMMARIES_DIR } from "./capture-format.js";

export interface CaptureSink {
  readonly dir: string;
  writeJson(relativePath: string, value: unknown): void;
  writeText(relativePath: string, text: string): void;
  appendLine(relativePath: string, value: unknown): void;
}

/**
 * Creates `dir` (its subfolders and an empty `answers.ndjson`) for a new capture. A directory that
 * already holds files is refused: a capture never mixes with another.
 */
export function createCaptureSink(dir: string): CaptureSink {
  try {
    mkdirSync(dir, { recursive: true });
    if (readdirSync(dir).length > 0) {
      throw new AgyBridgeError("invalid_argument", `${dir} is not empty; give --out a new or empty directory so the capture does not mix with other files.`);
    }
    for (const sub of [STEPS_DIR, STREAM_DIR, SUMMARIES_DIR, SCREENS_DIR]) mkdirSync(join(dir, sub));
    // Always there, as docs/capture.md lists it: empty when nothing was answered.
    writeFileSync(join(dir, ANSWERS_FILE), "");
  } catch (error) {
    if (error instanceof AgyBridgeError) throw error;
    throw new AgyBridgeError("invalid_argument", `cannot create the capture directory ${dir}: ${(error as Error).message}`, { cause: error });
  }
  return {
    dir,
    writeJson: (path, value) => writeFileSync(join(dir, path), `${JSON.stringify(value, null, 2)}\n`),
    writeText: (path, text) => writeFileSync(join(dir, path), text),
    appendLine: (path, value) => appendFileSync(join(dir, path), `${JSON.stringify(value)}\n`),
  };
}
