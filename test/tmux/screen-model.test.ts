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
    // agy 1.2.x (§13.8): every screen fact has a fixture of its own.
    for (let fact = 26; fact <= 40; fact++) expect(covered, `fact ${fact}`).toContain(fact);
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
    expect(read("dialog-command-hidden-lines-1.0.14").prompt).toMatchObject({
      kind: "command",
      question: "Do you want to proceed?",
      pointer: 1,
      keys: "arrows",
    });
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
      fileAction: "create",
    });
  });

  it("takes the > row at column 0 for the pointer, wherever Up/Down moved it (#12)", () => {
    expect(read("dialog-command-1.1.27").prompt?.pointer).toBe(1);
    expect(read("dialog-command-pointer-moved-1.2.3").prompt?.pointer).toBe(4);
    const onTwo = screen("dialog-create-file-1.1.27")
      .replace("> 1. Yes, allow creation", "  1. Yes, allow creation")
      .replace("  2. No, deny creation", "> 2. No, deny creation");
    expect(readScreen(onTwo).prompt?.pointer).toBe(2);
  });

  it("folds labels wrapped onto column-0 rows, blank rows included, into one label with whitespace collapsed (#13)", () => {
    const options = read("dialog-command-wrapped-1.1.27").prompt?.options ?? [];
    expect(options).toHaveLength(4);
    expect(options[1]?.label).toBe(
      "Yes, and always allow in this conversation for commands that start with 'psql -c 'begin; update invoices set currency = 1; comm...'",
    );
    expect(options[2]?.label).toBe(
      "Yes, and always allow for commands that start with 'psql -c 'begin; update invoices set currency = 1; comm...' (Persist to settings.json)",
    );
  });

  it("reads a question dialog by its Question header (synthesized layout)", () => {
    expect(read("dialog-question-synthesized").prompt).toMatchObject({ kind: "question", question: "Which database should the service use?", pointer: 1 });
  });

  it("offers arrow keys on every dialog: none advertises digits (#14)", () => {
    for (const name of [
      "dialog-command-1.1.27",
      "dialog-command-six-options-1.1.27",
      "dialog-create-file-1.1.27",
      "trust-1.1.27",
      "picker-model-1.1.27",
      "popup-slash-1.1.27",
    ]) {
      expect(read(name).prompt?.keys, name).toBe("arrows");
    }
  });
});

describe("readScreen: other screens that hold the keyboard (§13.3)", () => {
  it("reads the folder-trust screen, which has no rules and no composer (#16)", () => {
    expect(read("trust-1.1.27")).toMatchObject({
      state: "prompt",
      composer: "absent",
      prompt: {
        kind: "trust",
        question: "Do you trust the contents of this project?",
        pointer: 1,
        options: [
          { label: "Yes, I trust this folder", number: null },
          { label: "No, exit", number: null },
        ],
      },
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
    const text = [
      "Accessing workspace:",
      "",
      "~/src/ledger",
      "",
      "Do you trust the contents of this project?",
      "",
      "> Yes, I trust this folder",
      "  No, exit",
      "",
      "  ↑/↓ Navigate · enter Confirm",
    ].join("\n");
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
    const coloured = plain
      .replace("> 1. Yes", "\u001b[1;34m> 1. Yes\u001b[0m")
      .replace(/^esc to cancel/mu, "\u001b[2mesc to cancel\u001b[22m")
      .replace(/\n/g, "\r\n");
    expect(readScreen(coloured)).toEqual(readScreen(plain));
  });
});

describe("readScreen: agy 1.2.x screens (§13.8)", () => {
  it("reads N task(s) on the status row as background tasks, never busy, with the model and mode read right (#26)", () => {
    expect(read("idle-task-strip-1.2.x")).toMatchObject({ state: "ready", model: "Gemini 3.9 Pro", mode: "default", backgroundTasks: 1 });
    expect(read("dialog-command-run-1.2.10")).toMatchObject({ state: "prompt", model: "Gemini 3.9 Pro", mode: "default", backgroundTasks: 2 });
    for (const label of [
      "plan · Gemini 3.9 Pro · medium · 3 task(s) · /tasks",
      "plan · Gemini 3.9 Pro · medium · 3 task(s) · /t",
      "plan · Gemini 3.9 Pro · medium · 3 task(s)",
    ]) {
      const text = [RULE, ">", RULE, statusRow("? for shortcuts", label, 120)].join("\n");
      expect(readScreen(text), label).toMatchObject({ state: "ready", model: "Gemini 3.9 Pro", mode: "plan", backgroundTasks: 3 });
    }
    // Without the strip there is no such field at all.
    expect(read("idle-numbered-reply-1.2.10")).not.toHaveProperty("backgroundTasks");
  });

  it("reads the task strip under the composer as agy's, not as an unknown panel (#27)", () => {
    expect(read("idle-task-strip-1.2.x")).toMatchObject({ state: "ready", composer: "empty", prompt: null });
    const two = screen("idle-task-strip-1.2.x").replace(
      "  ● [14:02:11] npm run watch running",
      "  ● [14:02:11] npm run watch running\n  ● [14:05:40] cargo build running",
    );
    expect(readScreen(two)).toMatchObject({ state: "ready", prompt: null });
    // Anything else there is still unknown.
    const other = screen("idle-task-strip-1.2.x").replace("  ● [14:02:11] npm run watch running", "  ● something we have never seen");
    expect(readScreen(other).state).toBe("unknown");
  });

  it("reads a task strip closed by a rule of its own, with more tasks than fit, as agy's (#27)", () => {
    expect(read("idle-task-panel-1.3.3")).toMatchObject({ state: "ready", composer: "empty", prompt: null, backgroundTasks: 5 });
    // A rule under the composer that closes anything else still means the composer is not the live one.
    const other = screen("idle-task-panel-1.3.3").replace(
      "  ● [09:14:02] make it-auth running\n  ● [09:14:03] make it-billing running\n  ↓ 3 more",
      "Some panel we do not know",
    );
    expect(readScreen(other).state).toBe("unknown");
  });

  it("reads a queued turn's hint as busy (#40)", () => {
    expect(read("generating-queued-1.3.3").state).toBe("busy");
    const noSpinner = screen("generating-queued-1.3.3").replace("⣷  Generating...\n", "");
    expect(readScreen(noSpinner).state).toBe("busy");
  });

  it("reads the Working... spinner as busy (#28)", () => {
    expect(read("generating-working-1.2.1")).toMatchObject({ state: "busy", mode: "plan" });
  });

  it("reads the 1.2.x command dialog: Run this command?, No being 4. No, cancel (#29)", () => {
    const prompt = read("dialog-command-run-1.2.10").prompt;
    expect(prompt).toMatchObject({ kind: "command", question: "Run this command?", pointer: 1 });
    expect(prompt?.options.map((o) => [o.number, o.label.split(",")[0]])).toEqual([
      [1, "Yes"],
      [2, "Yes"],
      [3, "Yes"],
      [4, "No"],
    ]);
    expect(prompt?.options[3]?.label).toBe("No, cancel");
  });

  it("reads a two-option dialog under a user-defined status line, the line's own words ignored (#30)", () => {
    const model = read("dialog-command-two-options-custom-status-1.2.x");
    expect(model).toMatchObject({ state: "prompt", composer: "absent", model: null, mode: null, statusLine: "custom" });
    expect(model.prompt?.options).toEqual([
      { label: "Yes, run command", number: 1 },
      { label: "No, cancel", number: 2 },
    ]);
    // agy's own status row there: no statusLine field.
    const own = screen("dialog-command-two-options-custom-status-1.2.x").replace(/^⚑.*$/mu, statusRow("esc to cancel", "Gemini 3.9 Pro · medium"));
    expect(readScreen(own)).not.toHaveProperty("statusLine");
    expect(readScreen(own)).toMatchObject({ state: "prompt", model: "Gemini 3.9 Pro" });
  });

  it("reads the amend field as its own kind, the input row no option (#31)", () => {
    const prompt = read("dialog-amend-1.2.1").prompt;
    expect(prompt?.kind).toBe("amend");
    expect(prompt?.options).toHaveLength(4);
    expect(prompt?.options[0]?.label).toBe("Yes, and tell Antigravity CLI what to do next");
    // The footer alone (cursor row not drawn yet) and the row alone (footer cut off) both tell.
    const noRow = screen("dialog-amend-1.2.1").replace("    > then tag the commit█\n", "");
    expect(readScreen(noRow).prompt?.kind).toBe("amend");
    const noFooter = screen("dialog-amend-1.2.1").replace("  enter Submit", "  ↑/↓ Navigate · tab Amend · ctrl+g edit/expand command");
    expect(readScreen(noFooter).prompt?.kind).toBe("amend");
  });

  it("reads each file dialog with what it asks to allow, and No where it is (#32)", () => {
    const cases: Array<[string, string, number]> = [
      ["dialog-create-file-outside-workspace-1.2.1", "create", 3],
      ["dialog-pending-edit-1.2.9", "edit", 2],
      ["dialog-file-access-1.2.1", "access", 3],
      ["dialog-create-file-1.1.27", "create", 2],
    ];
    for (const [name, action, no] of cases) {
      const prompt = read(name).prompt;
      expect(prompt, name).toMatchObject({ kind: "file", fileAction: action });
      expect(
        prompt?.options.findIndex((o) => /^No\b/u.test(o.label)),
        name,
      ).toBe(no - 1);
    }
  });

  it("reads the question form's position, the text after Question i/N, and ← Back (#33)", () => {
    expect(read("question-form-2of3-1.2.1").prompt).toMatchObject({
      kind: "question",
      question: "Which port should it listen on?",
      form: { index: 2, total: 3, back: true },
    });
    const first = screen("question-form-2of3-1.2.1").replace("Question 2/3:", "Question 1/3:").replace(" · ← Back", "");
    expect(readScreen(first).prompt?.form).toEqual({ index: 1, total: 3, back: false });
    // A long question wraps onto the next row: it is one question still.
    const wrapped = screen("question-form-2of3-1.2.1").replace(
      "Question 2/3: Which port should it listen on?",
      "Question 2/3: Which port should it listen on when it\nruns behind the proxy?",
    );
    expect(readScreen(wrapped).prompt).toMatchObject({
      question: "Which port should it listen on when it runs behind the proxy?",
      form: { index: 2, total: 3 },
    });
    // A question dialog without the form's line has no form.
    expect(read("dialog-question-synthesized").prompt).not.toHaveProperty("form");
  });

  it("reads /effort's slider as a slider, not unknown and not a picker (#34)", () => {
    expect(read("slider-effort-1.2.1")).toMatchObject({ state: "prompt", composer: "empty", prompt: { kind: "slider", options: [], pointer: null } });
  });

  it("reads the ? overlay as an overlay whose key rows are no options (#35)", () => {
    expect(read("overlay-shortcuts-1.2.1")).toMatchObject({ state: "prompt", prompt: { kind: "overlay", options: [], pointer: null } });
  });

  it("reads the artifact review panel: one option per artifact, the › row the pointer (#36)", () => {
    const prompt = read("artifact-review-1.2.1").prompt;
    expect(prompt).toMatchObject({ kind: "artifact_review", pointer: 2 });
    expect(prompt?.options.map((o) => o.label)).toEqual(["new release_plan.md", "new rollback_plan.md"]);
  });

  it("reads each first-run screen as setup, so no key is sent (#37)", () => {
    expect(read("setup-sign-in-1.2.1")).toMatchObject({
      state: "prompt",
      composer: "absent",
      model: null,
      prompt: { kind: "setup", setup: "sign_in", pointer: 1 },
    });
    expect(read("setup-sign-in-1.2.1").prompt?.options.map((o) => o.number)).toEqual([1, 2]);
    expect(read("setup-oauth-1.2.1")).toMatchObject({ state: "prompt", prompt: { kind: "setup", setup: "oauth", options: [] } });
    expect(read("setup-terms-1.2.1")).toMatchObject({ state: "prompt", prompt: { kind: "setup", setup: "terms", options: [] } });
    // Sign-in text left above a later screen does not make that screen setup.
    const trust = [
      ...screen("setup-sign-in-1.2.1").trimEnd().split("\n"),
      "",
      "Accessing workspace:",
      "",
      "  /home/dev/project",
      "",
      "Do you trust the contents of this project?",
      "> Yes, I trust this folder",
      "  No, exit",
      "",
      "  ↑/↓ Navigate · enter Confirm",
    ].join("\n");
    expect(readScreen(trust).prompt?.kind).toBe("trust");
    // …nor does it when a composer is drawn below it.
    const signedIn = [
      ...screen("setup-sign-in-1.2.1").trimEnd().split("\n"),
      "",
      RULE,
      ">",
      RULE,
      statusRow("? for shortcuts", "Gemini 3.9 Pro · medium"),
    ].join("\n");
    expect(readScreen(signedIn)).toMatchObject({ state: "ready", prompt: null });
  });

  it("reads a numbered list in agy's reply above an empty composer as no menu (#38)", () => {
    expect(read("idle-numbered-reply-1.2.10")).toMatchObject({ state: "ready", composer: "empty", prompt: null });
  });

  it("reads the Interrupted line above the composer as ready (#39)", () => {
    expect(read("idle-interrupted-1.2.1")).toMatchObject({ state: "ready", composer: "empty", prompt: null });
  });

  it("takes a row that asks and then instructs for the question (§13.9)", () => {
    const text = screen("menu-feedback-1.1.27").replace("What is your feedback about?", "What went wrong? Pick the category that fits best:");
    expect(readScreen(text).prompt?.question).toBe("What went wrong? Pick the category that fits best:");
  });

  it("keeps an unknown last row under a composer unknown, whatever it says (§13.9)", () => {
    expect(read("unknown-custom-status-below-composer")).toMatchObject({ state: "unknown", composer: "empty" });
  });
});
