import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EnvelopeDecoder, encodeJsonEnvelope, FLAG_DATA, FLAG_END_STREAM } from "./envelope.js";

const text = new TextDecoder();

describe("EnvelopeDecoder", () => {
  it("reassembles frames split at every byte boundary", () => {
    const bytes = new Uint8Array([...encodeJsonEnvelope(FLAG_DATA, { a: 1 }), ...encodeJsonEnvelope(FLAG_END_STREAM, {})]);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const d = new EnvelopeDecoder();
      const frames = [...d.push(bytes.subarray(0, cut)), ...d.push(bytes.subarray(cut))];
      expect(frames.map((f) => [f.flags, text.decode(f.payload)])).toEqual([
        [0, '{"a":1}'],
        [2, "{}"],
      ]);
      expect(d.atBoundary).toBe(true);
    }
  });

  it("reassembles frames fed one byte at a time, across thousands of chunks", () => {
    const payloads = [{ big: "x".repeat(5000) }, {}, { list: Array.from({ length: 300 }, (_, i) => i) }];
    const bytes = new Uint8Array(payloads.flatMap((p, i) => [...encodeJsonEnvelope(i === payloads.length - 1 ? FLAG_END_STREAM : FLAG_DATA, p)]));
    const d = new EnvelopeDecoder();
    const frames = [];
    let returned = 0;
    for (let i = 0; i < bytes.length; i++) {
      for (const f of d.push(bytes.subarray(i, i + 1))) {
        frames.push(f);
        returned += 5 + f.payload.byteLength;
      }
      // Every byte fed is either returned in a frame or still buffered.
      expect(d.bufferedBytes + returned).toBe(i + 1);
    }
    expect(frames.map((f) => JSON.parse(text.decode(f.payload)) as unknown)).toEqual(payloads);
    expect(frames.map((f) => f.flags)).toEqual([FLAG_DATA, FLAG_DATA, FLAG_END_STREAM]);
    expect(d.atBoundary).toBe(true);
  });

  it("reassembles the same frames whatever the chunk sizes", () => {
    const bytes = new Uint8Array([
      ...encodeJsonEnvelope(FLAG_DATA, { a: "y".repeat(3000) }),
      ...encodeJsonEnvelope(FLAG_DATA, { b: 2 }),
      ...encodeJsonEnvelope(FLAG_END_STREAM, {}),
    ]);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 64 }), { minLength: 1, maxLength: 200 }), (sizes) => {
        const d = new EnvelopeDecoder();
        const payloads: string[] = [];
        let at = 0;
        for (let i = 0; at < bytes.length; i++) {
          const size = sizes[i % sizes.length] ?? 1;
          const next = Math.min(bytes.length, at + Math.max(1, size));
          payloads.push(...d.push(bytes.subarray(at, next)).map((f) => text.decode(f.payload)));
          at = next;
        }
        expect(payloads).toEqual([JSON.stringify({ a: "y".repeat(3000) }), '{"b":2}', "{}"]);
        expect(d.atBoundary).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it("refuses a frame over the cap without waiting for its bytes", () => {
    const d = new EnvelopeDecoder(10);
    expect(() => d.push(new Uint8Array([0, 0, 0, 0, 11]))).toThrow(/11 bytes, over the 10-byte limit/);
  });
});
