/**
 * Answering and closing agy's dialogs with the keys the key table gives each
 * agy version, against a scripted dialog that implements the driver's
 * prompt-pane interface and is read by the real screen reader: one key at a
 * time, a re-read after each, Enter only with the `>` on the intended row,
 * a digit alone where a digit answers at once (agy 1.2.x, spike-notes K1),
 * "No" by its label, Escape never at a 1.2.x approval (K5). Real-tmux runs
 * of the same paths are in deny-never-approves, agy12-keys and
 * deliver-fake-tui.
 */
import { describe, expect, it } from "vitest";
import {
  answerOnScreen,
  closeAnsweredPrompt,
  readScreen,
  targetOption,
  type ChosenKey,
  type PromptClock,
  type PromptPane,
  type ScreenModel,
} from "../../src/tmux/index.js";

const RULE = "─".repeat(60);

interface DialogScript {
  kind: "command" | "command12" | "file" | "question";
  options: string[];
  /** Each Down moves this many rows (a person pressing keys too, or a lagging redraw). */
  downStep?: number;
  /** The dialog takes digits and says so in its footer. */
  digits?: boolean;
  /** A digit answers at once, unadvertised (agy 1.2.x). */
  digitsAnswer?: boolean;
  /** What Escape does: declines (1.0/1.1), interrupts the turn (1.2.x approvals), or nothing. */
  escape?: "declines" | "interrupts" | "nothing";
  /** agy closes the dialog by itself after this many reads (an RPC answer reached it). */
  closesAfterReads?: number;
}

/** A dialog drawn as agy draws it (our own text, from the facts), reacting to keys. */
class ScriptedDialog implements PromptPane {
  pointer = 0;
  open = true;
  chosen: string | undefined;
  interrupted = false;
  reads = 0;
  readonly keys: string[] = [];
  constructor(readonly script: DialogScript) {}

  async read(): Promise<ScreenModel> {
    this.reads++;
    if (this.script.closesAfterReads !== undefined && this.reads > this.script.closesAfterReads) this.open = false;
    return readScreen(this.text());
  }

  text(): string {
    if (!this.open) return [RULE, ">", RULE, "? for shortcuts"].join("\n");
    const s = this.script;
    const head =
      s.kind === "command"
        ? ["● Bash(npm test) (ctrl+o to expand)", "Command", RULE, "Requesting permission for:", "   npm test", "Do you want to proceed?"]
        : s.kind === "command12"
          ? ["● Bash(du -sh build) (ctrl+o to expand)", "Command", RULE, "Requesting permission for:", "   du -sh build", "Run this command?"]
          : s.kind === "file"
            ? ["● Create(~/notes/todo.md) (ctrl+o to expand)", "Create file", RULE, "~/notes/todo.md  +1", "   1 +  buy milk", "Allow creation of this file?"]
            : ["● Question(Which database?)", "Question", RULE, "Which database?"];
    const rows = s.options.map((label, i) => `${i === this.pointer ? ">" : " "} ${i + 1}. ${label}`);
    const footer = s.digits === true ? "  esc Cancel · 1-4 Select & Continue · enter Continue" : "  ↑/↓ Navigate · enter Select";
    return [...head, ...rows, "", footer, "esc to cancel"].join("\n");
  }

  async sendKeys(chosen: readonly ChosenKey[]): Promise<void> {
    for (const key of chosen.map((k) => k.key)) {
      this.keys.push(key);
      if (!this.open) continue;
      if (key === "Down") this.pointer = Math.min(this.script.options.length - 1, this.pointer + (this.script.downStep ?? 1));
      else if (key === "Up") this.pointer = Math.max(0, this.pointer - 1);
      else if (key === "Enter") [this.open, this.chosen] = [false, this.script.options[this.pointer]];
      else if (key === "Escape") {
        const escape = this.script.escape ?? "declines";
        if (escape === "declines") [this.open, this.chosen] = [false, "declined"];
        if (escape === "interrupts") [this.open, this.interrupted] = [false, true];
      } else if (/^[0-9]$/.test(key) && (this.script.digits === true || this.script.digitsAnswer === true)) {
        [this.open, this.chosen] = [false, this.script.options[Number(key) - 1]];
      }
    }
  }
}

function fakeClock(): PromptClock {
  let now = 0;
  return { now: () => now, sleep: async (ms) => void (now += ms) };
}

const COMMAND = [
  "Yes",
  "Yes, and always allow in this conversation for commands that start with 'npm'",
  "Yes, and always allow for commands that start with 'npm' (Persist to settings.json)",
  "No",
];
const COMMAND_SIX = [
  ...COMMAND,
  "No, and always deny for commands that start with 'npm' in this conversation",
  "No, and always deny for commands that start with 'npm' (Persist to settings.json)",
];
const COMMAND_12 = [
  "Yes, run command",
  "Yes, and always allow in this conversation for commands that start with 'du'",
  "Yes, and always allow for commands that start with 'du' (Persist to settings.json)",
  "No, cancel",
];
const COMMAND_12_TWO = ["Yes, run command", "No, cancel"];
const FILE = ["Yes, allow creation", "No, deny creation"];
const FILE_OUTSIDE = ["Yes, allow creation", "Yes, and always allow non-workspace access", "No, deny creation"];
const v12 = { agyVersion: "1.2.10" };
const v11 = { agyVersion: "1.1.27" };
const v10 = { agyVersion: "1.0.10" };

const dialog12 = (options = COMMAND_12, extra: Partial<DialogScript> = {}) =>
  new ScriptedDialog({ kind: "command12", options, digitsAnswer: true, escape: "interrupts", ...extra });

describe("choosing the row a choice means", () => {
  it("reads the plain Yes row 1 of a command dialog (4 or 6 options, 1.2.x wording) and of a file dialog", async () => {
    for (const options of [COMMAND, COMMAND_SIX]) {
      const prompt = (await new ScriptedDialog({ kind: "command", options }).read()).prompt!;
      expect(targetOption(prompt, { kind: "approve" })).toEqual({ position: 1 });
    }
    expect(targetOption((await dialog12().read()).prompt!, { kind: "approve" })).toEqual({ position: 1 });
    const file = (await new ScriptedDialog({ kind: "file", options: FILE }).read()).prompt!;
    expect(targetOption(file, { kind: "approve" })).toEqual({ position: 1 });
  });

  it("picks a question's option by label, ignoring case and spacing, and refuses a label it does not show", async () => {
    const prompt = (await new ScriptedDialog({ kind: "question", options: ["PostgreSQL", "SQLite", "None yet"] }).read()).prompt!;
    expect(targetOption(prompt, { kind: "option", label: "  none   YET " })).toEqual({ position: 3 });
    expect(targetOption(prompt, { kind: "option", label: "MySQL" })).toMatchObject({ failure: expect.stringContaining('no option "MySQL"') });
  });
});

describe("answering on screen, agy 1.0/1.1 and unknown versions: the pointer", () => {
  it("moves Down one key at a time and presses Enter only on the intended row", async () => {
    for (const options of [v11, {}]) {
      const dialog = new ScriptedDialog({ kind: "question", options: ["PostgreSQL", "SQLite", "None yet"] });
      const result = await answerOnScreen(dialog, { kind: "option", label: "None yet" }, options, fakeClock());
      expect(result).toMatchObject({ result: "answered", keys: ["Down", "Down", "Enter"] });
      expect(dialog.chosen).toBe("None yet");
    }
  });

  it("presses nothing more, and never Enter, when the pointer lands somewhere else than one row down", async () => {
    const dialog = new ScriptedDialog({ kind: "question", options: ["PostgreSQL", "SQLite", "None yet", "Other"], downStep: 2 });
    const result = await answerOnScreen(dialog, { kind: "option", label: "Other" }, v11, fakeClock());
    expect(result).toMatchObject({ result: "failed", keys: ["Down"], screen: { prompt: { pointer: 3 } } });
    expect(result.reason).toContain("the pointer is on row 3, not 2");
    expect(dialog.open).toBe(true);
  });

  it("declines a command dialog by moving onto its No row, 4 of 4 or of 6, and Enter — never Escape", async () => {
    for (const [options, version] of [
      [COMMAND, v10],
      [COMMAND_SIX, v11],
      [COMMAND, {}],
    ] as const) {
      const dialog = new ScriptedDialog({ kind: "command", options: [...options] });
      expect(await answerOnScreen(dialog, { kind: "decline" }, version, fakeClock())).toMatchObject({
        result: "answered",
        keys: ["Down", "Down", "Down", "Enter"],
      });
      expect(dialog.chosen).toBe("No");
    }
  });

  it("declines a question with Escape where it declines, and refuses on an unknown version", async () => {
    const question = new ScriptedDialog({ kind: "question", options: ["PostgreSQL", "SQLite"] });
    expect(await answerOnScreen(question, { kind: "decline" }, v11, fakeClock())).toMatchObject({ result: "answered", keys: ["Escape"] });
    const unknown = new ScriptedDialog({ kind: "question", options: ["PostgreSQL", "SQLite"] });
    expect(await answerOnScreen(unknown, { kind: "decline" }, {}, fakeClock())).toMatchObject({ result: "failed", keys: [] });
    expect(unknown.open).toBe(true);
  });

  it("types a digit only where the dialog advertises digits", async () => {
    const menu = new ScriptedDialog({ kind: "question", options: ["Bug", "Idea", "Praise", "Other"], digits: true });
    expect(await answerOnScreen(menu, { kind: "option", label: "Praise" }, {}, fakeClock())).toMatchObject({ result: "answered", keys: ["3"] });
    expect(menu.chosen).toBe("Praise");
  });

  it("refuses to act on a dialog of a kind it was not asked about", async () => {
    const dialog = new ScriptedDialog({ kind: "file", options: FILE });
    expect(await answerOnScreen(dialog, { kind: "approve" }, { kinds: ["command"], ...v11 }, fakeClock())).toMatchObject({ result: "failed", keys: [] });
    expect(dialog.open).toBe(true);
  });
});

describe("answering on screen, agy 1.2.x: the digit alone", () => {
  it("approves with 1 alone and declines with the No row's own digit — 4, 2, or 3 — never Enter after it, never Escape", async () => {
    const approve = dialog12();
    expect(await answerOnScreen(approve, { kind: "approve" }, v12, fakeClock())).toMatchObject({ result: "answered", keys: ["1"] });
    expect(approve.chosen).toBe("Yes, run command");
    for (const [options, digit, kind] of [
      [COMMAND_12, "4", "command12"],
      [COMMAND_12_TWO, "2", "command12"],
      [FILE_OUTSIDE, "3", "file"],
    ] as const) {
      const dialog = new ScriptedDialog({ kind, options: [...options], digitsAnswer: true, escape: "interrupts" });
      expect(await answerOnScreen(dialog, { kind: "decline" }, v12, fakeClock())).toMatchObject({ result: "answered", keys: [digit] });
      expect(dialog.chosen).toMatch(/^No, /);
      expect(dialog.interrupted).toBe(false);
    }
  });
});

describe("closing agy's leftover dialog after an RPC answer", () => {
  it("on agy 1.0.x presses Escape once and reads until the dialog has gone", async () => {
    const dialog = new ScriptedDialog({ kind: "file", options: FILE });
    expect(await closeAnsweredPrompt(dialog, v10, fakeClock())).toMatchObject({ result: "closed", keys: ["Escape"], screen: { state: "ready" } });
  });

  it("presses nothing when agy closes the dialog by itself within the wait", async () => {
    const dialog = dialog12(COMMAND_12, { closesAfterReads: 3 });
    expect(await closeAnsweredPrompt(dialog, { ...v12, answer: { kind: "permission", allow: true } }, fakeClock())).toMatchObject({
      result: "closed",
      keys: [],
    });
    expect(dialog.keys).toEqual([]);
  });

  it("on agy 1.2.x presses the digit the answer chose, never Escape: the approved command is not cancelled", async () => {
    const approved = dialog12();
    expect(await closeAnsweredPrompt(approved, { ...v12, answer: { kind: "permission", allow: true } }, fakeClock())).toMatchObject({
      result: "closed",
      keys: ["1"],
    });
    expect(approved.interrupted).toBe(false);
    const denied = dialog12(COMMAND_12_TWO);
    expect(await closeAnsweredPrompt(denied, { ...v12, answer: { kind: "permission", allow: false } }, fakeClock())).toMatchObject({
      result: "closed",
      keys: ["2"],
    });
  });

  it("leaves the dialog, pressing nothing, where no key is safe: 1.2.x without the answer, 1.1.x, unknown, newer", async () => {
    for (const options of [v12, v11, {}, { agyVersion: "1.3.1" }]) {
      const dialog = dialog12();
      const result = await closeAnsweredPrompt(
        dialog,
        { ...options, ...(options === v12 ? {} : { answer: { kind: "permission", allow: true } as const }) },
        fakeClock(),
      );
      expect(result).toMatchObject({ result: "left_open", keys: [], reason: expect.stringContaining("--close-stale") });
      expect(dialog.keys).toEqual([]);
      expect(dialog.open).toBe(true);
    }
  });

  it("presses nothing while a step WAITS: the dialog on screen may be that step's own", async () => {
    const dialog = new ScriptedDialog({ kind: "file", options: FILE });
    const result = await closeAnsweredPrompt(dialog, { ...v10, hasWaitingStep: async () => true, settleTimeoutMs: 500 }, fakeClock());
    expect(result).toMatchObject({ result: "left_open", keys: [], reason: expect.stringContaining("WAITING") });
  });

  it("presses nothing when a step starts WAITING right before the key would go", async () => {
    const dialog = dialog12();
    const answers = [false, true];
    const result = await closeAnsweredPrompt(
      dialog,
      { ...v12, answer: { kind: "permission", allow: true }, hasWaitingStep: async () => answers.shift() ?? true },
      fakeClock(),
    );
    expect(result).toMatchObject({ result: "left_open", keys: [], reason: expect.stringContaining("started WAITING just now") });
    expect(dialog.keys).toEqual([]);
  });

  it("closes with Escape where no key is safe only when the person asks for it (closeStale)", async () => {
    const dialog = dialog12();
    expect(await closeAnsweredPrompt(dialog, { ...v12, closeStale: true }, fakeClock())).toMatchObject({ result: "closed", keys: ["Escape"] });
  });

  it("says still_open when the key was pressed and the dialog stayed, and presses nothing else", async () => {
    const dialog = new ScriptedDialog({ kind: "command", options: COMMAND, escape: "nothing" });
    expect(await closeAnsweredPrompt(dialog, { ...v10, settleTimeoutMs: 500 }, fakeClock())).toMatchObject({ result: "still_open", keys: ["Escape"] });
    expect(dialog.keys).toEqual(["Escape"]);
  });

  it("presses nothing when no dialog is open", async () => {
    const dialog = new ScriptedDialog({ kind: "file", options: FILE });
    dialog.open = false;
    expect(await closeAnsweredPrompt(dialog, v10, fakeClock())).toMatchObject({ result: "none", keys: [] });
    expect(dialog.keys).toEqual([]);
  });
});
