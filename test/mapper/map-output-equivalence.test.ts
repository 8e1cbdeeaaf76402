/**
 * `agy-bridge map` prints exactly what the tracker's events are, whatever its
 * output path does for speed (lines encoded straight into buffers, the
 * snapshot fed in pages): its stdout bytes are compared with a straightforward
 * reference — a fresh tracker given the whole input in one call, each event
 * `JSON.stringify`ed and joined with newlines — on every step fixture and
 * capture, on frames, and on 10,000-step files with multi-byte text, lines
 * longer than a write buffer and lines that end at a buffer's edge. Every
 * write must also end at a line's end, so no character is split between two.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { createTrajectoryTracker } from "../../src/mapper/trajectory-tracker.js";
import type { MapperEvent } from "../../src/mapper/events.js";
import type { StreamUpdate } from "../../src/protocol/wire-schemas.js";
import { CAPTURES, CID, FIXTURES, captureNames, fixtureNames } from "./load.js";

const dir = mkdtempSync(join(tmpdir(), "agy-bridge-map-equivalence-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `map FILE --conversation CID` in-process; its stdout as the chunks written. */
async function mapChunks(file: string): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  const stdout = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk));
      done();
    },
  });
  let stderr = "";
  const err = new Writable({
    write(chunk, _encoding, done) {
      stderr += String(chunk);
      done();
    },
  });
  const stdin = new PassThrough();
  stdin.end();
  const code = await main({ argv: ["map", file, "--conversation", CID], env: {}, stdin, stdout, stderr: err, signal: new AbortController().signal });
  expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  return chunks;
}

const reference = (events: readonly MapperEvent[]): Buffer => Buffer.from(events.map((e) => `${JSON.stringify(e)}\n`).join(""), "utf8");

/** The reference events of a file in one of map's forms, from one tracker call per document or frame. */
function referenceEvents(text: string): MapperEvent[] {
  const tracker = createTrajectoryTracker({ conversationId: CID });
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return text
      .split("\n")
      .filter((line) => line.trim() !== "")
      .flatMap((line) => tracker.applyStreamUpdate((JSON.parse(line) as { update: StreamUpdate }).update));
  }
  if (Array.isArray(doc)) return tracker.applySteps(doc);
  const object = doc as Record<string, unknown>;
  if (Array.isArray(object["steps"])) return tracker.applySnapshot({ steps: object["steps"] });
  if ("update" in object) return tracker.applyStreamUpdate(object["update"] as StreamUpdate);
  return tracker.applySteps([doc]);
}

async function expectSameBytes(file: string): Promise<number> {
  const chunks = await mapChunks(file);
  const expected = reference(referenceEvents(readFileSync(file, "utf8")));
  const printed = Buffer.concat(chunks);
  expect(printed.equals(expected), `${file}: map printed ${printed.length} bytes, the reference ${expected.length}`).toBe(true);
  for (const chunk of chunks) expect(chunk.at(-1), "every write ends at a line's end").toBe(0x0a);
  return chunks.length;
}

/** The steps of every single-step fixture and capture, with their sources' text. */
const singleSteps = (): Record<string, unknown>[] => [
  ...fixtureNames()
    .filter((n) => !n.startsWith("snapshot_"))
    .map((n) => JSON.parse(readFileSync(join(FIXTURES, n), "utf8")) as Record<string, unknown>),
  ...captureNames().map((n) => JSON.parse(readFileSync(join(CAPTURES, n), "utf8")) as Record<string, unknown>),
];

/**
 * Step `i` of a 10,000-step file: the fixtures in turn, each at its own index;
 * the `n`th command output made multi-byte, of every length, or longer than a
 * 64 KiB write buffer in UTF-8 (though not in UTF-16 units).
 */
function syntheticStep(source: Record<string, unknown>, i: number, counter: { n: number }): Record<string, unknown> {
  const step = structuredClone(source) as { metadata?: { sourceTrajectoryStepInfo?: Record<string, unknown> }; [key: string]: unknown };
  const info = step.metadata?.sourceTrajectoryStepInfo;
  if (info !== undefined) info["stepIndex"] = i;
  const body = step["runCommand"] as { combinedOutput?: { full?: string } } | undefined;
  if (body?.combinedOutput !== undefined) {
    const n = counter.n++;
    if (n % 40 === 0) body.combinedOutput.full = `${"é".repeat(40_000)}${"x".repeat(n % 5)}`;
    else if (n % 3 === 0) body.combinedOutput.full = `📁 src\n日本語のファイル ${i}\n${"ü".repeat(n % 3000)}`;
    // Line lengths that vary step by step, so line ends fall at every offset of a buffer.
    else body.combinedOutput.full = "y".repeat((n * 37) % 4096);
  }
  return step;
}

/** `count` synthetic steps, taking the sources in turn (`stride` apart). */
function syntheticSteps(count: number, stride: number): Record<string, unknown>[] {
  const sources = singleSteps();
  const counter = { n: 0 };
  return Array.from({ length: count }, (_, i) => syntheticStep(sources[(i * stride) % sources.length] as Record<string, unknown>, i, counter));
}

describe("agy-bridge map prints the tracker's events byte for byte", () => {
  it("on every step fixture and capture, and on the snapshot and frame fixtures", async () => {
    const files = [
      ...fixtureNames().map((n) => join(FIXTURES, n)),
      ...fixtureNames(".ndjson").map((n) => join(FIXTURES, n)),
      ...captureNames().map((n) => join(CAPTURES, n)),
    ];
    expect(files.length).toBeGreaterThan(40);
    for (const file of files) await expectSameBytes(file);
  });

  it("on a 10,000-step snapshot with multi-byte text and lines longer than a write buffer", async () => {
    const steps = syntheticSteps(10_000, 1);
    const file = join(dir, "synthetic-10000.json");
    writeFileSync(file, JSON.stringify({ steps }));
    const writes = await expectSameBytes(file);
    expect(writes, "written in many buffers, not one string").toBeGreaterThan(10);
  });

  it("on a 10,000-step array of steps (indices from their metadata) and on frames of 3 steps", async () => {
    const steps = syntheticSteps(10_000, 5);
    const array = join(dir, "array-10000.json");
    writeFileSync(array, JSON.stringify(steps));
    await expectSameBytes(array);
    const frames = join(dir, "frames.ndjson");
    const lines: string[] = [];
    for (let at = 0; at < 3000; at += 3) {
      lines.push(
        JSON.stringify({
          update: { conversationId: CID, mainTrajectoryUpdate: { stepsUpdate: { indices: [at, at + 1, at + 2], steps: steps.slice(at, at + 3) } } },
        }),
      );
    }
    writeFileSync(frames, `${lines.join("\n")}\n`);
    await expectSameBytes(frames);
  });
});
