/**
 * Delivery decisions that real panes rarely show on demand — an Enter the
 * TUI swallows, a paste a dialog eats, a TUI that never submits — against a
 * scripted composer that implements the driver's pane interface, on a fake
 * clock (spike-notes §6.2 steps 6–7).
 */
import { describe, expect, it } from "vitest";
import { deliverTurnToPane, type ChosenKey, type TurnClock, type TurnPane } from "../../src/tmux/index.js";

const RULE = "─".repeat(40);

interface Script {
  /** How many Enters the composer ignores before it submits (Infinity: never). */
  ignoredEnters?: number;
  /** The paste never reaches the composer (a dialog took it). */
  pasteLost?: boolean;
  running?: boolean;
  /** After this many send-keys calls, a command dialog replaces the composer (a gate parked). */
  dialogAfterKeys?: number;
}

/** agy's command dialog as it replaces the composer (spike-notes §13), written for these tests. */
const DIALOG = [
  "● Bash(make clean) (ctrl+o to expand)",
  "Command",
  RULE,
  "Requesting permission for:",
  "   make clean",
  "Do you want to proceed?",
  "> 1. Yes",
  "  2. Yes, and always allow in this conversation for commands that start with 'make'",
  "  3. Yes, and always allow for commands that start with 'make' (Persist to settings.json)",
  "  4. No",
  "",
  "  ↑/↓ Navigate · tab Amend · ctrl+g edit/expand command",
  "esc to cancel",
];

class ScriptedComposer implements TurnPane {
  draft = "";
  readonly keys: string[][] = [];
  readonly pastes: string[] = [];
  readonly submitted: string[] = [];
  #ignored = 0;
  constructor(readonly script: Script) {}

  async capture(): Promise<string> {
    if (this.keys.length >= (this.script.dialogAfterKeys ?? Infinity)) return DIALOG.join("\n");
    const lines = this.draft.split("\n").map((line, i) => `${i === 0 ? ">" : " "} ${line}`.trimEnd());
    const spinner = this.script.running === true ? ["⢿  Generating..."] : [];
    return [...spinner, RULE, ...lines, RULE, this.script.running === true ? "esc to cancel" : "? for shortcuts"].join("\n");
  }
  async assertAlive(): Promise<void> {}
  async sendKeys(chosen: readonly ChosenKey[]): Promise<void> {
    const keys = chosen.map((k) => k.key);
    this.keys.push([...keys]);
    if (keys[0] !== "Enter") return;
    if (this.#ignored < (this.script.ignoredEnters ?? 0)) {
      this.#ignored++;
      return;
    }
    if (this.draft !== "") this.submitted.push(this.draft);
    this.draft = "";
  }
  async paste(text: string): Promise<void> {
    this.pastes.push(text);
    if (this.script.pasteLost !== true) this.draft += text;
  }
}

function fakeClock(): TurnClock {
  let now = 0;
  return { now: () => now, sleep: async (ms) => void (now += ms) };
}

const enters = (pane: ScriptedComposer): number => pane.keys.filter((k) => k[0] === "Enter").length;

describe("deliverTurnToPane", () => {
  it("presses Enter again when the first one left the draft in the composer", async () => {
    const pane = new ScriptedComposer({ ignoredEnters: 1 });
    const result = await deliverTurnToPane(pane, "hello there", {}, fakeClock());
    expect(result.result).toBe("delivered");
    expect(enters(pane)).toBe(2);
    expect(pane.submitted).toEqual(["hello there"]);
  });

  it("refuses, pasting nothing, when a draft it was told to clear never shows gone", async () => {
    const pane = new ScriptedComposer({});
    pane.draft = "a draft the clearing keys do not reach";
    const result = await deliverTurnToPane(pane, "my turn", { clearDraft: true, agyVersion: "1.1.27" }, fakeClock());
    expect(result).toMatchObject({ result: "failed", reason: expect.stringContaining("could not be cleared") });
    expect(pane.keys.length).toBeGreaterThan(0);
    expect(pane.pastes).toEqual([]);
    expect(enters(pane)).toBe(0);
  });

  it("fails after the bounded number of Enters when the draft never leaves", async () => {
    const pane = new ScriptedComposer({ ignoredEnters: Infinity });
    const result = await deliverTurnToPane(pane, "hello there", { enterAttempts: 3 }, fakeClock());
    expect(result).toEqual({ result: "failed", reason: "Enter was pressed 3 times but the draft stayed in the composer; the turn did not start." });
    expect(enters(pane)).toBe(3);
  });

  it("does not press Enter when the paste never shows in an idle composer", async () => {
    const pane = new ScriptedComposer({ pasteLost: true });
    const result = await deliverTurnToPane(pane, "lost text", {}, fakeClock());
    expect(result).toMatchObject({ result: "failed", reason: expect.stringContaining("never showed in the composer within 5 s, so Enter was not pressed") });
    expect(enters(pane)).toBe(0);
  });

  it("types nothing while a turn runs, and refuses once the bound passes, naming the busy screen", async () => {
    const pane = new ScriptedComposer({ running: true });
    const result = await deliverTurnToPane(pane, "queued text", { readyTimeoutMs: 2_000 }, fakeClock());
    expect(result).toMatchObject({ result: "failed", reason: expect.stringContaining("agy was still working"), screen: { state: "busy" } });
    expect(pane.pastes).toEqual([]);
    expect(pane.keys).toEqual([]);
  });

  it("stops clearing a draft the moment a dialog takes the keyboard: no clearing key reaches it", async () => {
    const pane = new ScriptedComposer({ dialogAfterKeys: 1 });
    pane.draft = "line one\nline two\nline three";
    const result = await deliverTurnToPane(pane, "my turn", { clearDraft: true, agyVersion: "1.1.27" }, fakeClock());
    expect(result).toMatchObject({ result: "failed", reason: expect.stringContaining("command prompt"), screen: { prompt: { kind: "command" } } });
    expect(pane.keys).toEqual([["C-a", "C-k", "BSpace"]]);
    expect(pane.pastes).toEqual([]);
  });

  it("clears a draft on agy 1.2.x with BSpace alone: ctrl+k approves a subagent there (K16)", async () => {
    const pane = new ScriptedComposer({ dialogAfterKeys: 1 });
    pane.draft = "half a thought";
    await deliverTurnToPane(pane, "my turn", { clearDraft: true, agyVersion: "1.2.10" }, fakeClock());
    expect(pane.keys.length).toBe(1);
    expect(new Set(pane.keys[0])).toEqual(new Set(["BSpace"]));
    expect(pane.keys[0]!.length).toBe("half a thought".length + 2);
  });

  it("sends no C-k where agy's version is unknown or newer than the key facts: BSpace only", async () => {
    for (const agyVersion of [null, "1.3.2"]) {
      const pane = new ScriptedComposer({ dialogAfterKeys: 1 });
      pane.draft = "someone's draft";
      await deliverTurnToPane(pane, "my turn", { clearDraft: true, agyVersion }, fakeClock());
      expect(new Set(pane.keys.flat())).toEqual(new Set(["BSpace"]));
      expect(pane.pastes).toEqual([]);
    }
  });

  it("refuses a turn starting with / unless it is sent as a slash command, touching nothing", async () => {
    const pane = new ScriptedComposer({});
    const result = await deliverTurnToPane(pane, "  /clear everything", {}, fakeClock());
    expect(result).toEqual({ result: "failed", reason: expect.stringContaining("slash command") });
    expect(pane.pastes).toEqual([]);
    expect(pane.keys).toEqual([]);
  });

  it("does not press Enter again once the draft left, even when RPC has not confirmed yet", async () => {
    const pane = new ScriptedComposer({});
    const result = await deliverTurnToPane(pane, "hello there", { verifyStarted: async () => false }, fakeClock());
    expect(result.result).toBe("unverified");
    expect(enters(pane)).toBe(1);
  });

  it("asks the WAITING guard before touching the pane, and not at all when forced", async () => {
    const pane = new ScriptedComposer({});
    let asked = 0;
    const hasWaitingStep = async (): Promise<boolean> => (asked++, true);
    expect((await deliverTurnToPane(pane, "x y z w", { hasWaitingStep }, fakeClock())).result).toBe("failed");
    expect(pane.pastes).toEqual([]);
    expect((await deliverTurnToPane(pane, "x y z w", { hasWaitingStep, force: true }, fakeClock())).result).toBe("delivered");
    expect(asked).toBe(1);
  });

  it("does not press Enter when a step started WAITING while the paste went in", async () => {
    const pane = new ScriptedComposer({});
    // At the start, right before the paste, right before Enter.
    const answers = [false, false, true];
    const result = await deliverTurnToPane(pane, "steer the turn", { hasWaitingStep: async () => answers.shift() ?? true }, fakeClock());
    expect(result).toMatchObject({
      result: "failed",
      reason: "A step started WAITING for an answer after the paste, so Enter was not pressed; the text is left in the composer, unsubmitted.",
    });
    expect(pane.pastes).toEqual(["steer the turn"]);
    expect(enters(pane)).toBe(0);
  });

  it("rejects empty text, and text that is only control characters, before touching the pane", async () => {
    const pane = new ScriptedComposer({});
    await expect(deliverTurnToPane(pane, "  \n ", {}, fakeClock())).rejects.toMatchObject({ code: "invalid_argument" });
    await expect(deliverTurnToPane(pane, "\x1b\x07", {}, fakeClock())).rejects.toMatchObject({ code: "invalid_argument" });
    expect(pane.pastes).toEqual([]);
  });

  it("turns a tmux failure mid-way into a failed result with its sentence", async () => {
    const pane = new ScriptedComposer({});
    pane.paste = async () => {
      throw new Error("tmux paste-buffer failed: no space left; check the pane and the tmux server.");
    };
    expect(await deliverTurnToPane(pane, "hello there", {}, fakeClock())).toEqual({
      result: "failed",
      reason: "tmux paste-buffer failed: no space left; check the pane and the tmux server.",
    });
  });
});
