/**
 * A huge paste on one line: agy collapses pastes by line count only
 * (spike-notes §6.2 step 6), so 100 KB on one line stays in the composer as
 * wrapped text, taller than the screen. Its top rule scrolls off, and the
 * composer must still be recognised: to see the paste arrive, to refuse to
 * append to it, and to clear it when told to.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTmuxDriver, parseScreen, spawnTmux, type TmuxDriver } from "../../src/tmux/index.js";
import { createTmuxWorld, type FakeTuiPane, type TmuxWorld } from "./support/tmux-world.js";

let world: TmuxWorld;
let driver: TmuxDriver;
let tui: FakeTuiPane;

beforeEach(async () => {
  world = await createTmuxWorld();
  driver = createTmuxDriver({ socket: { name: world.socketName } });
  tui = await world.startFakeTui("agy");
});

afterEach(async () => {
  await world.dispose();
});

/** 100 KB on one line, with a distinct head and tail so neither stands for the other. */
const LONG_LINE = `head of the long line ${"z".repeat(100_000)} and its own tail end`;

/** Leaves LONG_LINE in the composer as a draft, the way a failed earlier send would. */
async function leaveLongDraft(): Promise<void> {
  await world.tmux(["load-buffer", "-b", "d", "-"], LONG_LINE);
  await world.tmux(["paste-buffer", "-p", "-r", "-d", "-b", "d", "-t", tui.paneId]);
  await world.waitForScreen(tui.paneId, (s) => s.replace(/\s+/g, "").includes("anditsowntailend"), "the long draft's tail", 20_000);
}

describe("a 100 KB paste on one line", () => {
  it("is seen arriving although the composer outgrows the screen, and is submitted as one turn", async () => {
    const result = await driver.deliverTurn(tui.paneId, LONG_LINE);
    expect(result).toEqual({ result: "delivered", reason: expect.stringContaining("draft left the composer") });
    expect(await tui.calls()).toEqual([{ call: "submitTurn", text: LONG_LINE }]);
  });

  it("left in the composer reads as a draft, so the next turn is refused rather than merged", async () => {
    await leaveLongDraft();
    const screen = parseScreen(await world.capture(tui.paneId));
    expect(screen.draft?.replace(/\s+/g, "")).toMatch(/anditsowntailend$/);
    const result = await driver.deliverTurn(tui.paneId, "Say hello");
    expect(result).toMatchObject({ result: "failed", reason: expect.stringContaining("draft someone typed"), screen: { composer: "draft" } });
    expect(await tui.calls()).toEqual([]);
  });

  it("left in the composer is cleared by clearDraft, and only the new turn is submitted", async () => {
    await leaveLongDraft();
    // agy 1.1.x's row: C-a C-k clear it in a few rounds (spike-notes §6.2 step 3).
    const result = await driver.deliverTurn(tui.paneId, "Say hello", { clearDraft: true, agyVersion: "1.1.27" });
    expect(result.result).toBe("delivered");
    expect(await tui.calls()).toEqual([{ call: "submitTurn", text: "Say hello" }]);
  });

  it("under a dialog that replaced the composer, gets no clearing key: the turn is refused, naming the dialog", async () => {
    await leaveLongDraft();
    await tui.setView({ running: true, pending: { kind: "permission", trajectoryId: "t", stepIndex: 4, target: "rm -rf build", description: "Remove it" } });
    await world.waitForScreen(tui.paneId, (s) => s.includes("4. No"), "the command dialog");
    const commands: string[][] = [];
    const watched = createTmuxDriver({
      socket: { name: world.socketName },
      exec: (file, args, options) => (commands.push([...args]), spawnTmux(file, args, options)),
    });
    const result = await watched.deliverTurn(tui.paneId, "Say hello", { clearDraft: true });
    expect(result).toMatchObject({ result: "failed", screen: { state: "prompt", prompt: { kind: "command" } } });
    expect(commands.filter((c) => c.includes("send-keys") || c.includes("paste-buffer"))).toEqual([]);
    expect(await tui.calls()).toEqual([]);
  });
});
