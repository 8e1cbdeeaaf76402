/** The fake TUI's screen, rendered without a terminal (spike-notes §5.4, §5.6, §6.2). */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createFakeTui } from "../../src/sim/tui/fake-tui.js";
import { renderScreen } from "../../src/sim/tui/render.js";
import { createFakeTuiPort } from "../support/fake-tui-port.js";

function setup(columns = 60) {
  const port = createFakeTuiPort();
  const input = new PassThrough();
  const output = new PassThrough();
  const written: string[] = [];
  output.on("data", (chunk: Buffer) => written.push(chunk.toString("utf8")));
  const tui = createFakeTui({ port, input, output, columns, rows: 24 });
  tui.start();
  const type = async (bytes: string): Promise<void> => {
    input.write(bytes);
    await new Promise((r) => setImmediate(r));
  };
  return { port, tui, type, written };
}

describe("fake TUI rendering", () => {
  it("turns bracketed paste on at start and off at stop", () => {
    const { tui, written } = setup();
    expect(written.join("")).toContain("\x1b[?2004h");
    tui.stop();
    expect(written.join("")).toContain("\x1b[?2004l");
  });

  it("ends with rule, composer, rule, footer at the bottom of the screen (spike-notes §6.2 step 4)", () => {
    const { tui } = setup();
    const screen = tui.screen();
    expect(screen.slice(-4)).toEqual(["─".repeat(60), "> ", "─".repeat(60), "  ? for shortcuts"]);
  });

  it("keeps the composer on screen when the transcript overflows", () => {
    const lines = renderScreen({
      columns: 40,
      rows: 10,
      banner: [],
      transcript: Array.from({ length: 30 }, (_, i) => ({ role: "assistant" as const, text: `answer ${i}` })),
      notes: [],
      prompt: undefined,
      draft: "draft",
      running: true,
    });
    expect(lines).toHaveLength(10);
    expect(lines.slice(-3)).toEqual(["> draft", "─".repeat(40), "  esc to cancel"]);
    expect(lines).toContain("● answer 29");
    expect(lines).not.toContain("● answer 0");
  });

  it("shows the persist pattern in option 2 of a permission prompt", async () => {
    const { port, tui } = setup(100);
    port.setView({
      running: true,
      pending: { kind: "permission", trajectoryId: "t", stepIndex: 2, target: "npm test", description: "", suggestedPersistPattern: "npm test*" },
    });
    expect(tui.screen()).toContain("   2. Yes, and always allow `npm test*` for this conversation");
    expect(tui.screen()).toContain(" > 1. Yes");
  });

  it("answers No with 4 Enter and notes the declined call (spike-notes §5.6)", async () => {
    const { port, tui, type } = setup();
    port.setView({ running: true, pending: { kind: "permission", trajectoryId: "t", stepIndex: 3, target: "ls", description: "" } });
    await type("4\r");
    expect(port.calls).toEqual([{ call: "answer", stepIndex: 3, answer: { kind: "permission", allow: false }, delivered: true }]);
    expect(tui.screen().join("\n")).toContain("User declined the tool call");
  });

  it("selects a single-select option by digit and dismisses a question on Escape (spike-notes §5.6)", async () => {
    const { port, type } = setup();
    const question = (stepIndex: number) => ({
      kind: "question" as const,
      trajectoryId: "t",
      stepIndex,
      questions: [{ question: "Pick", multiSelect: false, options: [{ id: "1", text: "a" }, { id: "2", text: "b" }] }],
    });
    port.setView({ running: true, pending: question(5) });
    await type("2\r");
    port.setView({ pending: question(6) });
    await type("\x1b");
    await expect.poll(() => port.calls.length).toBe(2);
    expect(port.calls).toEqual([
      { call: "answer", stepIndex: 5, answer: { kind: "question", selectedOptionIds: ["2"] }, delivered: true },
      { call: "answer", stepIndex: 6, answer: { kind: "dismiss" }, delivered: true },
    ]);
  });

  it("opens the next WAITING step's prompt only after the stale one is closed (spike-notes §5.4)", async () => {
    const { port, tui, type } = setup();
    port.setView({ running: true, pending: { kind: "permission", trajectoryId: "t", stepIndex: 3, target: "first", description: "" } });
    port.setView({ pending: { kind: "permission", trajectoryId: "t", stepIndex: 6, target: "second", description: "" } });
    expect(tui.screen().join("\n")).toContain("Allow this command? first");
    await type("1\r");
    expect(tui.screen().join("\n")).toContain("Allow this command? second");
    expect(port.calls).toEqual([{ call: "answer", stepIndex: 3, answer: { kind: "permission", allow: true }, delivered: false }]);
  });

  it("settles closed when C-c is pressed on an empty draft, after clearing a non-empty one", async () => {
    const { tui, type } = setup();
    let closed = false;
    void tui.closed.then(() => (closed = true));
    await type("abc\x03");
    expect(tui.screen()).toContain("> ");
    expect(closed).toBe(false);
    await type("\x03");
    await tui.closed;
    expect(closed).toBe(true);
  });
});
