/**
 * The envelope decoder under damaged streams: bit flips, inserted and deleted
 * bytes, truncation, corrupted lengths and flags, any chunking. Promises:
 * every failure is an `AgyBridgeError`; the frames (and the failure) do not
 * depend on how the bytes were chunked; every frame returned is exactly the
 * bytes that were fed, in order.
 */
import { AgyBridgeError } from "../../../src/errors.js";
import { EnvelopeDecoder } from "../../../src/protocol/envelope.js";
import { chunk, mutateBytes } from "../mutate.js";
import type { Rng } from "../rng.js";
import { invariant, type Campaign } from "../runner.js";
import { sampleStream, sampleUpdates } from "./wire-samples.js";

export interface EnvelopeInput {
  bytes: Uint8Array;
  /** Chunk sizes the bytes are fed in. */
  sizes: number[];
  maxFrameBytes: number;
}

function generate(rng: Rng): EnvelopeInput {
  let bytes = sampleStream(rng, sampleUpdates(rng));
  if (rng.chance(0.3)) bytes = corruptHeader(rng, bytes);
  if (rng.chance(0.8)) bytes = mutateBytes(rng, bytes);
  const sizes = chunk(rng, bytes).map((c) => c.length);
  return { bytes, sizes, maxFrameBytes: rng.pick([64 * 1024 * 1024, 4096, 16]) };
}

/** Rewrites the length or flags of the first frame header. */
function corruptHeader(rng: Rng, bytes: Uint8Array): Uint8Array {
  const out = bytes.slice();
  if (out.length < 5) return out;
  const view = new DataView(out.buffer);
  if (rng.chance(0.5)) out[0] = rng.pick([0x01, 0x03, 0x80, 0xff, rng.int(256)]);
  else view.setUint32(1, rng.pick([0xffffffff, 0x7fffffff, view.getUint32(1) + 1, Math.max(0, view.getUint32(1) - 1), rng.int(1 << 20), 0]));
  return out;
}

interface Decoded {
  frames: Array<{ flags: number; payload: Uint8Array }>;
  error: unknown;
  atBoundary: boolean;
}

function decode(bytes: Uint8Array, sizes: readonly number[], maxFrameBytes: number): Decoded {
  const decoder = new EnvelopeDecoder(maxFrameBytes);
  const frames: Decoded["frames"] = [];
  let at = 0;
  // append + next, as the stream reader uses it: frames completed before a failure are kept.
  const feed = (part: Uint8Array) => {
    decoder.append(part);
    for (let frame = decoder.next(); frame !== undefined; frame = decoder.next()) frames.push(frame);
  };
  try {
    for (const size of sizes) {
      feed(bytes.subarray(at, at + size));
      at += size;
    }
    if (at < bytes.length) feed(bytes.subarray(at));
  } catch (error) {
    return { frames, error, atBoundary: false };
  }
  return { frames, error: undefined, atBoundary: decoder.atBoundary };
}

function run(input: EnvelopeInput): "ok" | "typed_error" {
  const whole = decode(input.bytes, [input.bytes.length], input.maxFrameBytes);
  const parts = decode(input.bytes, input.sizes, input.maxFrameBytes);
  for (const result of [whole, parts]) {
    if (result.error !== undefined && !(result.error instanceof AgyBridgeError)) throw result.error;
  }
  invariant(whole.frames.length === parts.frames.length, () => `${whole.frames.length} frames in one chunk, ${parts.frames.length} when chunked`);
  let offset = 0;
  whole.frames.forEach((frame, i) => {
    const other = parts.frames[i];
    invariant(other !== undefined && other.flags === frame.flags && equalBytes(other.payload, frame.payload), () => `frame ${i} differs when chunked`);
    const fed = input.bytes.subarray(offset + 5, offset + 5 + frame.payload.length);
    invariant(input.bytes[offset] === frame.flags && equalBytes(fed, frame.payload), () => `frame ${i} is not the bytes that were fed`);
    offset += 5 + frame.payload.length;
  });
  const message = (e: unknown) => (e instanceof Error ? e.message : undefined);
  invariant(message(whole.error) === message(parts.error), () => `failure "${message(whole.error)}" in one chunk, "${message(parts.error)}" when chunked`);
  if (whole.error === undefined) {
    invariant(whole.atBoundary === parts.atBoundary, () => "atBoundary depends on the chunking");
    invariant(whole.atBoundary === (offset === input.bytes.length), () => `atBoundary is ${whole.atBoundary} after ${offset} of ${input.bytes.length} bytes`);
  }
  return whole.error === undefined ? "ok" : "typed_error";
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export const envelopeCampaign: Campaign<EnvelopeInput> = {
  name: "envelope decoder",
  generate,
  run,
  *shrink(input) {
    for (const cut of [input.bytes.length >> 1, input.bytes.length - 1]) {
      if (cut > 0 && cut < input.bytes.length) yield { ...input, bytes: input.bytes.slice(0, cut), sizes: input.sizes };
    }
    if (input.sizes.length > 1) yield { ...input, sizes: [input.bytes.length] };
  },
};
