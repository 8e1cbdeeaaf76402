/**
 * `agy-bridge map`: agy steps or stream frames in, mapper events out as NDJSON.
 * The forms it reads and how they are mapped are the mapper's
 * (`mapper/map-input.ts`); this file reads the bytes and writes the lines.
 *
 * The input's shape (steps, a snapshot, stream frames) is checked before
 * anything is written, so input that is none of them leaves stdout empty.
 * What is inside a step is the tracker's to judge: it checks each step as it
 * maps it and reports a bad one as a `diagnostic` event, so one bad step
 * never costs the others. The events are encoded into buffers of whole
 * lines and written waiting for stdout to drain. A snapshot or an array of
 * steps is parsed a step at a time as it is mapped, and its lines are written
 * once every step has parsed; other input is parsed whole and its lines are
 * written as they are mapped.
 */
import { readFileSync, statSync } from "node:fs";
import { jsonElements, type JsonElements } from "../util/json-elements.js";
import { asciiJsonText } from "../util/json-text.js";
import type { MapperEvent } from "../mapper/events.js";
import { MAP_PAGE_STEPS, type MapInput, MapInputError, mapInputConversation, mapInputEvents, parseMapInput, stepConversation } from "../mapper/map-input.js";
// Not the mapper's barrel: it loads zod (the event schemas), which alone takes
// longer to load than mapping thousands of steps.
import { createTrajectoryTracker } from "../mapper/trajectory-tracker.js";
import { UsageError } from "./args.js";
import { defineCommand, type CliIo } from "./command.js";

const HELP = `Usage: agy-bridge map [FILE|-] [--conversation ID]

Maps agy trajectory steps to agy-bridge events (docs/events.md), one JSON
event per line on stdout, in order.

Input (FILE, or stdin when FILE is "-" or absent), one of:
  - one step object
  - an array of step objects (indices come from the steps' metadata)
  - a GetCascadeTrajectorySteps response {"steps":[...]} (indices = positions)
  - NDJSON of StreamAgentStateUpdates frames, one {"update":{...}} per line
  - a capture directory as FILE (\`agy-bridge capture\`, docs/capture.md): its
    snapshots and stream frames in the order they were recorded

Options:
  --conversation ID  the conversation id (default: the first
                     sourceTrajectoryStepInfo.cascadeId or update.conversationId)
  -h, --help         show this help

A step that cannot be mapped becomes a "diagnostic" event; the others are
mapped. Exit status: 0 on success; 1 when the input cannot be read or is not
one of the forms above (the reason, naming the line or position, goes to
stderr and nothing is written to stdout); 2 on a usage error.
`;

/** Output is written in buffers of this many bytes, each ending at a line's end. */
const WRITE_BYTES = 1 << 16;

/** `agy-bridge map`. */
export const mapCommand = defineCommand({
  name: "map",
  summary: "map agy steps or stream frames to agy-bridge events (NDJSON)",
  help: HELP,
  options: { conversation: { type: "string" } },
  positionals: { max: 1, name: "FILE" },
  async run(io, { values, positionals }) {
    if (values.conversation === "") throw new UsageError("--conversation needs a non-empty value; run `agy-bridge map --help`");
    const read = await readInput(io, positionals[0]);
    if (read === undefined) return 1;
    let chunks: Iterable<Buffer | string> | undefined;
    let input: MapInput | undefined;
    if (read.kind === "elements") {
      const mapped = mapElements(read, values.conversation);
      if (mapped === NO_CONVERSATION) return noConversation(io);
      if (mapped !== undefined) chunks = mapped;
      // An element that does not parse: the whole text is read again, so the reason is the one the whole input gives.
      else input = parseBytes(io, read.bytes);
    } else input = read;
    if (chunks === undefined) {
      if (input === undefined) return 1;
      const conversationId = values.conversation ?? mapInputConversation(input);
      if (conversationId === undefined) return noConversation(io);
      chunks = encodeLines(mapInputEvents(input, createTrajectoryTracker({ conversationId })));
    }
    const failure: NodeJS.ErrnoException | undefined = await writeChunks(io.stdout, chunks);
    // The reader went away (`map … | head`): nothing is wrong with the input, and nobody is left to tell.
    if (failure === undefined || failure.code === "EPIPE") return 0;
    io.stderr.write(`agy-bridge map: cannot write the events: ${failure.message}\n`);
    return 1;
  },
});

function noConversation(io: CliIo): number {
  io.stderr.write("agy-bridge map: the input names no conversation; pass --conversation ID\n");
  return 1;
}

/** A snapshot or array of step objects, not yet parsed: each step is parsed as it is mapped. */
interface Elements extends JsonElements {
  kind: "elements";
  bytes: Buffer;
}

const NO_CONVERSATION = Symbol("no conversation");

/** An element of the input that is not valid JSON. */
class ElementError extends Error {}

/**
 * Maps a snapshot or array step by step, each parsed from its own bytes just
 * before its page is mapped, so no more than a page of steps is alive at once.
 * The lines are kept, not written, until every step has parsed: input that is
 * not JSON must leave stdout empty. Undefined when a step does not parse (the
 * caller then reads the whole text, to name the reason as before).
 */
function mapElements(input: Elements, conversation: string | undefined): Array<Buffer | string> | typeof NO_CONVERSATION | undefined {
  const { bytes, bounds, wrapped } = input;
  const count = bounds.length / 2;
  const element = (index: number): unknown => {
    try {
      return JSON.parse(bytes.toString("utf8", bounds[2 * index], bounds[2 * index + 1]));
    } catch {
      throw new ElementError();
    }
  };
  try {
    let conversationId = conversation;
    for (let index = 0; index < count && conversationId === undefined; index++) conversationId = stepConversation(element(index));
    if (conversationId === undefined) return NO_CONVERSATION;
    const tracker = createTrajectoryTracker({ conversationId });
    function* pages(): Generator<MapperEvent[]> {
      for (let at = 0; at < count; at += MAP_PAGE_STEPS) {
        const page: unknown[] = [];
        for (let index = at; index < Math.min(count, at + MAP_PAGE_STEPS); index++) page.push(element(index));
        yield wrapped ? tracker.applySnapshot({ steps: page, stepOffset: at }) : tracker.applySteps(page);
      }
    }
    return [...encodeLines(pages())];
  } catch (error) {
    if (error instanceof ElementError) return undefined;
    throw error;
  }
}

/**
 * Reads FILE (stdin for `-` or none); on failure writes the reason to stderr
 * and resolves undefined. A snapshot or array of step objects is left as
 * bytes, its steps' places found ({@link jsonElements}); anything else is
 * parsed, and its text dropped on return: only the parsed document stays
 * alive while the steps are mapped.
 */
async function readInput(io: CliIo, file: string | undefined): Promise<MapInput | Elements | undefined> {
  const fromStdin = file === undefined || file === "-";
  if (!fromStdin && isDirectory(file)) return await readCapture(io, file);
  let bytes: Buffer;
  try {
    // Synchronous on purpose: nothing else runs meanwhile.
    bytes = fromStdin ? await readAll(io.stdin) : readFileSync(file);
  } catch (error) {
    io.stderr.write(`agy-bridge map: cannot read ${fromStdin ? "stdin" : file}: ${(error as Error).message}\n`);
    return undefined;
  }
  const elements = jsonElements(bytes);
  if (elements !== undefined) return { kind: "elements", bytes, ...elements };
  return parseBytes(io, bytes);
}

/** The whole input parsed; on failure the reason goes to stderr and the answer is undefined. */
function parseBytes(io: CliIo, bytes: Buffer): MapInput | undefined {
  // Nearly-ASCII input parses faster as escaped ASCII text; any failure is
  // read again from the UTF-8 text, so messages name the input as written.
  const fast = asciiJsonText(bytes);
  if (fast !== undefined) {
    try {
      return parseMapInput(fast);
    } catch (error) {
      if (!(error instanceof MapInputError)) throw error;
    }
  }
  try {
    return parseMapInput(bytes.toString("utf8"));
  } catch (error) {
    if (!(error instanceof MapInputError)) throw error;
    io.stderr.write(`agy-bridge map: ${error.message}\n`);
    return undefined;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * A capture directory, as one timeline of snapshots and frames; the reason on
 * stderr when it is none. The capture reader loads only for a directory.
 */
async function readCapture(io: CliIo, dir: string): Promise<MapInput | undefined> {
  const { isCaptureDir, readCaptureDir } = await import("../capture/capture-reader.js");
  if (!isCaptureDir(dir)) {
    io.stderr.write(`agy-bridge map: ${dir} is a directory but not a capture (no meta.json, steps/ or stream/); see docs/capture.md\n`);
    return undefined;
  }
  try {
    const capture = readCaptureDir(dir);
    const id = capture.meta.conversationId;
    return { kind: "capture", items: capture.items, conversationId: typeof id === "string" && id !== "" ? id : undefined };
  } catch (error) {
    io.stderr.write(`agy-bridge map: ${(error as Error).message}\n`);
    return undefined;
  }
}

/**
 * One JSON line per event, encoded straight into buffers of
 * {@link WRITE_BYTES} (each line is UTF-8-encoded once, where joining the
 * lines into one string first would copy and re-encode them). A buffer always
 * ends at a line's end, so no character is split between writes; a line
 * longer than a buffer comes on its own, as a string.
 */
function* encodeLines(batches: Iterable<MapperEvent[]>): Generator<Buffer | string> {
  // A fresh buffer after each one handed out: the stream may still hold the last one.
  let buffer = Buffer.allocUnsafe(WRITE_BYTES);
  let used = 0;
  for (const events of batches) {
    for (const event of events) {
      const line = JSON.stringify(event);
      // At most 3 UTF-8 bytes per UTF-16 unit, and the newline.
      if (used + line.length * 3 + 1 > WRITE_BYTES) {
        if (used > 0) {
          yield buffer.subarray(0, used);
          buffer = Buffer.allocUnsafe(WRITE_BYTES);
          used = 0;
        }
        if (line.length * 3 + 1 > WRITE_BYTES) {
          yield `${line}\n`;
          continue;
        }
      }
      used += buffer.write(line, used);
      buffer[used++] = 0x0a;
    }
  }
  if (used > 0) yield buffer.subarray(0, used);
}

/**
 * Writes the chunks in order, waiting whenever `out` asks to. Resolves with
 * the error when `out` failed (the rest is then not written), else undefined.
 */
async function writeChunks(out: NodeJS.WritableStream, chunks: Iterable<Buffer | string>): Promise<Error | undefined> {
  let failure: Error | undefined;
  const fail = (error: Error): void => {
    failure ??= error;
  };
  out.on("error", fail);
  try {
    for (const chunk of chunks) {
      if (!out.write(chunk)) await drained(out);
      if (failure !== undefined) break;
    }
  } catch (error) {
    fail(error as Error);
  }
  // After a failure the stream may still report writes already queued: stay listening, or they would crash the process.
  if (failure === undefined) out.off("error", fail);
  return failure;
}

function drained(out: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (error?: Error): void => {
      out.off("drain", onDrain);
      out.off("close", onDrain);
      out.off("error", done);
      if (error === undefined) resolve();
      else reject(error);
    };
    const onDrain = (): void => done();
    out.once("drain", onDrain);
    out.once("close", onDrain);
    out.once("error", done);
  });
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks);
}
