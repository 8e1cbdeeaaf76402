/**
 * Connect streaming envelopes: `[flags:1][length:4, big-endian][payload]`.
 *
 * agy requires the request body of a server-stream call to be enveloped too;
 * bare JSON is read as a frame header and answered with a "promised N bytes"
 * error (agy 1.0.10, live). Pure: no sockets here.
 */
import { AgyBridgeError } from "../errors.js";

export const FLAG_DATA = 0x00;
export const FLAG_COMPRESSED = 0x01;
export const FLAG_END_STREAM = 0x02;

export const HEADER_BYTES = 5;

/** Chunks smaller than this are gathered into a scratch buffer instead of being listed one by one. */
const SMALL_CHUNK_BYTES = 1024;
const SCRATCH_BYTES = 64 * 1024;

/** Default cap on one frame's payload: a snapshot of a long conversation is several MB. */
export const DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024;

export interface Envelope {
  flags: number;
  payload: Uint8Array;
}

export function encodeEnvelope(flags: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(HEADER_BYTES + payload.byteLength);
  out[0] = flags;
  new DataView(out.buffer).setUint32(1, payload.byteLength, false);
  out.set(payload, HEADER_BYTES);
  return out;
}

const encoder = new TextEncoder();

export function encodeJsonEnvelope(flags: number, value: unknown): Uint8Array {
  return encodeEnvelope(flags, encoder.encode(JSON.stringify(value)));
}

/**
 * Reassembles envelopes from arbitrary chunks: a chunk may hold part of the
 * 5-byte header, several frames, or a slice of one large payload. Chunks are
 * kept as a list and joined once per frame, so a payload split into many
 * chunks costs one copy, not one per chunk. Consumed chunks are skipped by
 * index and the list is compacted only when most of it is consumed, so the
 * work stays linear in bytes however small the chunks are (a slow or hostile
 * server chooses the chunk sizes).
 */
export class EnvelopeDecoder {
  readonly #maxFrameBytes: number;
  #chunks: Array<Uint8Array | undefined> = [];
  /** Index of the first unconsumed chunk in `#chunks`. */
  #head = 0;
  /** Small chunks not yet in `#chunks` sit in `#scratch` from `#scratchStart` to `#scratchEnd`. */
  #scratch: Uint8Array | undefined;
  #scratchStart = 0;
  #scratchEnd = 0;
  #buffered = 0;
  #pendingFlags = -1;
  #pendingLength = -1;

  constructor(maxFrameBytes: number = DEFAULT_MAX_FRAME_BYTES) {
    this.#maxFrameBytes = maxFrameBytes;
  }

  /** Bytes received but not yet returned as a frame. */
  get bufferedBytes(): number {
    // The header of the frame in progress was read already but not yet returned.
    return this.#buffered + (this.#pendingLength >= 0 ? HEADER_BYTES : 0);
  }

  /** Feeds a chunk and returns every frame it completes, in order. */
  push(chunk: Uint8Array): Envelope[] {
    this.append(chunk);
    const frames: Envelope[] = [];
    for (let frame = this.next(); frame !== undefined; frame = this.next()) frames.push(frame);
    return frames;
  }

  /** Buffers a chunk without decoding anything; read frames with {@link next}. */
  append(chunk: Uint8Array): void {
    const n = chunk.byteLength;
    if (n === 0) return;
    this.#buffered += n;
    if (n >= SMALL_CHUNK_BYTES) {
      this.#listScratch();
      this.#chunks.push(chunk);
      return;
    }
    // Small chunks are copied into one scratch buffer, so a server writing a
    // byte at a time costs a byte copy per chunk rather than a list entry.
    let scratch = this.#scratch;
    if (scratch === undefined || this.#scratchEnd + n > scratch.byteLength) {
      this.#listScratch();
      scratch = new Uint8Array(SCRATCH_BYTES);
      this.#scratch = scratch;
      this.#scratchStart = 0;
      this.#scratchEnd = 0;
    }
    if (n === 1) scratch[this.#scratchEnd] = chunk[0] ?? 0;
    else scratch.set(chunk, this.#scratchEnd);
    this.#scratchEnd += n;
  }

  /**
   * The next complete frame, or undefined until more bytes arrive. Lets a
   * reader stop at the end-stream frame without decoding the bytes after it.
   */
  next(): Envelope | undefined {
    if (this.#pendingLength < 0) {
      if (this.#buffered < HEADER_BYTES) return undefined;
      const header = this.#take(HEADER_BYTES);
      const length = new DataView(header.buffer, header.byteOffset, HEADER_BYTES).getUint32(1, false);
      if (length > this.#maxFrameBytes) {
        throw new AgyBridgeError(
          "protocol",
          `a stream frame announced ${length} bytes, over the ${this.#maxFrameBytes}-byte limit; ` +
            "the server is not speaking Connect streaming, or raise maxFrameBytes",
        );
      }
      this.#pendingFlags = header[0] ?? 0;
      this.#pendingLength = length;
    }
    if (this.#buffered < this.#pendingLength) return undefined;
    const frame = { flags: this.#pendingFlags, payload: this.#take(this.#pendingLength) };
    this.#pendingFlags = -1;
    this.#pendingLength = -1;
    return frame;
  }

  /** True when the input ended between frames (no partial header or payload). */
  get atBoundary(): boolean {
    return this.#buffered === 0 && this.#pendingLength < 0;
  }

  /** Moves the small chunks gathered so far into the list; bytes already written are never rewritten. */
  #listScratch(): void {
    if (this.#scratch === undefined || this.#scratchEnd === this.#scratchStart) return;
    this.#chunks.push(this.#scratch.subarray(this.#scratchStart, this.#scratchEnd));
    this.#scratchStart = this.#scratchEnd;
  }

  #take(n: number): Uint8Array {
    this.#listScratch();
    const first = this.#chunks[this.#head];
    if (first !== undefined && first.byteLength >= n) {
      const out = first.subarray(0, n);
      if (first.byteLength === n) this.#consumeHead();
      else this.#chunks[this.#head] = first.subarray(n);
      this.#buffered -= n;
      return out;
    }
    const out = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const chunk = this.#chunks[this.#head];
      if (chunk === undefined) throw new AgyBridgeError("internal", "envelope decoder ran out of buffered bytes");
      const want = n - filled;
      if (chunk.byteLength <= want) {
        out.set(chunk, filled);
        filled += chunk.byteLength;
        this.#consumeHead();
      } else {
        out.set(chunk.subarray(0, want), filled);
        this.#chunks[this.#head] = chunk.subarray(want);
        filled += want;
      }
    }
    this.#buffered -= n;
    return out;
  }

  #consumeHead(): void {
    this.#chunks[this.#head] = undefined;
    this.#head++;
    if (this.#head === this.#chunks.length) {
      this.#chunks = [];
      this.#head = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= this.#chunks.length) {
      // Amortised: each chunk is moved at most once per halving.
      this.#chunks = this.#chunks.slice(this.#head);
      this.#head = 0;
    }
  }
}
