/**
 * The approval page in a real headless Chromium over a real API server with
 * a scripted session: what it shows when an interaction is resolved.
 */
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import type { MapperEvent } from "../../src/mapper/index.js";
import { loadApprovalPage } from "../../src/server/approval-page.js";
import { startApiHarness, TEST_TOKEN, type ApiHarness } from "./support/api-harness.js";
import { permissionRequested } from "./support/scripted-session.js";

const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));

let harness: ApiHarness | undefined;
let browser: Browser | undefined;
afterEach(async () => {
  await browser?.close();
  await harness?.close();
  harness = undefined;
  browser = undefined;
});

function resolved(stepIndex: number, outcome: string, stepStatus: string): MapperEvent {
  const requested = permissionRequested("conv-a", stepIndex, "x") as { interactionId: string };
  return {
    type: "interaction_resolved",
    conversationId: "conv-a",
    trajectoryId: "traj-1",
    stepIndex,
    interactionId: requested.interactionId,
    kind: "permission",
    outcome,
    stepStatus,
  } as MapperEvent;
}

describe("the approval page's resolved list", { timeout: 60_000 }, () => {
  it("shows the outcome word — denied, approved, timed out — never the step status", async () => {
    if (CHROMIUM === undefined) throw new Error("Chromium is not installed: `apt-get install chromium` (.ci/run does this)");
    harness = await startApiHarness({ page: await loadApprovalPage() });
    const h = harness;
    const session = h.addSession("conv-a");
    await h.hub.refresh();
    session.push(permissionRequested("conv-a", 3, "rm -rf build"));
    session.push(permissionRequested("conv-a", 5, "pwd"));
    session.push(permissionRequested("conv-a", 7, "sleep 999"));
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu", "--no-first-run"] });
    const page = await browser.newPage();
    await page.goto(h.url);
    await page.getByTestId("token-input").fill(TEST_TOKEN);
    await page.getByTestId("token-save").click();
    await page.locator('[data-testid="pending-item"]').nth(2).waitFor({ timeout: 20_000 });
    session.push(resolved(3, "denied", "RUNNING"));
    session.push(resolved(5, "approved", "RUNNING"));
    session.push(resolved(7, "timed_out", "ERROR"));
    const items = page.locator('[data-testid="resolved-item"]');
    await items.nth(2).waitFor({ timeout: 20_000 });
    const texts = await items.allTextContents();
    expect(texts.find((t) => t.includes("rm -rf build"))).toMatch(/— denied$/);
    expect(texts.find((t) => t.includes("pwd"))).toMatch(/— approved$/);
    expect(texts.find((t) => t.includes("sleep 999"))).toMatch(/— timed out$/);
    expect(texts.join("\n")).not.toMatch(/RUNNING|ERROR|answered/);
  });
});
