/**
 * The approval page on `serve --redis`, in a real headless Chromium: a fleet
 * session whose history has been read shows what a local one shows — "Nothing
 * waiting for you." when nothing waits, not "Loading…" forever. The relay
 * publishes no `history_end` (each reader gets the boundary itself), so this
 * holds only if serve sends its clients one (an id-less SSE event).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { launchChromium, openPhonePage } from "../server/support/page-browser.js";
import { startServeProcess } from "../server/support/serve-process.js";
import { startRelayWorld, summary, type StreamEntry } from "./support/relay-world.js";
import { until } from "../support/until.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/** What the inbox says now: whether "Loading…" and "Nothing waiting for you." show, and the pending cards. */
async function inbox(page: Page): Promise<{ loading: boolean; empty: boolean; pending: number }> {
  return {
    loading: await page.getByTestId("loading").isVisible(),
    empty: await page.getByTestId("empty").isVisible(),
    pending: await page.getByTestId("pending-item").count(),
  };
}

describe("the approval page on serve --redis, a session with nothing pending", { timeout: 180_000 }, () => {
  it("says nothing is waiting once the fleet session's history is read, and shows a request that arrives later", async () => {
    const w = await startRelayWorld();
    cleanups.push(() => w.close());
    await w.startRelay();
    // One finished turn: a history with a transcript and nothing open.
    w.sim.engine.tuiPort().submitTurn("Say hello in one short sentence.");
    let seen: StreamEntry[] = [];
    const turnEnded = async (n: number) => {
      await until(
        async () => {
          seen = await w.events();
          return seen.filter((e) => (JSON.parse(e.fields["event"]!) as { reason?: string }).reason === "turn_completed").length >= n ? true : undefined;
        },
        `the end of turn ${n} in the stream`,
        { ms: 20_000, seen: () => summary(seen) },
      );
    };
    await turnEnded(1);

    const dir = await mkdtemp(join(tmpdir(), "agyb-serve-page-ready-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const serve = await startServeProcess({ configHome: dir, args: ["--redis", w.redis.url, "--refresh-ms", "200"] });
    cleanups.push(() => serve.stop());
    let browser: Browser | undefined = await launchChromium();
    cleanups.push(async () => browser?.close());
    const page = await openPhonePage(browser, serve.url, serve.token);
    const ours = `[data-conversation-id="${w.conversationId}"]`;
    const lines = async (testId: string) => page.locator(`[data-testid="session"]${ours} [data-testid="${testId}"]`).allTextContents();

    // The history is on the page, and then the inbox says nothing waits (not "Loading…").
    await until(async () => ((await lines("t-agy")).some((t) => t.includes("Hello!")) ? true : undefined), "the history's answer on the page", { ms: 30_000 });
    let state = await inbox(page);
    await until(
      async () => {
        state = await inbox(page);
        return state.empty && !state.loading ? true : undefined;
      },
      '"Nothing waiting for you." instead of "Loading…"',
      { ms: 20_000, seen: () => `${JSON.stringify(state)}; serve stderr: ${serve.stderr().slice(-500)}` },
    );
    expect(state).toEqual({ loading: false, empty: true, pending: 0 });
    expect(await page.getByTestId("empty").textContent()).toBe("Nothing waiting for you.");

    // A request that arrives live replaces it, and once answered the inbox is empty again.
    w.sim.engine.tuiPort().submitTurn("Run pwd");
    const item = page.locator(`[data-testid="pending-item"]${ours}`).filter({ hasText: "pwd" });
    await item.waitFor({ timeout: 30_000 });
    state = await inbox(page);
    expect(state).toEqual({ loading: false, empty: false, pending: 1 });
    await item.getByTestId("approve").tap();
    await until(
      async () => {
        state = await inbox(page);
        return state.empty && !state.loading && state.pending === 0 ? true : undefined;
      },
      "the inbox empty again after the approval",
      { ms: 30_000, seen: () => JSON.stringify(state) },
    );
    await browser.close();
    browser = undefined;
  });
});
