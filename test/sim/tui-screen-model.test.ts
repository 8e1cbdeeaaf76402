/**
 * The simulator's screens, read by the same `readScreen` that reads real agy,
 * give the model the matching real agy screen gives (spike-notes §13). Each
 * expected object is written from the facts — what agy's own screen of that
 * kind reads as — with the simulator's own model, commands and paths.
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createFakeTui, type FakeTuiOptions } from "../../src/sim/tui/fake-tui.js";
import type { TuiPending } from "../../src/sim/tui/tui-port.js";
import { readScreen } from "../../src/tmux/screen-model.js";
import type { ScreenModel } from "../../src/tmux/screen-types.js";
import { createFakeTuiPort, type FakeTuiPort } from "../support/fake-tui-port.js";

const COLUMNS = 200;
const DOWN = "\x1b[B";

/** A simulator TUI as wide as the captured panes; `capture()` reads like `capture-pane -p` of a tall pane. */
function sim(options: Partial<Omit<FakeTuiOptions, "port" | "input" | "output">> = {}) {
  const port = createFakeTuiPort();
  const input = new PassThrough();
  const output = new PassThrough();
  output.resume();
  const tui = createFakeTui({
    port,
    input,
    output,
    columns: COLUMNS,
    rows: 1000,
    banner: ["agy (simulated by agy-bridge) · RPC http://127.0.0.1:1 (plain)"],
    ...options,
  });
  tui.start();
  const type = async (bytes: string): Promise<void> => {
    input.write(bytes);
    await new Promise((r) => setTimeout(r, 40));
  };
  // A top-anchored screen: the content, then the pane's blank rows.
  const capture = (): string => `${[...tui.screen(), ...Array.from({ length: 20 }, () => "")].join("\n")}\n`;
  return { port, tui, type, capture };
}

const IDLE: ScreenModel = { state: "ready", composer: "empty", draft: null, mode: "default", model: "Gemini", prompt: null };
const SCRIPT = ["python3 -c 'import os", "import sys", "", "# report the working directory", "print(os.getcwd())", "print(sys.executable)'"].join("\n");
const QUOTED = `'${SCRIPT.slice(0, 80)}...'`.replace(/\s+/g, " ");

function command(target: string, deniedBefore = false): TuiPending {
  return { kind: "permission", trajectoryId: "t", stepIndex: 5, target, description: "", ...(deniedBefore ? { deniedBefore } : {}) };
}

function history(port: FakeTuiPort): void {
  port.setView({
    transcript: [
      { role: "user", text: "Create notes.md with a title" },
      { role: "reasoning", text: "Thought for 1s, 210 tokens" },
      { role: "tool", text: "User declined the tool call", call: { name: "Create", arg: "~/proj/notes.md" }, header: "Create file" },
      { role: "user", text: "Then run the tests" },
      { role: "tool", text: "User declined the tool call", call: { name: "Bash", arg: "npm test" }, header: "Command" },
    ],
  });
}

describe("the simulator's screens read like agy's", () => {
  it("idle at start, like agy 1.1.27's boot screen (fact 2)", () => {
    expect(readScreen(sim().capture())).toEqual(IDLE);
  });

  it("idle after declined tool calls, like agy 1.1.27 after a deny", () => {
    const { port, capture } = sim();
    history(port);
    expect(readScreen(capture())).toEqual(IDLE);
  });

  it("generating: busy, the empty composer still drawn (fact 5)", () => {
    const { port, capture } = sim();
    port.setView({ running: true, transcript: [{ role: "user", text: "hello" }] });
    expect(readScreen(capture())).toEqual({ ...IDLE, state: "busy" });
  });

  it("the command dialog: a prompt with four numbered options, pointer on 1, no composer (facts 8–9, 12)", () => {
    const { port, capture } = sim();
    history(port);
    port.setView({ running: true, pending: command("npm run lint") });
    expect(readScreen(capture())).toEqual({
      ...IDLE,
      state: "prompt",
      composer: "absent",
      prompt: {
        kind: "command",
        question: "Do you want to proceed?",
        options: [
          { label: "Yes", number: 1 },
          { label: "Yes, and always allow in this conversation for commands that start with 'npm run lint'", number: 2 },
          { label: "Yes, and always allow for commands that start with 'npm run lint' (Persist to settings.json)", number: 3 },
          { label: "No", number: 4 },
        ],
        pointer: 1,
        keys: "arrows",
      },
    });
  });

  it("a multi-line command asked again: six options whose wrapped labels fold into one each (facts 10, 13)", () => {
    const { port, capture } = sim();
    port.setView({ running: true, pending: command(SCRIPT, true) });
    const model = readScreen(capture());
    expect(model.prompt?.options).toEqual([
      { label: "Yes", number: 1 },
      { label: `Yes, and always allow in this conversation for commands that start with ${QUOTED}`, number: 2 },
      { label: `Yes, and always allow for commands that start with ${QUOTED} (Persist to settings.json)`, number: 3 },
      { label: "No", number: 4 },
      { label: `No, and always deny for commands that start with ${QUOTED} in this conversation`, number: 5 },
      { label: `No, and always deny for commands that start with ${QUOTED} (Persist to settings.json)`, number: 6 },
    ]);
    expect(model).toMatchObject({ state: "prompt", composer: "absent", prompt: { kind: "command", pointer: 1, keys: "arrows" } });
  });

  it("the pointer follows Down (fact 12)", async () => {
    const { port, type, capture } = sim();
    port.setView({ running: true, pending: command("npm run lint") });
    await type(DOWN + DOWN + DOWN);
    expect(readScreen(capture()).prompt?.pointer).toBe(4);
  });

  it("the file-creation dialog: two options, No is 2 (fact 11)", () => {
    const { port, capture } = sim();
    port.setView({
      running: true,
      pending: { kind: "permission", trajectoryId: "t", stepIndex: 2, target: "~/proj/notes.md", description: "", action: "create-file", preview: ["# Notes"] },
    });
    expect(readScreen(capture())).toEqual({
      ...IDLE,
      state: "prompt",
      composer: "absent",
      prompt: {
        kind: "file",
        question: "Allow creation of this file?",
        options: [
          { label: "Yes, allow creation", number: 1 },
          { label: "No, deny creation", number: 2 },
        ],
        pointer: 1,
        keys: "arrows",
        fileAction: "create",
      },
    });
  });

  it("the simulator's own dialogs read as prompts too: a question, and a file-read gate (No is 2)", () => {
    const question = sim();
    question.port.setView({
      running: true,
      pending: {
        kind: "question",
        trajectoryId: "t",
        stepIndex: 1,
        questions: [
          {
            question: "Which colour?",
            multiSelect: false,
            options: [
              { id: "1", text: "red" },
              { id: "2", text: "green" },
            ],
          },
        ],
      },
    });
    expect(readScreen(question.capture()).prompt).toEqual({
      kind: "question",
      question: "Which colour?",
      options: [
        { label: "red", number: 1 },
        { label: "green", number: 2 },
      ],
      pointer: 1,
      keys: "arrows",
    });
    const file = sim();
    file.port.setView({
      running: true,
      pending: { kind: "permission", trajectoryId: "t", stepIndex: 3, target: "/home/sim/.profile", description: "", action: "read-file" },
    });
    expect(readScreen(file.capture())).toMatchObject({
      state: "prompt",
      composer: "absent",
      prompt: {
        question: "Allow reading this file?",
        options: [
          { label: "Yes, allow reading", number: 1 },
          { label: "No, deny reading", number: 2 },
        ],
        pointer: 1,
      },
    });
  });

  it("plan and accept-edits modes: the placeholder is an empty composer, the mode is read (fact 7)", async () => {
    const { type, capture } = sim();
    await type("\x1b[Z");
    expect(readScreen(capture())).toEqual({ ...IDLE, mode: "accept-edits" });
    await type("\x1b[Z");
    expect(readScreen(capture())).toEqual({ ...IDLE, mode: "plan" });
  });

  it("a draft is the person's text", async () => {
    const { type, capture } = sim();
    await type("fix the flaky test");
    expect(readScreen(capture())).toEqual({ ...IDLE, composer: "draft", draft: "fix the flaky test" });
  });

  it("1.2.1 after a tool turn: ready without `? for shortcuts`, three-row box (fact 6)", () => {
    const { port, capture } = sim({ version: "1.2.1" });
    history(port);
    expect(readScreen(capture())).toEqual(IDLE);
  });

  it("1.0.x's `Gemini (Medium)` label reads as the model alone (fact 2)", () => {
    expect(readScreen(sim({ version: "1.0" }).capture())).toEqual(IDLE);
  });

  it("the trust screen: a prompt with two unnumbered options, no composer (fact 16)", () => {
    expect(readScreen(sim({ trustPath: "~/proj" }).capture())).toEqual({
      ...IDLE,
      state: "prompt",
      composer: "absent",
      prompt: {
        kind: "trust",
        question: "Do you trust the contents of this project?",
        options: [
          { label: "Yes, I trust this folder", number: null },
          { label: "No, exit", number: null },
        ],
        pointer: 1,
        keys: "arrows",
      },
    });
  });

  it("the /model picker under an empty composer holds the keyboard (fact 17)", async () => {
    const { type, capture } = sim();
    await type("/model\r");
    expect(readScreen(capture())).toEqual({
      ...IDLE,
      state: "prompt",
      prompt: { kind: "picker", question: null, options: [{ label: "Gemini (current)", number: null }], pointer: 1, keys: "arrows" },
    });
  });

  it("the slash popup holds the keyboard although nothing runs; the draft is the typed `/` (fact 20)", async () => {
    const { type, capture } = sim();
    await type("/");
    expect(readScreen(capture())).toEqual({
      ...IDLE,
      state: "prompt",
      composer: "draft",
      draft: "/",
      prompt: {
        kind: "slash",
        question: null,
        options: [
          { label: "/clear Start a new conversation", number: null },
          { label: "/help Show help and available commands", number: null },
          { label: "/model Switch the model and its effort", number: null },
          { label: "/quit Exit the simulated agy", number: null },
          { label: "/status Show the session status", number: null },
        ],
        pointer: 1,
        keys: "arrows",
      },
    });
  });
});
