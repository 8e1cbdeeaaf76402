/**
 * The approval page on `serve --redis`, in a real headless Chromium: its
 * event ids are Redis stream entry ids (`<ms>-<seq>`), which the page must
 * not take for `<epoch>-<seq>` — a new millisecond is not a new run of serve
 * to rebuild from. Across a restart of serve (killed, started again on the
 * same address) the page resumes: each message of the conversation shows
 * once, none is lost.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { launchChromium, openPhonePage } from "../server/support/page-browser.js";
import { startServeProcess, type ServeProcess } from "../server/support/serve-process.js";
import { startRelayWorld, summary, type StreamEntry } from "./support/relay-world.js";
import { until } from "../support/until.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("the approval page on serve --redis", { timeout: 180_000 }, () => {
  it("keeps the conversation across entry ids of many milliseconds and across a restart of serve, each message once", async () => {
    const w = await startRelayWorld();
    cleanups.push(() => w.close());
    await w.startRelay();
    const dir = await mkdtemp(join(tmpdir(), "agyb-serve-page-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const port = await freePort();
    const serves: ServeProcess[] = [];
    cleanups.push(async () => {
      for (const s of serves) await s.stop();
    });
    const startServe = async () => {
      const serve = await startServeProcess({ configHome: dir, args: ["--redis", w.redis.url, "--refresh-ms", "200", "--listen", `127.0.0.1:${port}`] });
      serves.push(serve);
      return serve;
    };
    let serve = await startServe();
    let browser: Browser | undefined = await launchChromium();
    cleanups.push(async () => browser?.close());
    const page = await openPhonePage(browser, serve.url, serve.token);
    const ours = `[data-conversation-id="${w.conversationId}"]`;
    const lines = async (testId: string) => page.locator(`[data-testid="session"]${ours} [data-testid="${testId}"]`).allTextContents();
    const ends = (entries: StreamEntry[]) => entries.filter((e) => (JSON.parse(e.fields["event"]!) as { reason?: string }).reason === "turn_completed").length;
    let seen: StreamEntry[] = [];
    const turnEnded = async (n: number) => {
      await until(
        async () => {
          seen = await w.events();
          return ends(seen) >= n ? true : undefined;
        },
        `the end of turn ${n} in the stream`,
        { ms: 20_000, seen: () => summary(seen) },
      );
    };

    // Turn 1, answered on the page: its entries span many milliseconds.
    w.sim.engine.tuiPort().submitTurn("Run pwd");
    const item = page.locator(`[data-testid="pending-item"]${ours}`).filter({ hasText: "pwd" });
    await item.waitFor({ timeout: 30_000 });
    await item.getByTestId("approve").tap();
    await page.locator(`[data-testid="resolved-item"]${ours}`).filter({ hasText: "pwd" }).waitFor({ timeout: 30_000 });
    await turnEnded(1);
    const stamps = new Set(seen.map((e) => e.id.split("-")[0]));
    expect(stamps.size, "entries of more than one millisecond").toBeGreaterThan(1);
    await until(
      async () => ((await lines("t-call")).some((t) => t.includes("pwd") && !t.includes("running")) ? true : undefined),
      "the command's output on the page",
      { ms: 20_000 },
    );
    expect(await lines("t-you")).toEqual(["You:Run pwd"]);

    // serve dies; turn 2 happens meanwhile; serve comes back on the same address and the page resumes.
    serve.child.kill("SIGKILL");
    await until(() => serve.exited(), "serve to die");
    w.sim.engine.tuiPort().submitTurn("Say hello in one short sentence.");
    await turnEnded(2);
    serve = await startServe();
    let shown: string[] = [];
    await until(
      async () => {
        shown = await lines("t-you");
        return shown.length >= 2 ? true : undefined;
      },
      "turn 2 on the page after the restart",
      { ms: 30_000, seen: () => JSON.stringify(shown) },
    );
    await until(async () => ((await lines("t-agy")).some((t) => t.includes("Hello!")) ? true : undefined), "the answer of turn 2", { ms: 20_000 });
    expect(await lines("t-you")).toEqual(["You:Run pwd", "You:Say hello in one short sentence."]);
    expect((await lines("t-agy")).filter((t) => t.includes("Hello!"))).toHaveLength(1);
    expect(await page.locator(`[data-testid="resolved-item"]${ours}`).count()).toBe(1);
    await browser.close();
    browser = undefined;
  });
});
