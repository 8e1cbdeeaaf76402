/**
 * The approval page shows no card for a request the policy decided (issue
 * 34, item 3): a real headless Chromium over a real API server with a
 * scripted session whose events carry the policy's verdict. Only the
 * request the policy asked about is a card, and the title counts it alone.
 */
import type { Browser } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import type { MapperEvent } from "../../src/mapper/index.js";
import { loadApprovalPage } from "../../src/server/approval-page.js";
import { startApiHarness, TEST_TOKEN, type ApiHarness } from "./support/api-harness.js";
import { launchChromium } from "./support/page-browser.js";
import { permissionRequested, userMessage } from "./support/scripted-session.js";

let harness: ApiHarness | undefined;
let browser: Browser | undefined;
afterEach(async () => {
  await browser?.close();
  await harness?.close();
  harness = undefined;
  browser = undefined;
});

function withVerdict(event: MapperEvent, decision: "approve" | "deny" | "ask", rule: string | null): MapperEvent {
  return { ...event, policy: { decision, rule } } as MapperEvent;
}

describe("the approval page with a policy", { timeout: 90_000 }, () => {
  it("shows only what the policy asked about", async () => {
    harness = await startApiHarness({ page: await loadApprovalPage() });
    const session = harness.addSession("conv-a");
    await harness.hub.refresh();
    const approved = withVerdict(permissionRequested("conv-a", 3, "pwd"), "approve", "read-only");
    const denied = withVerdict(permissionRequested("conv-a", 5, "rm -rf build"), "deny", "no-delete");
    const asked = withVerdict(permissionRequested("conv-a", 7, "npm publish"), "ask", "network");
    session.push(userMessage("conv-a", "Ship it"));
    for (const event of [approved, denied, asked]) session.push(event);
    session.push({ type: "history_end", conversationId: "conv-a" } as MapperEvent);
    browser = await launchChromium();
    const page = await browser.newPage();
    await page.goto(`${harness.url}/`);
    await page.getByTestId("token-input").fill(TEST_TOKEN);
    await page.getByTestId("token-save").click();
    const id = (event: MapperEvent) => (event as { interactionId: string }).interactionId;
    await page.locator(`[data-interaction-id="${id(asked)}"]`).waitFor({ timeout: 20_000 });
    expect(await page.getByTestId("pending-item").count()).toBe(1);
    expect(await page.locator(`[data-interaction-id="${id(approved)}"]`).count()).toBe(0);
    expect(await page.locator(`[data-interaction-id="${id(denied)}"]`).count()).toBe(0);
    expect(await page.title()).toBe("(1) agy inbox");
  });
});
