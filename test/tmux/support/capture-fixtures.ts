/**
 * Regenerates test/tmux/fixtures/*.txt: screens of our simulator's fake TUI
 * (and of `agy-bridge sim`) captured with `capture-pane -p -J` from a real
 * tmux pane. Run: node --import tsx test/tmux/support/capture-fixtures.ts
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, ROOT, createTmuxWorld } from "./tmux-world.js";

const OUT = join(ROOT, "test/tmux/fixtures");
const world = await createTmuxWorld();
const save = (name: string, screen: string): void => writeFileSync(join(OUT, `${name}.txt`), screen);
const composerHas = (text: string) => (s: string) => s.includes(text);

try {
  let tui = await world.startFakeTui("idle");
  save("fake-tui-idle", await world.capture(tui.paneId));

  tui = await world.startFakeTui("typed");
  await world.tmux(["send-keys", "-t", tui.paneId, "-l", "half typed draft"]);
  save("fake-tui-typed-draft", await world.waitForScreen(tui.paneId, composerHas("> half typed draft"), "the draft"));

  tui = await world.startFakeTui("multiline");
  await world.tmux(["load-buffer", "-b", "m", "-"], "first line\nsecond line\nthird line");
  await world.tmux(["paste-buffer", "-p", "-r", "-d", "-b", "m", "-t", tui.paneId]);
  save("fake-tui-multiline-draft", await world.waitForScreen(tui.paneId, composerHas("third line"), "the pasted lines"));

  tui = await world.startFakeTui("placeholder");
  await world.tmux(["load-buffer", "-b", "p", "-"], Array.from({ length: 14 }, (_, i) => `line ${i + 1}`).join("\n"));
  await world.tmux(["paste-buffer", "-p", "-r", "-d", "-b", "p", "-t", tui.paneId]);
  save("fake-tui-paste-placeholder", await world.waitForScreen(tui.paneId, composerHas("[Pasted text #1"), "the placeholder"));

  tui = await world.startFakeTui("wrapped", { columns: 60 });
  const long = "Please look at every file under src and explain how the pieces fit together in detail";
  await world.tmux(["send-keys", "-t", tui.paneId, "-l", long]);
  save("fake-tui-wrapped-draft", await world.waitForScreen(tui.paneId, composerHas("in detail"), "the wrapped draft"));

  tui = await world.startFakeTui("running");
  await tui.setView({
    running: true,
    transcript: [
      { role: "user", text: "Summarise the README" },
      { role: "assistant", text: "Reading it now" },
    ],
  });
  save("fake-tui-running", await world.waitForScreen(tui.paneId, composerHas("esc to cancel"), "the running footer"));

  tui = await world.startFakeTui("permission");
  await tui.setView({
    running: true,
    transcript: [{ role: "user", text: "Delete the build directory" }],
    pending: {
      kind: "permission",
      trajectoryId: "t",
      stepIndex: 3,
      target: "rm -rf build",
      description: "Remove the build directory",
      suggestedPersistPattern: "rm -rf build",
    },
  });
  save("fake-tui-permission-prompt", await world.waitForScreen(tui.paneId, composerHas("4. No"), "the permission prompt"));

  tui = await world.startFakeTui("question");
  await tui.setView({
    running: true,
    pending: {
      kind: "question",
      trajectoryId: "t",
      stepIndex: 5,
      questions: [
        {
          question: "Which colours?",
          multiSelect: true,
          options: [
            { id: "1", text: "red" },
            { id: "2", text: "green" },
            { id: "3", text: "blue" },
          ],
        },
      ],
    },
  });
  save("fake-tui-question-prompt", await world.waitForScreen(tui.paneId, composerHas("3. [ ] blue"), "the question prompt"));

  tui = await world.startFakeTui("numbered");
  await tui.setView({
    transcript: [
      { role: "user", text: "List three steps" },
      { role: "assistant", text: "Here they are:\n1. Build\n2. Test\n3. Ship" },
    ],
  });
  save("fake-tui-numbered-answer", await world.waitForScreen(tui.paneId, composerHas("3. Ship"), "the numbered answer"));

  const sim = await world.newSession("sim", [process.execPath, "--import", "tsx", BIN, "sim", "--speed", "0"], { columns: 100, rows: 30 });
  save("sim-idle", await world.waitForScreen(sim, (s) => s.includes("? for shortcuts") && s.includes("(plain)"), "the sim's idle TUI"));
  await world.tmux(["load-buffer", "-b", "s", "-"], "Run pwd");
  await world.tmux(["paste-buffer", "-p", "-r", "-d", "-b", "s", "-t", sim]);
  await world.waitForScreen(sim, composerHas("> Run pwd"), "the draft");
  await world.tmux(["send-keys", "-t", sim, "Enter"]);
  save("sim-permission-prompt", await world.waitForScreen(sim, composerHas("4. No"), "the sim's permission prompt"));
} finally {
  await world.dispose();
}
