/**
 * Bytes → validated values, for unary bodies and stream frames. Pure: the
 * client feeds it what the socket delivered, and the benchmark measures the
 * same functions on bytes already in memory.
 */
import type { z } from "zod";
import { RpcError } from "../errors.js";
import { asciiJsonText } from "../util/json-text.js";
import { EnvelopeDecoder, FLAG_COMPRESSED, FLAG_END_STREAM } from "../protocol/envelope.js";
import type { Step, StreamUpdate } from "../protocol/wire-schemas.js";

/** Concatenates chunks once; a single chunk is returned as-is. */
export function joinChunks(chunks: readonly Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1 && chunks[0] !== undefined) return chunks[0];
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

/** UTF-8 text of `bytes` without copying them into a Buffer first. */
export function utf8(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
}

/** Parses a JSON body, or throws a `protocol` RpcError naming the method. */
export function parseJsonBody(bytes: Uint8Array, method: string): unknown {
  const ascii = asciiJsonText(bytes);
  if (ascii !== undefined) {
    try {
      return JSON.parse(ascii);
    } catch {
      // Invalid JSON: parsed again below as UTF-8 text, so the error is the one that text gives.
    }
  }
  try {
    return JSON.parse(utf8(bytes));
  } catch (cause) {
    throw new RpcError("protocol", `${method} answered with a body that is not JSON (${bytes.byteLength} bytes)`, {
      method,
      cause,
    });
  }
}

/** Validates a parsed body against a loose schema; unknown fields survive. */
export function validateBody<S extends z.ZodType>(value: unknown, schema: S, method: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue === undefined ? "" : ` at ${issue.path.join(".") || "(root)"}: ${issue.message}`;
  throw new RpcError("protocol", `${method} answered with an unexpected shape${where}`, { method, cause: result.error });
}

/**
 * The `GetCascadeTrajectorySteps` path: bytes → `{steps}`. A missing `steps`
 * is an empty conversation (proto-JSON omits empty lists).
 */
export function decodeStepsResponse(bytes: Uint8Array, method = "GetCascadeTrajectorySteps"): { steps: Step[] } {
  return validateStepsResponse(parseJsonBody(bytes, method), method);
}

/**
 * The validation half of {@link decodeStepsResponse}, on an already parsed
 * body. Only the envelope is checked (an object whose `steps`, when present,
 * is a list): each step is handed through as it came, because one step with a
 * field of the wrong type must not make the whole snapshot unreadable. The
 * tracker checks every step and reports a bad one as a diagnostic; other
 * callers can check a step with {@link isWireStep}.
 */
export function validateStepsResponse(parsed: unknown, method = "GetCascadeTrajectorySteps"): { steps: Step[] } {
  // A plain structural check rather than zod: a zod looseObject copies every
  // step it validates, which on a 10,000-step snapshot costs more than the parse.
  if (!isObject(parsed)) throw shapeError(method, "(root)", "expected an object");
  const steps = parsed["steps"];
  if (steps === undefined || steps === null) return { ...parsed, steps: [] };
  if (!Array.isArray(steps)) throw shapeError(method, "steps", "expected a list");
  return { ...parsed, steps: steps as Step[] };
}

/**
 * True when `value` certainly passes `StepSchema` (wire-schemas.ts). Must never
 * accept what the schema refuses; a test checks the two against generated data.
 */
export function isWireStep(value: unknown): value is Step {
  if (!isObject(value)) return false;
  if (!optionalString(value["type"]) || !optionalString(value["status"])) return false;
  const metadata = value["metadata"];
  if (metadata === undefined) return true;
  if (!isObject(metadata) || !optionalString(metadata["createdAt"]) || !optionalString(metadata["executionId"])) return false;
  const info = metadata["sourceTrajectoryStepInfo"];
  if (info === undefined) return true;
  return (
    isObject(info) &&
    optionalString(info["trajectoryId"]) &&
    optionalString(info["cascadeId"]) &&
    optionalWireInt(info["stepIndex"]) &&
    optionalWireInt(info["metadataIndex"])
  );
}

function optionalString(value: unknown): boolean {
  return value === undefined || typeof value === "string";
}

function optionalWireInt(value: unknown): boolean {
  if (value === undefined) return true;
  if (typeof value === "number") return Number.isSafeInteger(value);
  return typeof value === "string" && /^-?\d+$/.test(value);
}

/** What the server said in a non-2xx unary body: `message` of a JSON error, else the text verbatim. */
export function serverErrorText(bytes: Uint8Array): { connectCode?: string; serverMessage: string } {
  const text = utf8(bytes);
  try {
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed)) {
      const message = typeof parsed["message"] === "string" ? parsed["message"] : undefined;
      const code = typeof parsed["code"] === "string" ? parsed["code"] : undefined;
      if (message !== undefined) return code === undefined ? { serverMessage: message } : { connectCode: code, serverMessage: message };
    }
  } catch {
    // Not JSON: agy's plain-text error bodies are kept verbatim below.
  }
  return { serverMessage: text };
}

export interface StreamDecodeOptions {
  method: string;
  maxFrameBytes?: number;
}

/**
 * Turns a Connect server-stream body into updates. Rules (agy 1.0.10):
 * compressed flag → protocol error (checked before the trailer flag);
 * trailer (`flags & 0x02`) with a truthy `error` → `rpc_error`, any other
 * trailer → clean end, bytes after it ignored; a data frame `{"update":{…}}`
 * yields the inner update, any other object as-is; a body that ends without a
 * trailer → protocol error.
 */
export async function* decodeStreamBody(chunks: AsyncIterable<Uint8Array>, options: StreamDecodeOptions): AsyncGenerator<StreamUpdate, void, undefined> {
  const { method } = options;
  const decoder = new EnvelopeDecoder(options.maxFrameBytes);
  for await (const chunk of chunks) {
    decoder.append(chunk);
    for (;;) {
      let frame;
      try {
        frame = decoder.next();
      } catch (cause) {
        const message = cause instanceof Error ? cause.message : String(cause);
        throw new RpcError("protocol", `${method}: ${message}`, { method, cause });
      }
      if (frame === undefined) break;
      if ((frame.flags & FLAG_COMPRESSED) !== 0) {
        throw new RpcError("protocol", `${method}: the server sent a compressed frame, which agy never does`, { method });
      }
      if ((frame.flags & FLAG_END_STREAM) !== 0) {
        const failure = trailerError(frame.payload, method);
        if (failure !== undefined) throw failure;
        return;
      }
      yield decodeDataFrame(frame.payload, method);
    }
  }
  const where = decoder.atBoundary ? "between frames" : "in the middle of a frame";
  throw new RpcError("protocol", `${method}: the stream was cut ${where}, before its end-stream frame`, { method });
}

/**
 * One data frame's payload → the inner update (or the object itself without
 * the wrapper). Like {@link validateStepsResponse}, only the envelope is
 * checked: the update's own fields, `mainTrajectoryUpdate`, and in its
 * `stepsUpdate` that `steps` and `indices` are lists and `totalLength` an
 * integer. Steps and their indices are handed through for the tracker to judge
 * one by one.
 */
export function decodeDataFrame(payload: Uint8Array, method: string): StreamUpdate {
  const parsed = parseJsonBody(payload, method);
  if (!isObject(parsed)) {
    throw new RpcError("protocol", `${method}: a stream frame held JSON that is not an object`, { method });
  }
  const update = isObject(parsed["update"]) ? parsed["update"] : parsed;
  const problem = updateProblem(update);
  if (problem !== undefined) throw shapeError(method, problem.at, problem.expected);
  return update as StreamUpdate;
}

interface ShapeProblem {
  at: string;
  expected: string;
}

/** The first envelope field of a stream update that is not what `StreamUpdateSchema` says. */
function updateProblem(update: Record<string, unknown>): ShapeProblem | undefined {
  const top =
    fieldProblem(update, "", ["conversationId", "trajectoryId", "status"], optionalString, "a string") ??
    fieldProblem(update, "", ["fullyIdle"], optionalBoolean, "a boolean");
  if (top !== undefined) return top;
  const main = update["mainTrajectoryUpdate"];
  if (main === undefined) return undefined;
  if (!isObject(main)) return { at: "mainTrajectoryUpdate", expected: "expected an object" };
  const inMain =
    fieldProblem(main, "mainTrajectoryUpdate.", ["status"], optionalString, "a string") ??
    fieldProblem(main, "mainTrajectoryUpdate.", ["fullyIdle"], optionalBoolean, "a boolean");
  if (inMain !== undefined) return inMain;
  const stepsUpdate = main["stepsUpdate"];
  if (stepsUpdate === undefined) return undefined;
  const at = "mainTrajectoryUpdate.stepsUpdate";
  if (!isObject(stepsUpdate)) return { at, expected: "expected an object" };
  return (
    fieldProblem(stepsUpdate, `${at}.`, ["steps", "indices"], optionalList, "a list") ??
    fieldProblem(stepsUpdate, `${at}.`, ["totalLength"], optionalWireInt, "an integer")
  );
}

function fieldProblem(
  object: Record<string, unknown>,
  prefix: string,
  keys: readonly string[],
  accepts: (value: unknown) => boolean,
  what: string,
): ShapeProblem | undefined {
  const bad = keys.find((key) => !accepts(object[key]));
  return bad === undefined ? undefined : { at: `${prefix}${bad}`, expected: `expected ${what}` };
}

function optionalBoolean(value: unknown): boolean {
  return value === undefined || typeof value === "boolean";
}

function optionalList(value: unknown): boolean {
  return value === undefined || Array.isArray(value);
}

function shapeError(method: string, at: string, expected: string): RpcError {
  return new RpcError("protocol", `${method} answered with an unexpected shape at ${at}: ${expected}`, { method });
}

function trailerError(payload: Uint8Array, method: string): RpcError | undefined {
  if (payload.byteLength === 0) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(utf8(payload));
  } catch {
    return undefined;
  }
  if (!isObject(parsed) || !parsed["error"]) return undefined;
  const error = parsed["error"];
  const connectCode = isObject(error) && typeof error["code"] === "string" ? error["code"] : undefined;
  const serverMessage = isObject(error) && typeof error["message"] === "string" ? error["message"] : undefined;
  const what = [connectCode, serverMessage].filter((s) => s !== undefined).join(": ") || "no details";
  return new RpcError("rpc_error", `${method}: the server ended the stream with an error (${what})`, {
    method,
    ...(connectCode === undefined ? {} : { connectCode }),
    ...(serverMessage === undefined ? {} : { serverMessage }),
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
