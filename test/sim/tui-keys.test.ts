/** Key parsing and draft editing of the fake TUI (spike-notes §6.2: bracketed paste, C-a / C-k). */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createDraft } from "../../src/sim/tui/draft.js";
import { createKeyParser, type TuiKey } from "../../src/sim/tui/key-parser.js";

function parseAll(chunks: string[]): TuiKey[] {
  const parser = createKeyParser();
  return chunks.flatMap((chunk) => parser.push(chunk));
}

describe("key parser", () => {
  it("reads CR inside a bracketed paste as a newline, not a submit (spike-notes §6.2 step 5)", () => {
    expect(parseAll(["\x1b[200~a\rb\r\nc\x1b[201~\r"])).toEqual([{ type: "paste", text: "a\nb\nc" }, { type: "enter" }]);
  });

  it("yields the same paste however the bytes are chunked", () => {
    const bytes = "x\x1b[200~one\rtwo\x1b[201~\x01\x0b";
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 4 }), (cuts) => {
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        const chunks = [0, ...points].map((start, i) => bytes.slice(start, points[i] ?? bytes.length));
        expect(parseAll(chunks)).toEqual([{ type: "text", text: "x" }, { type: "paste", text: "one\ntwo" }, { type: "line-start" }, { type: "kill-to-end" }]);
      }),
    );
  });

  it("holds a trailing ESC until flushed, then reads it as Escape", () => {
    const parser = createKeyParser();
    expect(parser.push("\x1b")).toEqual([]);
    expect(parser.waiting).toBe(true);
    expect(parser.flush()).toEqual([{ type: "escape" }]);
    expect(parser.waiting).toBe(false);
  });

  it("reads arrow sequences as arrows", () => {
    expect(parseAll(["\x1b[A\x1bOB"])).toEqual([{ type: "up" }, { type: "down" }]);
  });

  it("reads CSI Z as shift+tab (agy cycles its permission modes with it)", () => {
    expect(parseAll(["a\x1b[Zb"])).toEqual([{ type: "text", text: "a" }, { type: "shift-tab" }, { type: "text", text: "b" }]);
  });

  it("reads ESC followed by a digit as Escape then the digit", () => {
    expect(parseAll(["\x1b1"])).toEqual([{ type: "escape" }, { type: "text", text: "1" }]);
  });
});

describe("composer draft", () => {
  it("clears a one-line draft with C-a then C-k (spike-notes §6.2 step 3)", () => {
    const draft = createDraft();
    draft.insert("half typed");
    draft.lineStart();
    draft.killToEnd();
    expect(draft.shown).toBe("");
  });

  it("kills only the current line, then the newline, like emacs", () => {
    const draft = createDraft();
    draft.insert("one\ntwo");
    draft.lineStart();
    draft.killToEnd();
    expect(draft.shown).toBe("one\n");
    draft.backspace();
    draft.lineStart();
    draft.killToEnd();
    expect(draft.shown).toBe("");
  });

  it("keeps a 12-line paste verbatim and collapses a 13-line one (spike-notes §6.2 step 6)", () => {
    const lines = (n: number): string => Array.from({ length: n }, (_, i) => `l${i}`).join("\n");
    const short = createDraft();
    short.paste(`${lines(12)}\n`);
    expect(short.shown).toBe(`${lines(12)}\n`);
    const long = createDraft();
    long.paste(`${lines(13)}\n`);
    long.paste(`${lines(20)}`);
    expect(long.shown).toBe("[Pasted text #1 +13 lines][Pasted text #2 +20 lines]");
    expect(long.text()).toBe(`${lines(13)}\n${lines(20)}`);
  });
});
