/**
 * Answering agy's dialogs by moving the pointer (spike-notes §13), against a
 * scripted dialog that implements the driver's prompt-pane interface and is
 * read by the real screen reader: one key at a time, a re-read after each,
 * Enter only with the `>` on the intended row, nothing more once the screen
 * is not what the last key should have made it. Real-tmux runs of the same
 * paths are in deny-never-approves and deliver-fake-tui.
 */
import { describe, expect, it } from "vitest";
import { answerOnScreen, closeAnsweredPrompt, readScreen, targetOption, type PromptClock, type PromptPane, type ScreenModel } from "../../src/tmux/index.js";

const RULE = "─".repeat(60);

interface DialogScript {
  kind: "command" | "file" | "question";
  options: string[];
  /** Each Down moves this many rows (a person pressing keys too, or a lagging redraw). */
  downStep?: number;
  /** The dialog takes digits and says so in its footer. */
  digits?: boolean;
  /** Escape does nothing (the dialog stays). */
  stuck?: boolean;
}

/** A dialog drawn as agy draws it (our own text, from the facts), reacting to keys. */
class ScriptedDialog implements PromptPane {
  pointer = 0;
  open = true;
  chosen: string | undefined;
  readonly keys: string[] = [];
  constructor(readonly script: DialogScript) {}

  async read(): Promise<ScreenModel> {
    return readScreen(this.text());
  }

  text(): string {
    if (!this.open) return [RULE, ">", RULE, "? for shortcuts"].join("\n");
    const s = this.script;
    const head =
      s.kind === "command"
        ? ["● Bash(npm test) (ctrl+o to expand)", "Command", RULE, "Requesting permission for:", "   npm test", "Do you want to proceed?"]
        : s.kind === "file"
          ? ["● Create(~/notes/todo.md) (ctrl+o to expand)", "Create file", RULE, "~/notes/todo.md  +1", "   1 +  buy milk", "Allow creation of this file?"]
          : ["● Question(Which database?)", "Question", RULE, "Which database?"];
    const rows = s.options.map((label, i) => `${i === this.pointer ? ">" : " "} ${i + 1}. ${label}`);
    const footer = s.digits === true ? "  esc Cancel · 1-4 Select & Continue · enter Continue" : "  ↑/↓ Navigate · enter Select";
    return [...head, ...rows, "", footer, "esc to cancel"].join("\n");
  }

  async sendKeys(keys: readonly string[]): Promise<void> {
    for (const key of keys) {
      this.keys.push(key);
      if (!this.open) continue;
      if (key === "Down") this.pointer = Math.min(this.script.options.length - 1, this.pointer + (this.script.downStep ?? 1));
      else if (key === "Up") this.pointer = Math.max(0, this.pointer - 1);
      else if (key === "Enter") [this.open, this.chosen] = [false, this.script.options[this.pointer]];
      else if (key === "Escape" && this.script.stuck !== true) [this.open, this.chosen] = [false, "declined"];
      else if (/^[0-9]$/.test(key) && this.script.digits === true) [this.open, this.chosen] = [false, this.script.options[Number(key) - 1]];
    }
  }
}

function fakeClock(): PromptClock {
  let now = 0;
  return { now: () => now, sleep: async (ms) => void (now += ms) };
}

const COMMAND = ["Yes", "Yes, and always allow in this conversation for commands that start with 'npm'", "Yes, and always allow for commands that start with 'npm' (Persist to settings.json)", "No"];
const COMMAND_SIX = [...COMMAND, "No, and always deny for commands that start with 'npm' in this conversation", "No, and always deny for commands that start with 'npm' (Persist to settings.json)"];
const FILE = ["Yes, allow creation", "No, deny creation"];

describe("choosing the row a choice means", () => {
  it("reads 1. Yes of a command dialog, four or six options, and of a file dialog", async () => {
    for (const options of [COMMAND, COMMAND_SIX]) {
      const prompt = (await new ScriptedDialog({ kind: "command", options }).read()).prompt!;
      expect(targetOption(prompt, { kind: "approve" })).toEqual({ position: 1 });
    }
    const file = (await new ScriptedDialog({ kind: "file", options: FILE }).read()).prompt!;
    expect(targetOption(file, { kind: "approve" })).toEqual({ position: 1 });
  });

  it("picks a question's option by label, ignoring case and spacing, and refuses a label it does not show", async () => {
    const prompt = (await new ScriptedDialog({ kind: "question", options: ["PostgreSQL", "SQLite", "None yet"] }).read()).prompt!;
    expect(targetOption(prompt, { kind: "option", label: "  none   YET " })).toEqual({ position: 3 });
    expect(targetOption(prompt, { kind: "option", label: "MySQL" })).toMatchObject({ failure: expect.stringContaining('no option "MySQL"') });
  });
});

describe("answering on screen", () => {
  it("moves Down one key at a time and presses Enter only on the intended row", async () => {
    const dialog = new ScriptedDialog({ kind: "question", options: ["PostgreSQL", "SQLite", "None yet"] });
    const result = await answerOnScreen(dialog, { kind: "option", label: "None yet" }, {}, fakeClock());
    expect(result).toMatchObject({ result: "answered", keys: ["Down", "Down", "Enter"] });
    expect(dialog.chosen).toBe("None yet");
  });

  it("presses nothing more, and never Enter, when the pointer lands somewhere else than one row down", async () => {
    const dialog = new ScriptedDialog({ kind: "question", options: ["PostgreSQL", "SQLite", "None yet", "Other"], downStep: 2 });
    const result = await answerOnScreen(dialog, { kind: "option", label: "Other" }, {}, fakeClock());
    expect(result).toMatchObject({ result: "failed", keys: ["Down"], screen: { prompt: { pointer: 3 } } });
    expect(result.reason).toContain("the pointer is on row 3, not 2");
    expect(dialog.open).toBe(true);
  });

  it("declines with Escape alone, on a six-option command dialog too", async () => {
    const dialog = new ScriptedDialog({ kind: "command", options: COMMAND_SIX });
    expect(await answerOnScreen(dialog, { kind: "decline" }, {}, fakeClock())).toMatchObject({ result: "answered", keys: ["Escape"] });
    expect(dialog.chosen).toBe("declined");
  });

  it("says failed when Escape leaves the dialog open, and presses nothing else", async () => {
    const dialog = new ScriptedDialog({ kind: "command", options: COMMAND, stuck: true });
    expect(await answerOnScreen(dialog, { kind: "decline" }, { settleTimeoutMs: 500 }, fakeClock())).toMatchObject({ result: "failed", keys: ["Escape"] });
    expect(await closeAnsweredPrompt(dialog, { settleTimeoutMs: 500 }, fakeClock())).toMatchObject({ result: "still_open", keys: ["Escape"] });
    expect(dialog.keys).toEqual(["Escape", "Escape"]);
  });

  it("types a digit only where the dialog advertises digits", async () => {
    const menu = new ScriptedDialog({ kind: "question", options: ["Bug", "Idea", "Praise", "Other"], digits: true });
    expect(await answerOnScreen(menu, { kind: "option", label: "Praise" }, {}, fakeClock())).toMatchObject({ result: "answered", keys: ["3"] });
    expect(menu.chosen).toBe("Praise");
  });

  it("refuses to act on a dialog of a kind it was not asked about", async () => {
    const dialog = new ScriptedDialog({ kind: "file", options: FILE });
    expect(await answerOnScreen(dialog, { kind: "approve" }, { kinds: ["command"] }, fakeClock())).toMatchObject({ result: "failed", keys: [] });
    expect(dialog.open).toBe(true);
  });
});

describe("closing agy's leftover dialog", () => {
  it("presses Escape once and reads until the dialog has gone", async () => {
    const dialog = new ScriptedDialog({ kind: "file", options: FILE });
    expect(await closeAnsweredPrompt(dialog, {}, fakeClock())).toMatchObject({ result: "closed", keys: ["Escape"], screen: { state: "ready" } });
  });

  it("presses nothing when no dialog is open", async () => {
    const dialog = new ScriptedDialog({ kind: "file", options: FILE });
    dialog.open = false;
    expect(await closeAnsweredPrompt(dialog, {}, fakeClock())).toMatchObject({ result: "none", keys: [] });
    expect(dialog.keys).toEqual([]);
  });
});
