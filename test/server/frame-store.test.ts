import { expect, it } from "vitest";
import { BLOCK, FrameStore } from "../../src/server/frame-store.js";

/** A frame with text of varying length and characters outside ASCII (UTF-8 offsets must hold). */
const frame = (seq: number) => `id: e-${seq}\nevent: message\ndata: {"text":"${"é✓𝄞 ".repeat(seq % 7)}step ${seq}"}\n\n`;

it("reads back every frame it still holds, across sealed blocks and the open one, as they were pushed", () => {
  const store = new FrameStore(11);
  for (let seq = 11; seq < 11 + BLOCK * 3 + 5; seq++) store.push(seq, frame(seq));
  expect(store.first).toBe(11);
  expect(store.next).toBe(11 + BLOCK * 3 + 5);
  for (const seq of [11, 12, 11 + BLOCK - 1, 11 + BLOCK, 11 + BLOCK * 3, 11 + BLOCK * 3 + 4]) expect(store.get(seq)).toBe(frame(seq));
  expect(store.get(10)).toBeUndefined();
  expect(store.get(11 + BLOCK * 3 + 5)).toBeUndefined();
  const tail = store.from(11 + BLOCK * 2 + 7);
  expect(tail.map((f) => f.seq)).toEqual(Array.from({ length: BLOCK + 5 - 7 }, (_, i) => 11 + BLOCK * 2 + 7 + i));
  expect(tail.every((f) => f.frame === frame(f.seq))).toBe(true);
});

it("frees whole blocks older than the window only, and keeps reading what is left", () => {
  const store = new FrameStore(1);
  const window = 100;
  for (let seq = 1; seq <= 1000; seq++) {
    store.push(seq, frame(seq));
    store.dropBefore(Math.max(1, seq - window + 1));
    // Never more than the window and one block; never less than the window.
    expect(store.next - store.first).toBeGreaterThanOrEqual(Math.min(seq, window));
    expect(store.next - store.first).toBeLessThan(window + BLOCK);
  }
  const held = store.from(0);
  expect(held[0]!.seq).toBe(store.first);
  expect(held.at(-1)!.seq).toBe(1000);
  expect(held.every((f) => f.frame === frame(f.seq))).toBe(true);
  expect(store.get(store.first - 1)).toBeUndefined();
});

it("refuses a sequence number out of order rather than storing it at the wrong place", () => {
  const store = new FrameStore(5);
  store.push(5, frame(5));
  expect(() => store.push(7, frame(7))).toThrow(/sequence number 7 pushed where 6 was due/);
});

it("keeps a sealed window at a fraction of its frames' size", () => {
  const store = new FrameStore(1);
  let bytes = 0;
  for (let seq = 1; seq <= BLOCK * 10; seq++) {
    const f = `id: mfz3k1q07f3a-${seq}\nevent: tool_call\ndata: {"type":"tool_call","conversationId":"2c6f0a52-9d0e-4c7b-a2f2-8f4f3b6c1d11","trajectoryId":"7d1e0c33-a9f2-4e55-b1e2-0f9c8a7d6e54","stepIndex":${seq},"tool":"run_command","arguments":{"commandLine":"ls -la src/${seq % 13}"}}\n\n`;
    bytes += f.length;
    store.push(seq, f);
  }
  expect(store.storedBytes).toBeLessThan(bytes / 4);
  expect(store.from(1).map((f) => f.seq)).toEqual(Array.from({ length: BLOCK * 10 }, (_, i) => i + 1));
});
