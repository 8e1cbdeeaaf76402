import { describe, expect, it } from "vitest";
import { EnvelopeDecoder, encodeJsonEnvelope, FLAG_DATA, FLAG_END_STREAM } from "./envelope.js";

const text = new TextDecoder();

describe("EnvelopeDecoder", () => {
  it("reassembles frames split at every byte boundary", () => {
    const bytes = new Uint8Array([
      ...encodeJsonEnvelope(FLAG_DATA, { a: 1 }),
      ...encodeJsonEnvelope(FLAG_END_STREAM, {}),
    ]);
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

  it("refuses a frame over the cap without waiting for its bytes", () => {
    const d = new EnvelopeDecoder(10);
    expect(() => d.push(new Uint8Array([0, 0, 0, 0, 11]))).toThrow(/11 bytes, over the 10-byte limit/);
  });
});
