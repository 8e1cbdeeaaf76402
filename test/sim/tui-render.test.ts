/**
 * The fake TUI's screen, rendered without a terminal: agy's layout as the
 * live captures show it (spike-notes §5.4, §13).
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createFakeTui, type FakeTuiOptions } from "../../src/sim/tui/fake-tui.js";
import { renderScreen } from "../../src/sim/tui/render.js";
import type { TuiPending } from "../../src/sim/tui/tui-port.js";
import { createFakeTuiPort } from "../support/fake-tui-port.js";

const RULE = (n: number): string => "─".repeat(n);

function setup(options: Partial<Omit<FakeTuiOptions, "port" | "input" | "output">> = {}) {
  const port = createFakeTuiPort();
  const input = new PassThrough();
  const output = new PassThrough();
  const written: string[] = [];
  output.on("data", (chunk: Buffer) => written.push(chunk.toString("utf8")));
  const tui = createFakeTui({ port, input, output, columns: 120, rows: 60, ...options });
  tui.start();
  const type = async (bytes: string): Promise<void> => {
    input.write(bytes);
    await new Promise((r) => setImmediate(r));
  };
  const text = (): string => tui.screen().join("\n");
  return { port, tui, type, written, text };
}

const COMMAND: TuiPending = { kind: "permission", trajectoryId: "t", stepIndex: 3, target: "npm run lint", description: "Lint" };
const UP = "\x1b[A";
const DOWN = "\x1b[B";
const SHIFT_TAB = "\x1b[Z";

describe("fake TUI layout", () => {
  it("turns bracketed paste on at start and off at stop", () => {
    const { tui, written } = setup();
    expect(written.join("")).toContain("\x1b[?2004h");
    tui.stop();
    expect(written.join("")).toContain("\x1b[?2004l");
  });

  it("draws idle agy top-anchored: rule, a bare > row, rule, and a status row one column short with the label cut (facts 1–2)", () => {
    const { tui } = setup();
    const status = `? for shortcuts${" ".repeat(119 - 15 - "Gemini · mediu".length)}Gemini · mediu`;
    expect(tui.screen()).toEqual([RULE(120), ">", RULE(120), status]);
    expect(status).toHaveLength(119);
  });

  it("draws 1.0.x's model label whole, in parentheses", () => {
    const { tui } = setup({ version: "1.0" });
    expect(tui.screen().at(-1)).toMatch(/^\? for shortcuts +Gemini \(Medium\)$/);
  });

  it("echoes user turns under 60-column rules with a two-space continuation, and indents replies (facts 3–4)", () => {
    const { port, tui } = setup();
    const long = `Please ${"explain this code ".repeat(9)}now`;
    port.setView({
      transcript: [
        { role: "user", text: long },
        { role: "reasoning", text: "Thought for 2s, 480 tokens" },
        { role: "assistant", text: "It is fine." },
      ],
    });
    const screen = tui.screen();
    expect(screen[0]).toBe(RULE(60));
    expect(screen[1]?.startsWith("> Please explain")).toBe(true);
    expect(screen[2]).toMatch(/^ {2}\S/);
    expect(screen.slice(3, 7)).toEqual(["", "▸ Thought for 2s, 480 tokens", "  It is fine.", ""]);
    expect(screen.slice(7, 9)).toEqual([RULE(120), ">"]);
  });

  it("draws tool rows with their results, and a declined call under its dialog header (fact 4)", () => {
    const { port, text } = setup();
    port.setView({
      transcript: [
        { role: "tool", text: "/home/sim/project", call: { name: "Bash", arg: "pwd" } },
        { role: "tool", text: "User declined the tool call", call: { name: "Bash", arg: "rm -rf build" }, header: "Command" },
      ],
    });
    expect(text()).toContain("● Bash(pwd) (ctrl+o to expand)\n  ⎿  /home/sim/project\n");
    expect(text()).toContain("● Bash(rm -rf build) (ctrl+o to expand)\n\nCommand\n  ⎿  User declined the tool call\n");
  });

  it("shows the spinner row, the empty composer and `esc to cancel` while generating (fact 5)", () => {
    const { port, tui } = setup();
    port.setView({ running: true, transcript: [{ role: "user", text: "hi" }] });
    expect(tui.screen()).toEqual([RULE(60), "> hi", "⢿  Generating...", RULE(120), ">", RULE(120), expect.stringMatching(/^esc to cancel +Gemini · mediu$/)]);
  });

  it("keeps the newest rows when the transcript overflows the pane", () => {
    const lines = renderScreen({
      columns: 40,
      rows: 10,
      banner: [],
      transcript: Array.from({ length: 30 }, (_, i) => ({ role: "assistant" as const, text: `answer ${i}` })),
      notes: [],
      draft: "draft",
      running: false,
    });
    expect(lines).toHaveLength(10);
    expect(lines.slice(-3)).toEqual(["> draft", RULE(40), expect.stringMatching(/^\? for shortcuts/)]);
    expect(lines).toContain("  answer 29");
    expect(lines).not.toContain("  answer 0");
  });
});

describe("fake TUI dialogs", () => {
  it("replaces the composer with agy's command dialog: header, rule, body, question, four options, footer, `esc to cancel` (facts 8–9, 12)", () => {
    const { port, tui } = setup();
    port.setView({ running: true, transcript: [{ role: "user", text: "lint it" }], pending: COMMAND });
    expect(tui.screen()).toEqual([
      RULE(60),
      "> lint it",
      "",
      "● Bash(npm run lint) (ctrl+o to expand)",
      "",
      "Command",
      RULE(120),
      "",
      "Requesting permission for:",
      "   npm run lint",
      "",
      "Do you want to proceed?",
      "> 1. Yes",
      "  2. Yes, and always allow in this conversation for commands that start with 'npm run lint'",
      "  3. Yes, and always allow for commands that start with 'npm run lint' (Persist to settings.json)",
      "  4. No",
      "",
      "  ↑/↓ Navigate · tab Amend · ctrl+g edit/expand command",
      expect.stringMatching(/^esc to cancel +Gemini · mediu$/),
    ]);
    expect(tui.screen()).not.toContain(">");
  });

  it("shows four command rows then `⋯ (N lines hidden)`, and wraps option labels onto rows at column 0 (facts 9, 13)", () => {
    const { port, text } = setup();
    const script = ["python3 -c 'import os", "import sys", "", "# probe", "print(os.getcwd())'"].join("\n");
    port.setView({ running: true, pending: { ...COMMAND, target: script } });
    expect(text()).toContain("Requesting permission for:\n   python3 -c 'import os\n   import sys\n\n   # probe\n   ⋯ (1 lines hidden)\n");
    expect(text()).toContain(
      "  2. Yes, and always allow in this conversation for commands that start with 'python3 -c 'import os\nimport sys\n\n# probe\nprint(os.getcwd())''\n",
    );
    expect(text()).toContain("● Bash(python3 -c 'import os) (ctrl+o to expand)");
  });

  it("quotes only the first 80 characters of a long command, then `...` (agy 1.1.27)", () => {
    const { port, text } = setup({ columns: 300 });
    const target = `echo ${"x".repeat(100)}`;
    port.setView({ running: true, pending: { ...COMMAND, target } });
    expect(text()).toContain(`commands that start with '${target.slice(0, 80)}...'`);
  });

  it("offers six options when the same command was denied before (fact 10)", () => {
    const { port, text } = setup();
    port.setView({ running: true, pending: { ...COMMAND, deniedBefore: true } });
    expect(text()).toContain(
      "  4. No\n  5. No, and always deny for commands that start with 'npm run lint' in this conversation\n  6. No, and always deny for commands that start with 'npm run lint' (Persist to settings.json)\n",
    );
  });

  it("draws agy's file-creation dialog with two options, No being 2 (fact 11)", () => {
    const { port, text } = setup();
    port.setView({
      running: true,
      pending: {
        kind: "permission",
        trajectoryId: "t",
        stepIndex: 4,
        target: "~/proj/notes.md",
        description: "",
        action: "create-file",
        preview: ["# Notes", "first"],
      },
    });
    expect(text()).toContain(
      [
        "● Create(~/proj/notes.md) (ctrl+o to expand)",
        "",
        "Create file",
        RULE(120),
        "",
        "~/proj/notes.md  +2",
        "   1 +  # Notes",
        "   2 +  first",
        "",
        "Allow creation of this file?",
        "> 1. Yes, allow creation",
        "  2. No, deny creation",
        "",
        "  ↑/↓ Navigate · tab Amend · f full diff",
      ].join("\n"),
    );
  });

  it("moves the pointer with Up/Down, stopping at the ends, and confirms the pointed option on Enter (facts 12, 14)", async () => {
    const { port, tui, type } = setup();
    port.setView({ running: true, pending: COMMAND });
    await type(DOWN + DOWN + DOWN + DOWN);
    expect(tui.screen()).toContain("> 4. No");
    await type(UP);
    expect(tui.screen()).toContain("> 3. Yes, and always allow for commands that start with 'npm run lint' (Persist to settings.json)");
    await type(DOWN + "\r");
    expect(port.calls).toEqual([{ call: "answer", stepIndex: 3, answer: { kind: "permission", allow: false }, delivered: true }]);
  });

  it("ignores typed digits by default, so `4 Enter` approves the highlighted `1. Yes` (fact 14)", async () => {
    const { port, type } = setup();
    port.setView({ running: true, pending: COMMAND });
    await type("4\r");
    expect(port.calls).toEqual([{ call: "answer", stepIndex: 3, answer: { kind: "permission", allow: true }, delivered: true }]);
  });

  it("moves the pointer by digit with digits accepted (agy 1.0.10)", async () => {
    const { port, type } = setup({ digits: "accept" });
    port.setView({ running: true, pending: COMMAND });
    await type("4\r");
    expect(port.calls).toEqual([{ call: "answer", stepIndex: 3, answer: { kind: "permission", allow: false }, delivered: true }]);
  });

  it("takes no text in a dialog, but the Enter after it confirms the pointed option (fact 15)", async () => {
    const { port, text, type } = setup();
    port.setView({ running: true, pending: COMMAND });
    await type("No, because it is risky");
    expect(text()).not.toContain("because");
    await type("\r");
    expect(port.calls).toEqual([{ call: "answer", stepIndex: 3, answer: { kind: "permission", allow: true }, delivered: true }]);
  });

  it("declines on Escape and the transcript shows `⎿  User declined the tool call` (fact 22)", async () => {
    const { port, text, type } = setup();
    port.setView({ running: true, pending: COMMAND });
    await type("\x1b");
    await expect.poll(() => port.calls).toEqual([{ call: "answer", stepIndex: 3, answer: { kind: "permission", allow: false }, delivered: true }]);
    expect(text()).toContain("Command\n  ⎿  User declined the tool call");
  });

  it("opens the next WAITING step's dialog only after the stale one is closed, which shows as declined (spike-notes §5.4)", async () => {
    const { port, text, type } = setup();
    port.setView({ running: true, pending: { ...COMMAND, target: "first" } });
    port.setView({ pending: { ...COMMAND, stepIndex: 6, target: "second" } });
    expect(text()).toContain("   first");
    await type("\r");
    expect(text()).toContain("   second");
    expect(text()).toContain("  ⎿  User declined the tool call");
    expect(port.calls).toEqual([{ call: "answer", stepIndex: 3, answer: { kind: "permission", allow: true }, delivered: false }]);
  });

  it("draws a question in the dialog style and answers the pointed option; a multi-select toggles with space", async () => {
    const { port, text, type } = setup();
    const question = (stepIndex: number, multiSelect: boolean): TuiPending => ({
      kind: "question",
      trajectoryId: "t",
      stepIndex,
      questions: [
        {
          question: "Which colours?",
          multiSelect,
          options: [
            { id: "1", text: "red" },
            { id: "2", text: "green" },
            { id: "3", text: "blue" },
          ],
        },
      ],
    });
    port.setView({ running: true, pending: question(5, false) });
    expect(text()).toContain("Question\n" + RULE(120) + "\n\nWhich colours?\n> 1. red\n  2. green\n  3. blue\n\n  ↑/↓ Navigate · enter Select");
    await type(DOWN + "\r");
    port.setView({ pending: question(6, true) });
    expect(text()).toContain("> 1. [ ] red");
    await type(DOWN + " " + DOWN + " ");
    expect(text()).toContain("  2. [x] green\n> 3. [x] blue");
    await type("\r");
    expect(port.calls).toEqual([
      { call: "answer", stepIndex: 5, answer: { kind: "question", selectedOptionIds: ["2"] }, delivered: true },
      { call: "answer", stepIndex: 6, answer: { kind: "question", selectedOptionIds: ["2", "3"] }, delivered: true },
    ]);
  });

  it("dismisses a question on Escape", async () => {
    const { port, type } = setup();
    port.setView({
      running: true,
      pending: { kind: "question", trajectoryId: "t", stepIndex: 2, questions: [{ question: "Pick", multiSelect: false, options: [{ id: "1", text: "a" }] }] },
    });
    await type("\x1b");
    await expect.poll(() => port.calls).toEqual([{ call: "answer", stepIndex: 2, answer: { kind: "dismiss" }, delivered: true }]);
  });
});

describe("fake TUI modes, menus and versions", () => {
  it("cycles default → accept-edits → plan → default with shift+tab, showing the placeholder only in an empty composer (fact 7)", async () => {
    const { tui, type } = setup();
    await type(SHIFT_TAB);
    expect(tui.screen().slice(-3)).toEqual([
      "> Accept-edits mode: file edits auto-approved (shift+tab to cycle)",
      RULE(120),
      expect.stringMatching(/^\? for shortcuts +accept-edits · Gemini · medi$/),
    ]);
    await type(SHIFT_TAB);
    expect(tui.screen().slice(-3)).toEqual([
      "> Plan mode: research & plan only (shift+tab to cycle)",
      RULE(120),
      expect.stringMatching(/^\? for shortcuts +plan · Gemini · medi$/),
    ]);
    await type("draft");
    expect(tui.screen().at(-3)).toBe("> draft");
    await type("\x7f".repeat(5) + SHIFT_TAB);
    expect(tui.screen().slice(-3)).toEqual([">", RULE(120), expect.stringMatching(/^\? for shortcuts +Gemini · mediu$/)]);
  });

  it("starts on the trust screen with --trust-prompt: no rules, no composer, a model-only status row; Enter on Yes opens the composer (fact 16)", async () => {
    const { tui, type } = setup({ trustPath: "~/proj" });
    expect(tui.screen()).toEqual([
      "Accessing workspace:",
      "",
      "~/proj",
      "",
      "Do you trust the contents of this project?",
      "",
      "Antigravity CLI requires permission to read, edit, and execute files here.",
      "",
      "> Yes, I trust this folder",
      "  No, exit",
      "",
      "  ↑/↓ Navigate · enter Confirm",
      expect.stringMatching(/^ +Gemini · mediu$/),
    ]);
    await type(DOWN);
    expect(tui.screen()).toContain("> No, exit");
    await type(UP + "\r");
    expect(tui.screen().slice(-2)).toEqual([RULE(120), expect.stringMatching(/^\? for shortcuts/)]);
  });

  it("exits on `No, exit` of the trust screen", async () => {
    const { tui, type } = setup({ trustPath: "~/proj" });
    await type(DOWN + "\r");
    await tui.closed;
  });

  it("opens the slash popup on `/`, filters by prefix, and Enter runs the HIGHLIGHTED command (fact 20)", async () => {
    const { port, tui, type, text } = setup();
    await type("/");
    expect(tui.screen().slice(3)).toEqual([
      "> /clear                Start a new conversation",
      "  /help                 Show help and available commands",
      "  /model                Switch the model and its effort",
      "  /quit                 Exit the simulated agy",
      "  /status               Show the session status",
      "   ↓ 2 more",
      "",
      "  ↑/↓ Navigate · enter Select · tab Complete",
      expect.stringMatching(/^esc to cancel +Gemini · mediu$/),
    ]);
    await type("sta");
    expect(text()).toContain("> /status ");
    await type(DOWN + "\r");
    expect(text()).toContain("> /statusline\n  ⎿  /statusline is not available in the simulator");
    await type("/cl\r");
    expect(port.calls).toEqual([{ call: "clear" }]);
  });

  it("closes the slash popup on Escape, keeping the draft", async () => {
    const { tui, type } = setup();
    await type("/he");
    expect(tui.screen().join("\n")).toContain("enter Select");
    await type("\x1b");
    await expect.poll(() => tui.screen().join("\n")).not.toContain("enter Select");
    expect(tui.screen().at(-3)).toBe("> /he");
    expect(tui.screen().at(-1)).toMatch(/^\? for shortcuts/);
  });

  it("opens `Switch Model` below an empty composer on /model; ←/→ change the effort and Enter switches the model (fact 17)", async () => {
    const { port, tui, type } = setup();
    await type("/model");
    await type("\r");
    const screen = tui.screen();
    expect(screen.slice(0, 5)).toEqual([RULE(120), ">", RULE(120), "Switch Model", ""]);
    expect(screen[5]).toMatch(/^> Gemini +\(current\)$/);
    expect(screen).toContain("Keyboard: ↑/↓ Navigate  ←/→ Effort  enter Select  esc Go Back");
    expect(screen.at(-1)).toMatch(/^ +Gemini · mediu$/);
    await type("\x1b[C\r");
    expect(port.calls).toEqual([{ call: "setModel", model: "MODEL_PLACEHOLDER_M71" }]);
    expect(tui.screen().join("\n")).toContain("> /model\n  ⎿  Set model to Gemini · high");
    expect(tui.screen().at(-1)).toMatch(/^\? for shortcuts +Gemini · hig$/);
  });

  it("on 1.2.1 drops `? for shortcuts` and draws a three-row input box once a turn used a tool (fact 6)", () => {
    const { port, tui } = setup({ version: "1.2.1" });
    expect(tui.screen().at(-1)).toMatch(/^\? for shortcuts/);
    port.setView({
      transcript: [
        { role: "user", text: "run it" },
        { role: "tool", text: "ok", call: { name: "Bash", arg: "true" } },
        { role: "assistant", text: "Done." },
      ],
    });
    expect(tui.screen().slice(-6)).toEqual([RULE(120), ">", "", "", RULE(120), expect.stringMatching(/^ +Gemini · mediu$/)]);
  });

  it("clears a draft on C-c and settles closed on C-c with an empty draft", async () => {
    const { tui, type } = setup();
    let closed = false;
    void tui.closed.then(() => (closed = true));
    await type("abc\x03");
    expect(tui.screen()).toContain(">");
    expect(closed).toBe(false);
    await type("\x03");
    await tui.closed;
    expect(closed).toBe(true);
  });
});
