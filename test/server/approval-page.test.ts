/**
 * The approval page in a real headless Chromium (Debian's, driven by
 * playwright-core): a person taps Approve on a pending command of the
 * simulator running as agy, and answers a question with an option.
 */
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { startServeWorld, type ServeWorld } from "./support/serve-world.js";
import { until } from "../support/until.js";

const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));

let world: ServeWorld | undefined;
let browser: Browser | undefined;
afterEach(async () => {
  await browser?.close();
  await world?.close();
  world = undefined;
  browser = undefined;
});

async function openPage(w: ServeWorld) {
  if (CHROMIUM === undefined) throw new Error("Chromium is not installed: `apt-get install chromium` (.ci/run does this)");
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const page = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  const requested: string[] = [];
  page.on("request", (r) => requested.push(r.url()));
  await page.goto(w.url);
  await page.getByTestId("token-input").fill(w.token);
  await page.getByTestId("token-save").tap();
  return { page, requested };
}

async function sendTurn(w: ServeWorld, text: string): Promise<void> {
  const res = await w.api(`/v1/sessions/${w.conversationId}/turns`, { method: "POST", body: JSON.stringify({ text }) });
  expect(await res.json(), w.stderr()).toMatchObject({ result: "delivered" });
}

describe("the approval page", { timeout: 120_000 }, () => {
  it("approves a pending command with a tap and shows it resolved", async () => {
    world = await startServeWorld();
    const w = world;
    const { page, requested } = await openPage(w);
    await sendTurn(w, "Run pwd");
    // The page shows every agy on the machine (other tests run theirs): look at ours.
    const ours = `[data-conversation-id="${w.conversationId}"]`;
    const item = page.locator(`[data-testid="pending-item"]${ours}`).filter({ hasText: "pwd" });
    await item.waitFor({ timeout: 30_000 });
    // What a phone shows for the simulator's real request (looked at by hand; nothing asserted on pixels).
    await page.screenshot({ path: "/tmp/agy-bridge-inbox-sim-390.png" });
    await item.getByTestId("approve").tap();
    await page.locator(`[data-testid="resolved-item"]${ours}`).filter({ hasText: "pwd" }).waitFor({ timeout: 30_000 });
    const left = await page.locator(`[data-testid="pending-item"]${ours}`).allTextContents();
    expect(left, "pending items of this conversation still shown").toEqual([]);
    const pending = await until(
      async () => {
        const body = (await (await w.api(`/v1/sessions/${w.conversationId}/pending`)).json()) as { pending: unknown[] };
        return body.pending.length === 0 ? body : undefined;
      },
      "no pending interaction",
      { ms: 10_000, everyMs: 100 },
    );
    expect(pending.pending).toEqual([]);
    expect(requested.some((u) => u.includes(w.token))).toBe(false);
  });

  it("denies a pending command with a tap and shows it as denied, not as answered", async () => {
    world = await startServeWorld();
    const w = world;
    const { page } = await openPage(w);
    await sendTurn(w, "Run pwd");
    const ours = `[data-conversation-id="${w.conversationId}"]`;
    const item = page.locator(`[data-testid="pending-item"]${ours}`).filter({ hasText: "pwd" });
    await item.waitFor({ timeout: 30_000 });
    await item.getByTestId("deny").tap();
    const resolved = page.locator(`[data-testid="resolved-item"]${ours}`).filter({ hasText: "pwd" });
    await resolved.waitFor({ timeout: 30_000 });
    expect(await resolved.getByTestId("outcome").textContent()).toBe("denied");
  });

  it("answers a question with an option", async () => {
    world = await startServeWorld();
    const w = world;
    const { page } = await openPage(w);
    await sendTurn(w, "Help me start a project");
    const ours = `[data-conversation-id="${w.conversationId}"]`;
    const item = page.locator(`[data-testid="pending-item"]${ours}`).first();
    await item.waitFor({ timeout: 30_000 });
    const question = await item.getByTestId("question").textContent();
    expect(question).toBeTruthy();
    await item.getByTestId("option-2").check();
    await item.getByTestId("submit-answer").tap();
    const resolved = page.locator(`[data-testid="resolved-item"]${ours}`).first();
    await resolved.waitFor({ timeout: 30_000 });
    // The resolved line is headed by the question itself, and says how it ended.
    expect(await resolved.textContent()).toContain(question!);
    expect(await resolved.getByTestId("outcome").textContent()).toBe("answered");
  });
});
