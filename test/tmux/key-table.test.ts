/**
 * The key table (src/tmux/key-table.ts) as data: which row a version gets,
 * what each key does there, and the plans built on it — which key answers,
 * declines or closes a dialog. Pure: screen models in, keys out. The
 * dialogs are the expected models of our own fixture screens
 * (fixtures/screens/*.json), so the plans are checked on the shapes the
 * screen reader gives.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import {
  chooseKey,
  choosePlan,
  closePlan,
  declinePlan,
  effectOf,
  KEY_SITUATIONS,
  KeyRefusal,
  keyTableFor,
  noOption,
  situationOf,
  STEP_DIALOGS,
  TABLE_KEYS,
  yesOption,
  type KeyTable,
  type ScreenModel,
  type ScreenPrompt,
} from "../../src/tmux/index.js";

const SCREENS = resolve(import.meta.dirname, "../../fixtures/screens");

/** The expected screen model of one of our fixture screens. */
function fixture(name: string): ScreenModel {
  return (JSON.parse(readFileSync(join(SCREENS, `${name}.json`), "utf8")) as { expected: ScreenModel }).expected;
}

function promptOf(name: string): ScreenPrompt {
  const prompt = fixture(name).prompt;
  if (prompt === null) throw new Error(`fixture ${name} shows no prompt`);
  return prompt;
}

const V10 = keyTableFor("1.0.10");
const V11 = keyTableFor("1.1.27");
const V12 = keyTableFor("1.2.10");
const UNKNOWN = keyTableFor(null);

/** Every cell of a row, settled ones too. */
function* cells(table: KeyTable) {
  for (const situation of KEY_SITUATIONS) for (const key of TABLE_KEYS) yield { situation, key, settled: false, cell: table.keys[situation][key] };
  for (const situation of STEP_DIALOGS) for (const key of TABLE_KEYS) yield { situation, key, settled: true, cell: table.settled[situation][key] };
}

describe("which row a version gets", () => {
  it("has rows for 1.0.x, 1.1.x and 1.2.1–1.2.17; everything else is the conservative row", () => {
    expect(["1.0.10", "1.0.14", "v1.0.3"].map((v) => keyTableFor(v).line)).toEqual(["1.0", "1.0", "1.0"]);
    expect(["1.1.0", "1.1.27"].map((v) => keyTableFor(v).line)).toEqual(["1.1", "1.1"]);
    expect(["1.2.1", "1.2.10", "1.2.17", "1.2.9-beta"].map((v) => keyTableFor(v).line)).toEqual(["1.2", "1.2", "1.2", "1.2"]);
    for (const v of [null, undefined, "", "1.2.0", "1.2.18", "1.3.1", "2.0.0", "0.9.9", "agy", "1.2"]) {
      expect(keyTableFor(v).line, String(v)).toBe("conservative");
    }
    expect(keyTableFor("1.2.10").version).toBe("1.2.10");
    expect(keyTableFor(undefined).version).toBeNull();
  });

  it("the conservative row knows only pointer moves, Enter on a row, and CR and BSpace in the composer", () => {
    for (const { situation, key, settled, cell } of cells(UNKNOWN)) {
      const known = cell.effects.filter((e) => e !== "unknown");
      if (known.length === 0) continue;
      const expected =
        key === "Enter"
          ? [situation === "composer" || situation === "slash" ? "submits" : "selects_pointed"]
          : key === "BSpace" && situation === "composer"
            ? ["edits_draft"]
            : ["moves_pointer"];
      expect({ situation, key, settled, known }).toEqual({ situation, key, settled: false, known: expected });
    }
    // Nothing that could cancel, dismiss or answer at once.
    for (const { cell } of cells(UNKNOWN)) {
      for (const bad of ["answers_at_once", "cancels_tool_call", "ends_turn", "dismisses", "declines", "quits", "approves_other"] as const)
        expect(cell.effects).not.toContain(bad);
    }
  });

  it("the slash popup is closed with Escape on the known rows only", () => {
    expect(chooseKey(V11, "slash", "Escape", "dismisses")).not.toBeInstanceOf(KeyRefusal);
    expect(chooseKey(UNKNOWN, "slash", "Escape", "dismisses")).toBeInstanceOf(KeyRefusal);
  });

  it("every known cell names the fact it comes from", () => {
    for (const table of [V10, V11, V12, UNKNOWN]) {
      for (const { situation, key, cell } of cells(table)) {
        if (cell.effects.includes("unknown")) continue;
        expect(cell.fact, `${table.line} ${situation} ${key}`).toMatch(/^(K\d+|§\d+\.\d+( step \d+)?|§13 #\d+)$/);
      }
    }
  });
});

describe("what each key does on agy 1.2.x (spike-notes K1–K17)", () => {
  it("a digit answers a numbered dialog at once (K1); Escape at a command approval cancels the tool call and ends the turn (K5)", () => {
    expect(effectOf(V12, "command", "4").effects).toEqual(["answers_at_once"]);
    expect(effectOf(V12, "command", "Escape").effects).toEqual(["cancels_tool_call", "ends_turn"]);
    expect(effectOf(V12, "file_create", "Escape").effects).toContain("cancels_tool_call");
    expect(effectOf(V12, "pending_edit", "Escape").effects).toEqual(["nothing"]);
    expect(effectOf(V12, "command", "Tab").effects).toEqual(["opens_amend"]);
  });

  it("LF inserts a newline and only CR submits (K15); ctrl+k approves a subagent (K16); Ctrl-C is never a harmless key", () => {
    expect(effectOf(V12, "composer", "C-j").effects).toEqual(["inserts_newline"]);
    expect(effectOf(V12, "composer", "Enter").effects).toEqual(["submits"]);
    expect(effectOf(V12, "composer", "C-k").effects).toEqual(["approves_other"]);
    for (const table of [V10, V11, V12, UNKNOWN]) {
      for (const situation of KEY_SITUATIONS) {
        const effects = effectOf(table, situation, "C-c").effects;
        expect(
          effects.some((e) => e === "quits" || e === "ends_turn" || e === "cancels_tool_call" || e === "unknown"),
          `${table.line} ${situation}`,
        ).toBe(true);
      }
    }
  });

  it("the amend field, the artifact panel and the first-run screens take no key the bridge would press", () => {
    for (const situation of ["amend", "setup", "artifact_review"] as const) {
      for (const key of TABLE_KEYS) {
        for (const wanted of ["moves_pointer", "selects_pointed", "answers_at_once", "declines", "submits"] as const) {
          expect(chooseKey(V12, situation, key === "digit" ? "1" : key, wanted), `${situation} ${key} ${wanted}`).toBeInstanceOf(KeyRefusal);
        }
      }
    }
  });
});

describe("choosing a key", () => {
  it("refuses a key whose effect is not the one wanted, saying what it would do and which fact says so", () => {
    const refused = chooseKey(V12, "command", "Escape", "declines");
    expect(refused).toBeInstanceOf(KeyRefusal);
    expect((refused as KeyRefusal).reason).toContain("would cancel the tool call and end agy's turn");
    expect((refused as KeyRefusal).reason).toContain("K5");
    expect(chooseKey(UNKNOWN, "command", "1", "answers_at_once")).toBeInstanceOf(KeyRefusal);
  });

  it("gives a key with the fact it was chosen on", () => {
    expect(chooseKey(V12, "command", "4", "answers_at_once")).toMatchObject({ key: "4", effect: "answers_at_once", fact: "K1" });
    expect(chooseKey(V10, "command", "Down", "moves_pointer")).toMatchObject({ key: "Down", fact: "§13 #12" });
  });

  it("reads the situation of a screen from its state and prompt, a file dialog by what it asks", () => {
    expect(situationOf(fixture("dialog-pending-edit-1.2.9"))).toBe("pending_edit");
    expect(situationOf(fixture("dialog-file-access-1.2.1"))).toBe("file_access");
    expect(situationOf(fixture("dialog-create-file-outside-workspace-1.2.1"))).toBe("file_create");
    expect(situationOf(fixture("dialog-amend-1.2.1"))).toBe("amend");
    expect(situationOf(fixture("generating-1.1.27"))).toBe("busy");
    expect(situationOf(fixture("idle-after-tools-1.1.27"))).toBe("composer");
  });

  it("has a row for every prompt kind our fixture screens show", () => {
    for (const file of readdirSync(SCREENS).filter((f) => f.endsWith(".json"))) {
      const screen = fixture(file.replace(/\.json$/, ""));
      if (screen.state === "prompt" && screen.prompt !== null) expect(situationOf(screen), file).not.toBe("unknown");
    }
  });
});

describe("declining by label, never by position", () => {
  it("finds the plain No row wherever it is: 4 of 4, 2 of 2, 3 of 3, 2 in Pending edit, 4 of 6", () => {
    expect(noOption(promptOf("dialog-command-run-1.2.10"))).toBe(4);
    expect(noOption(promptOf("dialog-command-two-options-custom-status-1.2.x"))).toBe(2);
    expect(noOption(promptOf("dialog-create-file-outside-workspace-1.2.1"))).toBe(3);
    expect(noOption(promptOf("dialog-file-access-1.2.1"))).toBe(3);
    expect(noOption(promptOf("dialog-pending-edit-1.2.9"))).toBe(2);
    expect(noOption(promptOf("dialog-command-six-options-1.1.27"))).toBe(4);
    expect(yesOption(promptOf("dialog-command-run-1.2.10"))).toBe(1);
    expect(yesOption(promptOf("dialog-command-1.1.27"))).toBe(1);
  });

  it("on 1.2.x presses the No row's digit alone; on 1.0/1.1 and unknown versions moves the pointer there and presses Enter", () => {
    expect(declinePlan(V12, promptOf("dialog-command-run-1.2.10"))).toEqual({ how: "digit", position: 4, digit: "4" });
    expect(declinePlan(V12, promptOf("dialog-command-two-options-custom-status-1.2.x"))).toEqual({ how: "digit", position: 2, digit: "2" });
    expect(declinePlan(V12, promptOf("dialog-create-file-outside-workspace-1.2.1"))).toEqual({ how: "digit", position: 3, digit: "3" });
    expect(declinePlan(V12, promptOf("dialog-pending-edit-1.2.9"))).toEqual({ how: "digit", position: 2, digit: "2" });
    for (const table of [V10, V11, UNKNOWN]) {
      expect(declinePlan(table, promptOf("dialog-command-1.1.27"))).toEqual({ how: "pointer", position: 4 });
      expect(declinePlan(table, promptOf("dialog-command-six-options-1.1.27"))).toEqual({ how: "pointer", position: 4 });
    }
  });

  it("never plans Escape at an approval, on any version", () => {
    for (const table of [V10, V11, V12, UNKNOWN]) {
      for (const name of ["dialog-command-run-1.2.10", "dialog-command-1.1.27", "dialog-pending-edit-1.2.9", "dialog-create-file-1.1.27"]) {
        expect(declinePlan(table, promptOf(name)).how, `${table.line} ${name}`).not.toBe("escape");
      }
    }
  });

  it("skips a question (no No row) with Escape only where Escape declines it; refuses on an unknown version", () => {
    const question = promptOf("dialog-question-synthesized");
    expect(declinePlan(V11, question)).toEqual({ how: "escape" });
    expect(declinePlan(V12, question)).toEqual({ how: "escape" });
    expect(declinePlan(UNKNOWN, question)).toMatchObject({ how: "refused", reason: expect.stringContaining('no single "No" row') });
  });

  it("refuses a dialog whose No row is ambiguous rather than guess", () => {
    const prompt: ScreenPrompt = {
      kind: "other",
      question: null,
      options: [
        { label: "No", number: 1 },
        { label: "No thanks", number: 2 },
      ],
      pointer: 1,
      keys: "arrows",
    };
    expect(declinePlan(V12, prompt).how).toBe("refused");
  });
});

describe("choosing an option", () => {
  it("takes a digit where the screen advertises digits, whatever the version", () => {
    const menu: ScreenPrompt = {
      kind: "menu",
      question: null,
      options: [
        { label: "Bug", number: 1 },
        { label: "Idea", number: 2 },
      ],
      pointer: 1,
      keys: "digits",
    };
    expect(choosePlan(UNKNOWN, menu, 2)).toEqual({ how: "digit", position: 2, digit: "2" });
  });

  it("refuses a question form of several questions: one key answers only the one on screen (K9)", () => {
    const form: ScreenPrompt = {
      kind: "question",
      question: "Which port?",
      options: [
        { label: "8080", number: 1 },
        { label: "9090", number: 2 },
      ],
      pointer: 1,
      keys: "arrows",
      form: { index: 1, total: 2, back: false },
    };
    expect(choosePlan(V12, form, 1)).toMatchObject({ how: "refused", reason: expect.stringContaining("2 questions") });
  });
});

describe("closing agy's leftover dialog after an RPC answer", () => {
  const command12 = promptOf("dialog-command-run-1.2.10");
  const command11 = promptOf("dialog-command-1.1.27");

  it("on 1.0.x presses Escape, harmless at a settled step (§5.4)", () => {
    expect(closePlan(V10, command11, { kind: "permission", allow: true })).toEqual({ how: "escape" });
    expect(closePlan(V10, command11, undefined)).toEqual({ how: "escape" });
  });

  it("on 1.2.x presses the digit of the option the answer chose, never Escape (K5, K7)", () => {
    expect(closePlan(V12, command12, { kind: "permission", allow: true })).toEqual({ how: "digit", position: 1, digit: "1" });
    expect(closePlan(V12, command12, { kind: "permission", allow: false })).toEqual({ how: "digit", position: 4, digit: "4" });
    expect(closePlan(V12, promptOf("dialog-pending-edit-1.2.9"), { kind: "permission", allow: false })).toEqual({ how: "digit", position: 2, digit: "2" });
    const noAnswer = closePlan(V12, command12, undefined);
    expect(noAnswer).toMatchObject({ how: "none", reason: expect.stringContaining("Escape would cancel the tool call and end agy's turn") });
  });

  it("has no key on 1.1.x and unknown versions: the dialog is left for a person", () => {
    for (const table of [V11, UNKNOWN, keyTableFor("1.3.2")]) {
      expect(closePlan(table, command11, { kind: "permission", allow: true }).how).toBe("none");
      expect(closePlan(table, command12, { kind: "permission", allow: true }).how).toBe("none");
    }
  });

  it("closes nothing that is about no step (a picker, the amend field)", () => {
    expect(closePlan(V10, promptOf("dialog-amend-1.2.1"), { kind: "permission", allow: true }).how).toBe("none");
  });
});
