/**
 * The inbox in a real headless Chromium over a real API server with a
 * scripted session: agy's Markdown is rendered and hostile HTML never reaches
 * the DOM; a deny is one transcript line; file paths are workspace-relative.
 */
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import type { MapperEvent } from "../../src/mapper/index.js";
import { loadApprovalPage } from "../../src/server/approval-page.js";
import { startApiHarness, TEST_TOKEN, type ApiHarness } from "./support/api-harness.js";
import { permissionRequested } from "./support/scripted-session.js";

const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));
const base = { conversationId: "conv-a", trajectoryId: "traj-1" };
const HOSTILE =
  '**bold** and `code`\n\n<script>window.pwned=1</script><img src=x onerror="window.pwned=2">\n\n[click](javascript:window.pwned=3) <b onclick="x()">b</b>';

let harness: ApiHarness | undefined;
let browser: Browser | undefined;
afterEach(async () => {
  await browser?.close();
  await harness?.close();
  harness = undefined;
  browser = undefined;
});

describe("the inbox reads well", { timeout: 60_000 }, () => {
  it("renders agy's Markdown safely, shows a deny once, heads a file request by its relative path", async () => {
    if (CHROMIUM === undefined) throw new Error("Chromium is not installed: `apt-get install chromium` (.ci/run does this)");
    harness = await startApiHarness({ page: await loadApprovalPage() });
    const session = harness.addSession("conv-a");
    await harness.hub.refresh();
    session.push({ type: "message", ...base, stepIndex: 1, text: HOSTILE } as MapperEvent);
    const gate = permissionRequested("conv-a", 3, "rm -rf build") as MapperEvent & { interactionId: string };
    session.push(gate);
    session.push({
      type: "interaction_requested",
      ...base,
      stepIndex: 5,
      interactionId: "int_f5",
      stepType: "CODE_ACTION",
      callId: "c5",
      request: { kind: "permission", action: "file", target: "file:///nonexistent/ws/src/a%20b.ts", description: "edit the file" },
    } as MapperEvent);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu", "--no-first-run"] });
    const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
    await page.goto(harness.url);
    await page.getByTestId("token-input").fill(TEST_TOKEN);
    await page.getByTestId("token-save").click();
    await page.locator('[data-testid="pending-item"]').nth(1).waitFor({ timeout: 20_000 });
    await page.getByTestId("session-title").click();
    const agy = page.getByTestId("t-agy");
    await agy.waitFor({ timeout: 20_000 });
    expect(await agy.locator("strong").textContent()).toBe("bold");
    expect(await agy.locator("script, img, [onclick], [onerror]").count()).toBe(0);
    expect(await agy.locator("a").getAttribute("href")).toBeNull();
    expect(await page.evaluate(() => (globalThis as { pwned?: number }).pwned)).toBeUndefined();
    const fileCard = page.locator('[data-interaction-id="int_f5"]');
    expect(await fileCard.getByTestId("headline").textContent()).toBe("Edit file /nonexistent/ws/src/a b.ts");
    // `d` on the focused card denies it.
    const card = page.locator(`[data-interaction-id="${gate.interactionId}"]`);
    expect(await card.getByTestId("key-hint").textContent()).toBe("Keys: a approve · d deny");
    await card.focus();
    await page.keyboard.press("d");
    await expect.poll(() => session.answers.length, { timeout: 10_000 }).toBe(1);
    expect(session.answers[0]!.action).toEqual({ action: "deny" });
    session.push({
      type: "interaction_resolved",
      ...base,
      stepIndex: 3,
      interactionId: gate.interactionId,
      kind: "permission",
      outcome: "denied",
      stepStatus: "DONE",
      decidedBy: "page:Safari on iPhone",
    } as MapperEvent);
    session.push({
      type: "function_call",
      ...base,
      stepIndex: 3,
      callId: "agy_call_traj-1_3",
      name: "run_command",
      arguments: JSON.stringify({ CommandLine: "rm -rf build" }),
    } as MapperEvent);
    session.push({
      type: "function_call_output",
      ...base,
      stepIndex: 3,
      callId: "agy_call_traj-1_3",
      name: "run_command",
      output: "[agy-bridge: the user declined run_command; it did not run]",
      isError: true,
      stepStatus: "DONE",
      declined: true,
    } as MapperEvent);
    const resolvedItem = page.getByTestId("resolved-item");
    await resolvedItem.waitFor({ timeout: 20_000 });
    expect(await resolvedItem.textContent()).toContain("by Safari on iPhone");
    expect(await resolvedItem.textContent()).not.toContain("page:");
    await expect.poll(() => page.getByTestId("t-denied").count(), { timeout: 10_000 }).toBe(1);
    await page.screenshot({ path: "test-results/inbox/markdown-1366.png", fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: "test-results/inbox/markdown-390.png", fullPage: true });
    // Escape closes Settings.
    await page.locator("#settings summary").click();
    expect(await page.locator("#settings").getAttribute("open")).not.toBeNull();
    await page.keyboard.press("Escape");
    expect(await page.locator("#settings").getAttribute("open")).toBeNull();
  });
});
