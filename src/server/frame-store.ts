/**
 * Where an event log keeps the frames of its replay window: the newest ones
 * as strings, older ones deflated in blocks of {@link BLOCK} (issue 23). A
 * hundred conversations with a window of a thousand events each held 40 MB
 * of frame strings; the frames repeat their ids, type names and keys, and a
 * block of 64 deflates to a tenth or less (docs/scale.md has the figures).
 *
 * The live path never touches a sealed block (subscribers get each frame as
 * it is appended); a client resuming from an older position inflates the
 * blocks it needs, one at a time, the last one cached.
 */
import { deflateRawSync, inflateRawSync } from "node:zlib";

/** Frames per sealed block. */
export const BLOCK = 64;

interface Sealed {
  /** Sequence number of its first frame. */
  readonly first: number;
  readonly count: number;
  /** The frames, joined as UTF-8, deflated (an exact-size copy). */
  readonly data: Uint8Array;
  /** Byte offset in the inflated text where each frame ends. */
  readonly ends: Uint32Array;
}

/** A frame read back, with its sequence number. */
export interface StoredFrame {
  readonly seq: number;
  readonly frame: string;
}

export class FrameStore {
  /** Sealed blocks, oldest first, from index `#head`. */
  #sealed: (Sealed | undefined)[] = [];
  #head = 0;
  /** The newest frames, not yet sealed; the first has sequence number `#openFirst`. */
  #open: string[] = [];
  #openFirst: number;
  #cache: { block: Sealed; text: Buffer } | undefined;

  constructor(firstSeq: number) {
    this.#openFirst = firstSeq;
  }

  /** The oldest sequence number still stored (the next one when nothing is). */
  get first(): number {
    return this.#sealed[this.#head]?.first ?? this.#openFirst;
  }

  /** What the frames keep alive: each sealed block's whole buffer, and the open frames' characters. */
  get storedBytes(): number {
    let bytes = 0;
    for (let i = this.#head; i < this.#sealed.length; i++) bytes += this.#sealed[i]!.data.buffer.byteLength + this.#sealed[i]!.ends.byteLength;
    for (const frame of this.#open) bytes += frame.length;
    return bytes;
  }

  /** The sequence number the next push must have. */
  get next(): number {
    return this.#openFirst + this.#open.length;
  }

  push(seq: number, frame: string): void {
    if (seq !== this.next) throw new Error(`frame store: sequence number ${seq} pushed where ${this.next} was due`);
    this.#open.push(frame);
    if (this.#open.length >= BLOCK) this.#seal();
  }

  /** Frees every block whose frames are all older than `seq`. */
  dropBefore(seq: number): void {
    let dropped = false;
    for (let block = this.#sealed[this.#head]; block !== undefined && block.first + block.count <= seq; block = this.#sealed[this.#head]) {
      this.#sealed[this.#head++] = undefined;
      dropped = true;
    }
    if (dropped && this.#head >= 64) {
      this.#sealed = this.#sealed.slice(this.#head);
      this.#head = 0;
    }
    if (this.#cache !== undefined && this.#cache.block.first + this.#cache.block.count <= seq) this.#cache = undefined;
  }

  /** The frame of `seq`, when stored. */
  get(seq: number): string | undefined {
    if (seq >= this.#openFirst) return this.#open[seq - this.#openFirst];
    const block = this.#blockOf(seq);
    if (block === undefined) return undefined;
    return this.#frameIn(block, this.#text(block), seq - block.first);
  }

  /** Every stored frame from `seq` on, oldest first. */
  from(seq: number): StoredFrame[] {
    const out: StoredFrame[] = [];
    let at = Math.max(seq, this.first);
    while (at < this.#openFirst) {
      const block = this.#blockOf(at);
      if (block === undefined) break;
      const text = this.#text(block);
      for (let i = at - block.first; i < block.count; i++) out.push({ seq: block.first + i, frame: this.#frameIn(block, text, i) });
      at = block.first + block.count;
    }
    for (let i = Math.max(0, at - this.#openFirst); i < this.#open.length; i++) out.push({ seq: this.#openFirst + i, frame: this.#open[i]! });
    return out;
  }

  #seal(): void {
    const buffers = this.#open.map((frame) => Buffer.from(frame, "utf8"));
    const ends = new Uint32Array(buffers.length);
    let end = 0;
    buffers.forEach((b, i) => (ends[i] = end += b.byteLength));
    // Level 1: nearly the ratio of the default level at a fraction of the time (docs/scale.md).
    // Copied out: zlib's result is a view of a 16 KiB output buffer, which it would keep alive.
    const data = new Uint8Array(deflateRawSync(Buffer.concat(buffers, end), { level: 1 }));
    this.#sealed.push({ first: this.#openFirst, count: buffers.length, data, ends });
    this.#openFirst += buffers.length;
    this.#open = [];
  }

  /** The sealed block holding `seq` (blocks are consecutive, so found by arithmetic on the first). */
  #blockOf(seq: number): Sealed | undefined {
    const first = this.#sealed[this.#head];
    if (first === undefined || seq < first.first) return undefined;
    const block = this.#sealed[this.#head + Math.floor((seq - first.first) / BLOCK)];
    return block !== undefined && seq >= block.first && seq < block.first + block.count ? block : undefined;
  }

  #text(block: Sealed): Buffer {
    if (this.#cache?.block !== block) this.#cache = { block, text: inflateRawSync(block.data) };
    return this.#cache.text;
  }

  #frameIn(block: Sealed, text: Buffer, index: number): string {
    return text.toString("utf8", index === 0 ? 0 : block.ends[index - 1], block.ends[index]);
  }
}
