/**
 * The response decoders under damaged answers: `decodeStepsResponse` on a
 * snapshot body, `decodeDataFrame` on one frame's payload, `decodeStreamBody`
 * on a whole stream in random chunks. Promises: every failure is an
 * `RpcError`; a result is JSON-serialisable and has the documented shape; a
 * stream decodes to the same updates (and the same failure) however it is
 * chunked.
 */
import { RpcError } from "../../../src/errors.js";
import { encodeJsonEnvelope, FLAG_DATA } from "../../../src/protocol/envelope.js";
import { decodeDataFrame, decodeStepsResponse, decodeStreamBody } from "../../../src/rpc/response-decoding.js";
import { chunk, mutateBytes, mutateJson } from "../mutate.js";
import type { Rng } from "../rng.js";
import { invariant, type Campaign } from "../runner.js";
import { capturedSteps, sampleStream, sampleUpdates } from "./wire-samples.js";

export interface DecoderInput {
  kind: "steps" | "frame" | "stream";
  bytes: Uint8Array;
  /** Chunk sizes, for the stream. */
  sizes: number[];
}

const encoder = new TextEncoder();

/** JSON bytes of `value`, or of `fallback` when `value` nests too deep for JSON.stringify. */
function jsonBytes(value: unknown, fallback: unknown): Uint8Array {
  try {
    return encoder.encode(JSON.stringify(value));
  } catch {
    return encoder.encode(JSON.stringify(fallback));
  }
}
const METHOD = "FuzzMethod";

function generate(rng: Rng): DecoderInput {
  const kind = rng.pick(["steps", "frame", "stream"] as const);
  const damage = (value: unknown) => (rng.chance(0.7) ? mutateJson(rng, value) : value);
  let bytes: Uint8Array;
  if (kind === "steps") {
    const steps = Array.from({ length: rng.between(0, 4) }, () => rng.pick(capturedSteps()));
    const body = { steps, trajectoryId: "t" };
    bytes = jsonBytes(damage(body), body);
  } else if (kind === "frame") {
    const [update] = sampleUpdates(rng);
    bytes = jsonBytes(damage({ update }), { update });
  } else {
    const updates = sampleUpdates(rng).map((u) => damage(u) as Record<string, unknown>);
    try {
      bytes = rng.chance(0.1) ? encodeJsonEnvelope(FLAG_DATA, updates) : sampleStream(rng, updates);
    } catch {
      // Nested too deep for JSON.stringify: keep the stream undamaged.
      bytes = sampleStream(rng, sampleUpdates(rng));
    }
  }
  if (rng.chance(0.3)) bytes = mutateBytes(rng, bytes);
  return { kind, bytes, sizes: chunk(rng, bytes).map((c) => c.length) };
}

async function* replay(bytes: Uint8Array, sizes: readonly number[]): AsyncGenerator<Uint8Array> {
  let at = 0;
  for (const size of sizes) {
    yield bytes.subarray(at, at + size);
    at += size;
  }
  if (at < bytes.length) yield bytes.subarray(at);
}

async function decodeStream(bytes: Uint8Array, sizes: readonly number[]): Promise<{ updates: unknown[]; error: unknown }> {
  const updates: unknown[] = [];
  try {
    for await (const update of decodeStreamBody(replay(bytes, sizes), { method: METHOD, maxFrameBytes: 1024 * 1024 })) {
      updates.push(update);
    }
  } catch (error) {
    return { updates, error };
  }
  return { updates, error: undefined };
}

function serialisable(value: unknown, what: string): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    return invariantFailed(`${what} is not JSON-serialisable: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function invariantFailed(message: string): never {
  invariant(false, () => message);
}

async function run(input: DecoderInput): Promise<"ok" | "typed_error"> {
  if (input.kind === "steps") {
    const result = decodeStepsResponse(input.bytes, METHOD);
    invariant(Array.isArray(result.steps), () => "steps is not a list");
    serialisable(result, "the decoded snapshot");
    return "ok";
  }
  if (input.kind === "frame") {
    const update = decodeDataFrame(input.bytes, METHOD);
    invariant(typeof update === "object" && update !== null && !Array.isArray(update), () => "the update is not an object");
    serialisable(update, "the decoded update");
    return "ok";
  }
  const whole = await decodeStream(input.bytes, [input.bytes.length]);
  const parts = await decodeStream(input.bytes, input.sizes);
  for (const result of [whole, parts]) {
    if (result.error !== undefined && !(result.error instanceof RpcError)) throw result.error;
  }
  const text = (r: { updates: unknown[] }) => serialisable(r.updates, "the decoded updates");
  invariant(text(whole) === text(parts), () => "the updates depend on the chunking");
  const message = (e: unknown) => (e instanceof Error ? e.message : undefined);
  invariant(message(whole.error) === message(parts.error), () => `failure "${message(whole.error)}" in one chunk, "${message(parts.error)}" when chunked`);
  return whole.error === undefined ? "ok" : "typed_error";
}

export const responseDecodersCampaign: Campaign<DecoderInput> = {
  name: "response decoders",
  generate,
  run,
  isTyped: (error) => error instanceof RpcError,
  *shrink(input) {
    if (input.sizes.length > 1) yield { ...input, sizes: [input.bytes.length] };
    for (const cut of [input.bytes.length >> 1, input.bytes.length - 1]) {
      if (cut > 0 && cut < input.bytes.length) yield { ...input, bytes: input.bytes.slice(0, cut) };
    }
  },
  show: (input) => ({ kind: input.kind, text: new TextDecoder().decode(input.bytes), sizes: input.sizes.slice(0, 50) }),
};
