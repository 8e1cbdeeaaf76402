/**
 * The turn sanitiser: what may reach a bracketed paste (spike-notes §6.2 step 5).
 */
import { describe, expect, it } from "vitest";
import { MAX_TURN_BYTES, sanitizeTurnText } from "../../src/tmux/index.js";

describe("sanitizeTurnText", () => {
  it("keeps printable text, tabs and newlines unchanged", () => {
    const text = "a\tb\nc — 🙂 \"q\" 'q' \\ $(x) `y` ;";
    expect(sanitizeTurnText(text)).toBe(text);
  });

  it("turns CRLF and lone CR into LF", () => {
    expect(sanitizeTurnText("a\r\nb\rc\n\r\nd")).toBe("a\nb\nc\n\nd");
  });

  it("strips ESC, BEL, DEL and the other C0 and C1 controls", () => {
    expect(sanitizeTurnText("x\x1b[201~y\x07z\x7fw\x08v\x0bu\x0cq\u009b1m\u0085p")).toBe("x[201~yzwvuq1mp");
  });

  it("rejects a NUL byte with a sentence saying what to do", () => {
    expect(() => sanitizeTurnText("before\u0000after")).toThrow(
      expect.objectContaining({ code: "invalid_argument", message: expect.stringMatching(/NUL byte; send text/) }),
    );
  });

  it("accepts exactly 1 MiB and rejects one byte more, counting UTF-8 bytes", () => {
    expect(sanitizeTurnText("a".repeat(MAX_TURN_BYTES))).toHaveLength(MAX_TURN_BYTES);
    expect(() => sanitizeTurnText("a".repeat(MAX_TURN_BYTES + 1))).toThrow(/over the 1 MiB limit/);
    // 3-byte characters: a third as many fit.
    expect(() => sanitizeTurnText("€".repeat(Math.floor(MAX_TURN_BYTES / 3) + 1))).toThrow(/1048578 bytes/);
  });

  it("counts the limit after stripping, so removed controls do not count", () => {
    expect(sanitizeTurnText(`${"a".repeat(MAX_TURN_BYTES)}\x1b\x1b`)).toHaveLength(MAX_TURN_BYTES);
  });

  it("replaces a lone surrogate with U+FFFD and keeps a valid pair", () => {
    expect(sanitizeTurnText("a\ud800b\udc00c🙂")).toBe("a\ufffdb\ufffdc🙂");
  });
});
