/**
 * `agy-bridge map`: agy steps or stream frames in, mapper events out as NDJSON.
 * The whole input is validated before anything is written, so bad input
 * leaves stdout empty.
 */
import { readFile } from "node:fs/promises";
import type { z } from "zod";
import { createTrajectoryTracker, type MapperEvent } from "../mapper/index.js";
import { StepSchema, StreamUpdateSchema, type Step, type StreamUpdate } from "../protocol/wire-schemas.js";
import type { CliIo, Command } from "./command.js";

const HELP = `Usage: agy-bridge map [FILE|-] [--conversation ID]

Maps agy trajectory steps to agy-bridge events (docs/events.md), one JSON
event per line on stdout, in order.

Input (FILE, or stdin when FILE is "-" or absent), one of:
  - one step object
  - an array of step objects (indices come from the steps' metadata)
  - a GetCascadeTrajectorySteps response {"steps":[...]} (indices = positions)
  - NDJSON of StreamAgentStateUpdates frames, one {"update":{...}} per line

Options:
  --conversation ID  the conversation id (default: the first
                     sourceTrajectoryStepInfo.cascadeId or update.conversationId)
  -h, --help         show this help

Exit status: 0 on success; 1 when the input cannot be read or is not one of
the forms above (the reason, naming the line or position, goes to stderr and
nothing is written to stdout); 2 on a usage error.
`;

type Input =
  | { kind: "steps"; steps: Step[] }
  | { kind: "snapshot"; steps: Step[] }
  | { kind: "frames"; updates: StreamUpdate[] };

class InputError extends Error {}

function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return "invalid";
  const path = issue.path.length === 0 ? "" : `${issue.path.join(".")}: `;
  return `${path}${issue.message}`;
}

function step(value: unknown, where: string): Step {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InputError(`${where}: expected a step object`);
  }
  const parsed = StepSchema.safeParse(value);
  if (!parsed.success) throw new InputError(`${where}: not a step (${describeIssue(parsed.error)})`);
  return parsed.data;
}

function update(value: unknown, where: string): StreamUpdate {
  const parsed = StreamUpdateSchema.safeParse(value);
  if (typeof value !== "object" || value === null || Array.isArray(value) || !parsed.success) {
    const why = parsed.success ? "expected an object" : describeIssue(parsed.error);
    throw new InputError(`${where}: "update" is not a stream update (${why})`);
  }
  return parsed.data;
}

function fromDocument(doc: unknown): Input {
  if (Array.isArray(doc)) return { kind: "steps", steps: doc.map((s, i) => step(s, `position ${i}`)) };
  if (typeof doc === "object" && doc !== null) {
    const record = doc as Record<string, unknown>;
    if (Array.isArray(record["steps"])) {
      return { kind: "snapshot", steps: record["steps"].map((s, i) => step(s, `steps[${i}]`)) };
    }
    if ("update" in record) return { kind: "frames", updates: [update(record["update"], "the frame")] };
    if (typeof record["type"] === "string") return { kind: "steps", steps: [step(doc, "the step")] };
  }
  throw new InputError('the input is not a step, an array of steps, a {"steps":[...]} response or stream frames');
}

function fromLines(text: string): Input {
  const updates: StreamUpdate[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new InputError(`line ${i + 1}: invalid JSON (${(error as Error).message})`);
    }
    if (typeof value !== "object" || value === null || !("update" in value)) {
      throw new InputError(`line ${i + 1}: expected a stream frame {"update":{...}}`);
    }
    updates.push(update((value as { update: unknown }).update, `line ${i + 1}`));
  });
  return { kind: "frames", updates };
}

/** Parses the whole input; throws InputError with a one-line reason. */
function parseMapInput(text: string): Input {
  if (text.trim() === "") throw new InputError("the input is empty");
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    const lines = text.split("\n").filter((l) => l.trim() !== "");
    if (lines.length > 1) return fromLines(text);
    throw new InputError(`invalid JSON (${(error as Error).message})`);
  }
  return fromDocument(doc);
}

function cascadeIdOf(s: Step): string | undefined {
  const id = s.metadata?.sourceTrajectoryStepInfo?.cascadeId;
  return id === undefined || id === "" ? undefined : id;
}

function defaultConversation(input: Input): string | undefined {
  if (input.kind !== "frames") return input.steps.map(cascadeIdOf).find((id) => id !== undefined);
  for (const u of input.updates) {
    if (u.conversationId) return u.conversationId;
    const found = (u.mainTrajectoryUpdate?.stepsUpdate?.steps ?? []).map(cascadeIdOf).find((id) => id !== undefined);
    if (found !== undefined) return found;
  }
  return undefined;
}

function mapInput(input: Input, conversationId: string): MapperEvent[] {
  const tracker = createTrajectoryTracker({ conversationId });
  if (input.kind === "steps") return tracker.applySteps(input.steps);
  if (input.kind === "snapshot") return tracker.applySnapshot({ steps: input.steps });
  return input.updates.flatMap((u) => tracker.applyStreamUpdate(u));
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString("utf8");
}

function parseArgs(argv: readonly string[]): { file?: string; conversation?: string } | string {
  let file: string | undefined;
  let conversation: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--conversation") {
      const value = argv[++i];
      if (value === undefined || value === "") return "--conversation needs an id";
      conversation = value;
    } else if (arg.startsWith("--conversation=")) {
      conversation = arg.slice("--conversation=".length);
    } else if (arg.startsWith("-") && arg !== "-") {
      return `unknown option ${arg}`;
    } else if (file === undefined) {
      file = arg;
    } else {
      return `unexpected argument ${arg} (only one input file)`;
    }
  }
  return { ...(file === undefined ? {} : { file }), ...(conversation === undefined ? {} : { conversation }) };
}

export const mapCommand: Command = {
  name: "map",
  summary: "map agy steps or stream frames to agy-bridge events (NDJSON)",
  help: HELP,
  async run(io: CliIo): Promise<number> {
    const args = parseArgs(io.argv);
    if (typeof args === "string") {
      io.stderr.write(`agy-bridge map: ${args}; run \`agy-bridge map --help\`\n`);
      return 2;
    }
    let text: string;
    try {
      text = args.file === undefined || args.file === "-" ? await readAll(io.stdin) : await readFile(args.file, "utf8");
    } catch (error) {
      io.stderr.write(`agy-bridge map: cannot read ${args.file ?? "stdin"}: ${(error as Error).message}\n`);
      return 1;
    }
    let input: Input;
    try {
      input = parseMapInput(text);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      io.stderr.write(`agy-bridge map: ${error.message}\n`);
      return 1;
    }
    const conversationId = args.conversation ?? defaultConversation(input);
    if (conversationId === undefined) {
      io.stderr.write("agy-bridge map: the input names no conversation; pass --conversation ID\n");
      return 1;
    }
    const events = mapInput(input, conversationId);
    if (events.length > 0) io.stdout.write(`${events.map((e) => JSON.stringify(e)).join("\n")}\n`);
    return 0;
  },
};
