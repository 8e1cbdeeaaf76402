/**
 * Composer-region parsing over screens captured from our simulator's TUI in
 * a real tmux pane (test/tmux/fixtures/README.md), plus a few hand-written
 * lines for the shapes the captures do not show (spike-notes §6.2 steps 4, 6).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AGY_MARKERS, draftNeedle, isSeparatorLine, parseScreen, pastePlaceholders } from "../../src/tmux/index.js";

const fixture = (name: string): string => readFileSync(join(import.meta.dirname, "fixtures", `${name}.txt`), "utf8");

describe("parseScreen with agy's task strip under the composer (spike-notes §13 #27)", () => {
  const rule = "─".repeat(80);
  const tasks = ["  ● [09:14:02] make it-auth running", "  ↓ 2 more"];

  it("takes the composer above a strip closed by a rule of its own, not the strip", () => {
    const screen = parseScreen(
      [
        "─".repeat(60),
        "> Start the suites.",
        "",
        rule,
        "> half typed",
        rule,
        ...tasks,
        rule,
        "? for shortcuts       Gemini 3.9 Pro · medium · 3 task(s) · /tasks",
      ].join("\n"),
    );
    expect(screen.region).toEqual(["> half typed"]);
    expect(screen.draft).toBe("half typed");
    expect(screen.footer).toBe("idle");
  });

  it("and above a strip with no rule under it", () => {
    const screen = parseScreen([rule, ">", rule, tasks[0], "? for shortcuts       Gemini 3.9 Pro · medium · 1 task(s) · /tasks"].join("\n"));
    expect(screen.region).toEqual([">"]);
    expect(screen.draft).toBe("");
  });

  it("keeps the last two rules when what they hold is no task strip", () => {
    const screen = parseScreen([rule, "> old", rule, "  something else", rule, "? for shortcuts"].join("\n"));
    expect(screen.region).toEqual(["  something else"]);
  });
});

describe("parseScreen on captured screens", () => {
  it("reads an empty composer and the idle footer", () => {
    const screen = parseScreen(fixture("fake-tui-idle"));
    expect(screen.region).toEqual([">"]);
    expect(screen.draft).toBe("");
    expect(screen.footer).toBe("idle");
    expect(screen.prompt).toBeUndefined();
  });

  it("reads a typed draft without the prompt glyph", () => {
    expect(parseScreen(fixture("fake-tui-typed-draft")).draft).toBe("half typed draft");
  });

  it("reads a multi-line draft without the continuation indent", () => {
    expect(parseScreen(fixture("fake-tui-multiline-draft")).draft).toBe("first line\nsecond line\nthird line");
  });

  it("finds the collapsed paste placeholder in the composer", () => {
    const screen = parseScreen(fixture("fake-tui-paste-placeholder"));
    expect(screen.draft).toBe("[Pasted text #1 +14 lines]");
    expect(pastePlaceholders(screen.region ?? [])).toEqual(["[Pasted text #1 +14 lines]"]);
  });

  it("matches a wrapped draft by its first 24 non-space characters", () => {
    const screen = parseScreen(fixture("fake-tui-wrapped-draft"));
    const needle = draftNeedle("Please look at every file under src and explain how the pieces fit together in detail");
    expect(needle).toBe("Pleaselookateveryfileund");
    expect((screen.draft ?? "").replace(/\s+/g, "")).toContain("piecesfittogether");
  });

  it("reads the running footer and an empty composer while a turn runs", () => {
    const screen = parseScreen(fixture("fake-tui-running"));
    expect(screen.footer).toBe("running");
    expect(screen.draft).toBe("");
    expect(screen.prompt).toBeUndefined();
  });

  it("finds the numbered permission prompt above the composer, pointer on option 1", () => {
    const screen = parseScreen(fixture("fake-tui-permission-prompt"));
    expect(screen.prompt?.title).toBe("Allow this command? rm -rf build");
    expect(screen.prompt?.options.map((o) => [o.number, o.pointed])).toEqual([
      [1, true],
      [2, false],
      [3, false],
      [4, false],
    ]);
    expect(screen.prompt?.options[3]?.text).toBe("No");
    expect(screen.footer).toBe("running");
  });

  it("finds a multi-select question prompt", () => {
    const screen = parseScreen(fixture("fake-tui-question-prompt"));
    expect(screen.prompt?.title).toBe("Which colours?");
    expect(screen.prompt?.options.map((o) => o.text)).toEqual(["[ ] red", "[ ] green", "[ ] blue"]);
  });

  it("does not take a numbered list in an answer for a prompt", () => {
    const screen = parseScreen(fixture("fake-tui-numbered-answer"));
    expect(screen.prompt).toBeUndefined();
    expect(screen.draft).toBe("");
  });

  it("reads agy-bridge sim's screens: banner above, prompt over the composer", () => {
    expect(parseScreen(fixture("sim-idle"))).toMatchObject({ draft: "", footer: "idle", prompt: undefined });
    const prompt = parseScreen(fixture("sim-permission-prompt"));
    expect(prompt.prompt?.title).toBe("Allow this command? pwd");
    expect(prompt.prompt?.options).toHaveLength(4);
    expect(prompt.footer).toBe("running");
  });
});

describe("screen details", () => {
  it("accepts pure and decorated rules as separators, and nothing with text in it", () => {
    expect(isSeparatorLine("────────")).toBe(true);
    expect(isSeparatorLine("╭──────────────╮")).toBe(true);
    expect(isSeparatorLine("  ──────────  ")).toBe(true);
    expect(isSeparatorLine("───────")).toBe(false);
    expect(isSeparatorLine("── title ──────────")).toBe(false);
  });

  it("has no composer (and so no draft) on a screen without two rules", () => {
    const screen = parseScreen("$ some shell\n? for shortcuts\n");
    expect(screen.region).toBeUndefined();
    expect(screen.draft).toBeUndefined();
    expect(screen.footer).toBe("idle");
  });

  it("reads the rows above a lone rule with agy's footer under it as a clipped composer's draft", () => {
    const rule = "─".repeat(20);
    const screen = parseScreen(`  zzzzzzzzzzzzzzzzzz\n  zzzz and the tail\n${rule}\n  ? for shortcuts\n`);
    expect(screen).toMatchObject({ clipped: true, draft: "zzzzzzzzzzzzzzzzzz\nzzzz and the tail", footer: "idle", prompt: undefined });
    expect(screen.region).toHaveLength(2);
  });

  it("does not take a lone rule without agy's footer under it for a composer", () => {
    const rule = "─".repeat(20);
    expect(parseScreen(`some text\n${rule}\n$ a shell prompt\n`)).toMatchObject({ region: undefined, clipped: false, draft: undefined });
  });

  it("lets the running marker win over a leftover idle marker", () => {
    const rule = "─".repeat(20);
    expect(parseScreen(`${rule}\n>\n${rule}\n  ? for shortcuts · esc to cancel`).footer).toBe("running");
  });

  it("keeps draft text that contains footer words once the prompt glyph was seen", () => {
    const rule = "─".repeat(20);
    expect(parseScreen(`${rule}\n> why does it say\n  esc to cancel here\n${rule}\n  ? for shortcuts`).draft).toBe("why does it say\nesc to cancel here");
  });

  it("counts a configured empty-composer hint as no draft", () => {
    const rule = "─".repeat(20);
    const screen = `${rule}\n> Type your message\n${rule}\n  ? for shortcuts`;
    expect(parseScreen(screen).draft).toBe("Type your message");
    expect(parseScreen(screen, { ...AGY_MARKERS, emptyHints: ["Type your message"] }).draft).toBe("");
  });

  it("gives no needle for text too short to have one", () => {
    expect(draftNeedle("ok")).toBe("");
    expect(draftNeedle("ok\n\tyes please")).toBe("yesplease");
  });
});
