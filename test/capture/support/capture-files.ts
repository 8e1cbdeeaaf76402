/**
 * Reading capture directories back in tests: every file's text, the events
 * `agy-bridge map DIR` prints, the screens' models, and an offline redaction
 * of a raw capture (the same redactor calls the recorder makes, in the same
 * order: JSON first, so screens know the command words).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Redactor } from "../../../src/capture/redaction/redactor.js";
import { readScreen } from "../../../src/tmux/screen-model.js";
import { runMain } from "../../support/cli-io.js";
import { screenShape } from "./screen-shape.js";

/** Every file under `dir`, relative path → text. */
export function filesOf(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out.set(path.slice(dir.length + 1), readFileSync(path, "utf8"));
  }
  return out;
}

export interface MappedEvent {
  type: string;
  conversationId: string;
  stepIndex?: number;
  outcome?: string;
  [key: string]: unknown;
}

/** `agy-bridge map DIR`, parsed; fails the test on a non-zero exit. */
export async function mapDir(dir: string): Promise<MappedEvent[]> {
  const result = await runMain(["map", dir]);
  if (result.code !== 0) throw new Error(`agy-bridge map ${dir} exited ${result.code}: ${result.stderr}`);
  return result.stdout
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as MappedEvent);
}

/** What a conversation did, without ids: each event's type, and the step it is about. */
export function eventKinds(events: readonly MappedEvent[]): string[] {
  return events.map((e) => (e.stepIndex === undefined ? e.type : `${e.type}@${e.stepIndex}`));
}

/** The screens in time order: their file's state, and the shape their text reads to. */
export function screensOf(dir: string): Array<{ name: string; state: string; shape: unknown }> {
  const screens = join(dir, "screens");
  return readdirSync(screens)
    .sort()
    .map((name) => {
      const model = readScreen(readFileSync(join(screens, name), "utf8"));
      return { name, state: /-([a-z]+)\.txt$/.exec(name)?.[1] ?? "", shape: screenShape(model), model: model.state };
    })
    .map(({ name, state, shape }) => ({ name, state, shape }));
}

/** Writes a redacted copy of the raw capture `from` into `to`. */
export function redactCopy(from: string, to: string, redactor: Redactor): void {
  const files = filesOf(from);
  const ordered = [...files.keys()].sort((a, b) => Number(a.startsWith("screens/")) - Number(b.startsWith("screens/")) || a.localeCompare(b));
  for (const path of ordered) {
    const text = files.get(path) as string;
    let out: string;
    if (path.startsWith("screens/")) out = redactor.screen(text);
    else if (path.endsWith(".ndjson"))
      out = text
        .split("\n")
        .map((line) => (line === "" ? line : JSON.stringify(redactor.json(JSON.parse(line)))))
        .join("\n");
    else if (path === "meta.json") {
      const meta = JSON.parse(text) as { conversationId: string };
      out = JSON.stringify({ ...meta, conversationId: redactor.id(meta.conversationId) });
    } else out = JSON.stringify(redactor.json(JSON.parse(text)));
    mkdirSync(join(to, path, ".."), { recursive: true });
    writeFileSync(join(to, path), out);
  }
}
