/**
 * `readScreen` on agy's real layouts (spike-notes §13), one behaviour per
 * fact, on our own fixture screens (`fixtures/screens/`, each labelled with
 * the fact and agy version it models) and on variants made from them.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { readScreen, type ScreenModel } from "../../src/index.js";

const DIR = resolve(import.meta.dirname, "../../fixtures/screens");

interface Sidecar {
  facts: number[];
  agy: string;
  provenance: string;
  expected: ScreenModel;
}

function screen(name: string): string {
  return readFileSync(join(DIR, `${name}.txt`), "utf8");
}

function sidecar(name: string): Sidecar {
  return JSON.parse(readFileSync(join(DIR, `${name}.json`), "utf8")) as Sidecar;
}

function read(name: string): ScreenModel {
  return readScreen(screen(name));
}

/** A status row as agy draws it: `left`, the label right-aligned in `width` columns, then cut by one column. */
function statusRow(left: string, label: string, width = 100): string {
  return `${left}${" ".repeat(width - left.length - label.length)}${label}`.slice(0, width - 1);
}

const RULE = "─".repeat(100);

describe("readScreen: the fixture screens", () => {
  const names = readdirSync(DIR)
    .filter((f) => f.endsWith(".txt"))
    .map((f) => f.slice(0, -4));

  it("has a labelled fixture for every screen fact (§13 #2, #4–13, #16–21) and the composer taller than the pane", () => {
    const covered = new Set(names.flatMap((name) => sidecar(name).facts));
    for (const fact of [2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 18, 19, 20, 21]) expect(covered, `fact ${fact}`).toContain(fact);
    expect(names).toContain("draft-taller-than-pane");
    for (const name of names) expect(sidecar(name).provenance, name).toMatch(/^(written|synthesized) by us/);
  });

  it.each(names)("reads %s as its sidecar says", (name) => {
    expect(read(name)).toEqual(sidecar(name).expected);
  });
});

describe("readScreen: layout (§13.1)", () => {
  it("finds agy's screen at the top of a tall pane, blank rows below it (#1)", () => {
    const text = screen("idle-boot-1.1.27");
    expect(text.split("\n").length).toBeGreaterThan(30);
    expect(read("idle-boot-1.1.27")).toMatchObject({ state: "ready", composer: "empty", model: "Gemini 3.9 Pro" });
  });

  it("takes the model from the cut status label, without the effort, in both label styles (#2)", () => {
    expect(read("idle-boot-1.1.27").model).toBe("Gemini 3.9 Pro");
    expect(screen("idle-label-1.0.14")).toContain("Gemini 3.5 Flash (Medium\n");
    expect(read("idle-label-1.0.14").model).toBe("Gemini 3.5 Flash");
    const cuts = ["Gemini 3.9 Pro · hi", "Gemini 3.9 Pro · h", "Gemini 3.9 Pro ·", "Gemini 3.9 Pro (Med", "Gemini 3.9 Pro (High)"];
    for (const label of cuts) {
      const text = [RULE, ">", RULE, `? for shortcuts${" ".repeat(60)}${label}`].join("\n");
      expect(readScreen(text).model, label).toBe("Gemini 3.9 Pro");
    }
    // A parenthesis that is no effort is part of the model's name.
    const thinking = [RULE, ">", RULE, statusRow("? for shortcuts", "Claude Sonnet 4.6 (Thinking) · high")].join("\n");
    expect(readScreen(thinking).model).toBe("Claude Sonnet 4.6 (Thinking)");
  });

  it("takes the full-width rules for the composer, never a 60-column turn separator (#3)", () => {
    const model = read("idle-after-tools-1.1.27");
    expect(model).toMatchObject({ state: "ready", composer: "empty", draft: null });
  });

  it("reads an echoed turn and a reply's own numbered list as transcript, not as a draft or a prompt (#4)", () => {
    const text = screen("idle-after-tools-1.1.27");
    expect(text).toContain("  1. 0007_add_invoice_totals.sql");
    expect(readScreen(text)).toMatchObject({ state: "ready", composer: "empty", draft: null, prompt: null });
  });

  it("reads the spinner over an empty composer with esc to cancel as busy (#5)", () => {
    expect(read("generating-1.1.27")).toMatchObject({ state: "busy", composer: "empty", prompt: null });
    // The spinner alone says so too, whatever the hint.
    const spinnerOnly = screen("generating-1.1.27").replace(/^esc to cancel {4}/mu, "? for shortcuts  ");
    expect(readScreen(spinnerOnly).state).toBe("busy");
    const idle = screen("generating-1.1.27").replace("⣽  Generating...\n", "");
    expect(readScreen(idle).state).toBe("busy");
    expect(readScreen(idle.replace(/^esc to cancel {4}/mu, "? for shortcuts  ")).state).toBe("ready");
  });

  it("reads 1.2.1's status row without ? for shortcuts, over a three-row box, as ready (#6)", () => {
    const text = screen("idle-no-shortcuts-1.2.1");
    expect(text).not.toContain("? for shortcuts");
    expect(readScreen(text)).toMatchObject({ state: "ready", composer: "empty", draft: null, model: "Gemini 3.9 Pro" });
  });

  it("reads a mode placeholder as an empty composer with the mode set, and typed text in that mode as a draft (#7)", () => {
    expect(read("idle-plan-1.2.4")).toMatchObject({ state: "ready", composer: "empty", draft: null, mode: "plan" });
    expect(read("idle-accept-edits-1.2.4")).toMatchObject({ state: "ready", composer: "empty", draft: null, mode: "accept-edits" });
    expect(read("draft-plan-1.2.4")).toMatchObject({ composer: "draft", draft: "draft a migration plan for the currency column", mode: "plan" });
    expect(read("idle-boot-1.1.27").mode).toBe("default");
    // In a narrow pane the placeholder wraps; it is still no draft.
    const wrapped = screen("idle-accept-edits-1.2.4").replace("auto-approved (shift+tab to cycle)", "auto-approved\n  (shift+tab to cycle)");
    expect(readScreen(wrapped)).toMatchObject({ composer: "empty", draft: null, mode: "accept-edits" });
  });
});

describe("readScreen: dialogs (§13.2)", () => {
  it("reads a dialog that replaced the composer as a prompt, the composer absent, although the status row says esc to cancel (#8)", () => {
    const text = screen("dialog-command-1.1.27");
    expect(text).toMatch(/^esc to cancel/mu);
    expect(readScreen(text)).toMatchObject({ state: "prompt", composer: "absent", draft: null, prompt: { kind: "command" } });
  });

  it("reads the command dialog's question and its four options, in each version's words (#9)", () => {
    const prompt = read("dialog-command-1.1.27").prompt;
    expect(prompt?.question).toBe("Do you want to proceed?");
    expect(prompt?.options.map((o) => o.number)).toEqual([1, 2, 3, 4]);
    expect(prompt?.options[3]).toEqual({ label: "No", number: 4 });
    expect(read("dialog-command-pointer-moved-1.2.3").prompt).toMatchObject({ kind: "command", question: "Run this command?" });
    // 1.0.x: a command cut to four rows and "⋯ (2 lines hidden)", the ctrl+r Review footer.
    expect(read("dialog-command-hidden-lines-1.0.14").prompt).toMatchObject({ kind: "command", question: "Do you want to proceed?", pointer: 1, keys: "arrows" });
  });

  it("reads the six options of a command asked again after a denial, No staying 4 (#10)", () => {
    const options = read("dialog-command-six-options-1.1.27").prompt?.options ?? [];
    expect(options.map((o) => o.number)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(options[3]?.label).toBe("No");
    expect(options[4]?.label).toMatch(/^No, and always deny for commands that start with .* in this conversation$/u);
    expect(options[5]?.label).toMatch(/^No, and always deny .*\(Persist to settings\.json\)$/u);
  });

  it("reads a file-creation dialog's two options, No being 2 (#11)", () => {
    expect(read("dialog-create-file-1.1.27").prompt).toEqual({
      kind: "file",
      question: "Allow creation of this file?",
      options: [
        { label: "Yes, allow creation", number: 1 },
        { label: "No, deny creation", number: 2 },
      ],
      pointer: 1,
      keys: "arrows",
    });
  });

  it("takes the > row at column 0 for the pointer, wherever Up/Down moved it (#12)", () => {
    expect(read("dialog-command-1.1.27").prompt?.pointer).toBe(1);
    expect(read("dialog-command-pointer-moved-1.2.3").prompt?.pointer).toBe(4);
    const onTwo = screen("dialog-create-file-1.1.27").replace("> 1. Yes, allow creation", "  1. Yes, allow creation").replace("  2. No, deny creation", "> 2. No, deny creation");
    expect(readScreen(onTwo).prompt?.pointer).toBe(2);
  });

  it("folds labels wrapped onto column-0 rows, blank rows included, into one label with whitespace collapsed (#13)", () => {
    const options = read("dialog-command-wrapped-1.1.27").prompt?.options ?? [];
    expect(options).toHaveLength(4);
    expect(options[1]?.label).toBe("Yes, and always allow in this conversation for commands that start with 'psql -c 'begin; update invoices set currency = 1; comm...'");
    expect(options[2]?.label).toBe("Yes, and always allow for commands that start with 'psql -c 'begin; update invoices set currency = 1; comm...' (Persist to settings.json)");
  });

  it("reads a question dialog by its Question header (synthesized layout)", () => {
    expect(read("dialog-question-synthesized").prompt).toMatchObject({ kind: "question", question: "Which database should the service use?", pointer: 1 });
  });

  it("offers arrow keys on every dialog: none advertises digits (#14)", () => {
    for (const name of ["dialog-command-1.1.27", "dialog-command-six-options-1.1.27", "dialog-create-file-1.1.27", "trust-1.1.27", "picker-model-1.1.27", "popup-slash-1.1.27"]) {
      expect(read(name).prompt?.keys, name).toBe("arrows");
    }
  });
});

describe("readScreen: other screens that hold the keyboard (§13.3)", () => {
  it("reads the folder-trust screen, which has no rules and no composer (#16)", () => {
    expect(read("trust-1.1.27")).toMatchObject({
      state: "prompt",
      composer: "absent",
      prompt: { kind: "trust", question: "Do you trust the contents of this project?", pointer: 1, options: [{ label: "Yes, I trust this folder", number: null }, { label: "No, exit", number: null }] },
    });
  });

  it("reads the /model picker under an empty composer as a prompt, not as ready (#17)", () => {
    expect(read("picker-model-1.1.27")).toMatchObject({ state: "prompt", composer: "empty", prompt: { kind: "picker", pointer: 2 } });
    expect(read("picker-model-1.1.27").prompt?.options[1]).toEqual({ label: "Gemini 3.5 Flash (current)", number: null });
  });

  it("reads the /feedback menu as a numbered menu that takes digits, because its footer says so (#18)", () => {
    expect(read("menu-feedback-1.1.27").prompt).toMatchObject({ kind: "menu", keys: "digits", pointer: 1 });
    expect(read("menu-feedback-1.1.27").prompt?.options).toHaveLength(6);
  });

  it("reads the survey that replaced the composer as a digit prompt, although ? for shortcuts shows under it (#19)", () => {
    const model = read("survey-1.1.27");
    expect(model).toMatchObject({ state: "prompt", composer: "absent", prompt: { kind: "survey", keys: "digits", pointer: null } });
    expect(model.prompt?.options).toEqual([
      { label: "Good", number: 1 },
      { label: "Fine", number: 2 },
      { label: "Bad", number: 3 },
      { label: "Skip", number: 0 },
    ]);
  });

  it("reads the slash popup as a slash prompt over a / draft, not as busy, although the status row says esc to cancel (#20)", () => {
    const model = read("popup-slash-1.1.27");
    expect(model).toMatchObject({ state: "prompt", composer: "draft", draft: "/re", prompt: { kind: "slash", pointer: 1 } });
    expect(model.prompt?.options.map((o) => o.label.split(" ")[0])).toEqual(["/resume", "/review", "/rewind"]);
  });

  it("reads a dialog's rows quoted in the transcript, with a composer drawn below, as not live (#21)", () => {
    const text = screen("quoted-dialog-1.1.27");
    expect(text).toContain("> 1. Yes");
    expect(readScreen(text)).toMatchObject({ state: "ready", composer: "empty", prompt: null });
  });
});

describe("readScreen: drafts", () => {
  it("reads a composer taller than the pane (its top rule scrolled off) as a draft, never empty", () => {
    const model = read("draft-taller-than-pane");
    expect(model.composer).toBe("draft");
    expect(model.draft).toMatch(/^line 200 of the pasted stack trace/u);
    expect(model.draft).toMatch(/Invoice\.java:227\)$/u);
  });

  it("reads a paste placeholder as a draft", () => {
    expect(read("draft-paste-placeholder")).toMatchObject({ composer: "draft", draft: "[Pasted text #2 +31 lines]" });
  });

  it("reads a multi-line draft without its glyph and continuation indent", () => {
    expect(read("draft-multiline-1.1.27").draft).toBe("rename Invoice.total to Invoice.grandTotal\nand update every caller\nin src/ and test/");
  });
});

describe("readScreen: what it cannot place is unknown, never ready", () => {
  it("reads a shell without agy as unknown", () => {
    expect(read("unknown-shell")).toEqual({ state: "unknown", composer: "absent", draft: null, mode: null, model: null, prompt: null });
  });

  it("reads an unrecognised panel under the composer as unknown", () => {
    expect(read("unknown-below-composer")).toMatchObject({ state: "unknown", prompt: null });
  });

  it("reads an unknown dialog that replaced the composer as unknown, not busy, under esc to cancel", () => {
    expect(read("unknown-dialog")).toMatchObject({ state: "unknown", composer: "absent", prompt: null });
  });

  it("reads an empty capture and a dialog's footer without options as unknown", () => {
    expect(readScreen("").state).toBe("unknown");
    expect(readScreen("\n\n   \n").state).toBe("unknown");
    const noOptions = screen("dialog-create-file-1.1.27").replace(/^(> |  )[12]\. .*\n/gmu, "");
    expect(readScreen(noOptions)).toMatchObject({ state: "unknown", prompt: null });
  });

  it("never reads a key-hint footer as the status row", () => {
    const text = ["Accessing workspace:", "", "~/src/ledger", "", "Do you trust the contents of this project?", "", "> Yes, I trust this folder", "  No, exit", "", "  ↑/↓ Navigate · enter Confirm"].join("\n");
    expect(readScreen(text)).toMatchObject({ state: "prompt", model: null, mode: null, prompt: { kind: "trust" } });
  });
});

describe("readScreen: input forms", () => {
  it("reads a model-only status row although capture-pane -J joined a long shell line above agy into a wider row", () => {
    const launch = `kim@box ~/src/ledger % AGY_HOOK_URL='http://127.0.0.1:4100/hooks?${"x".repeat(180)}' agy`;
    for (const name of ["idle-no-shortcuts-1.2.1", "trust-1.1.27", "picker-model-1.1.27"]) {
      expect(readScreen(`${launch}\n${screen(name)}`), name).toEqual(sidecar(name).expected);
    }
  });

  it("takes the model from the middle of a label whose mode word it does not know", () => {
    const text = [RULE, ">", RULE, statusRow("? for shortcuts", "yolo · Gemini 3.9 Pro · high")].join("\n");
    expect(readScreen(text)).toMatchObject({ state: "ready", model: "Gemini 3.9 Pro", mode: null });
  });

  it("reads a capture with colour codes and CR LF line ends as the plain one", () => {
    const plain = screen("dialog-command-1.1.27");
    const coloured = plain.replace("> 1. Yes", "\u001b[1;34m> 1. Yes\u001b[0m").replace(/^esc to cancel/mu, "\u001b[2mesc to cancel\u001b[22m").replace(/\n/g, "\r\n");
    expect(readScreen(coloured)).toEqual(readScreen(plain));
  });
});
