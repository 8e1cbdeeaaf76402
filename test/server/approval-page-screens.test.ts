/**
 * The approval page's layout in Chromium at a phone's width and a desktop's:
 * nothing overflows sideways from 320 px up, the header holds no stretched
 * button, and screenshots are saved for a person to look at
 * (/tmp/agy-bridge-inbox-<width>.png).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import type { MapperEvent } from "../../src/mapper/index.js";
import { loadApprovalPage } from "../../src/server/approval-page.js";
import { createDeviceStore } from "../../src/server/device-store.js";
import { createPairingCodes } from "../../src/server/pairing-codes.js";
import { startApiHarness, TEST_TOKEN, type ApiHarness } from "./support/api-harness.js";
import { launchChromium } from "./support/page-browser.js";
import { permissionRequested, userMessage } from "./support/scripted-session.js";

let harness: ApiHarness | undefined;
let browser: Browser | undefined;
let dir: string | undefined;
afterEach(async () => {
  await browser?.close();
  await harness?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  harness = undefined;
  browser = undefined;
  dir = undefined;
});

const base = { conversationId: "conv-a", trajectoryId: "traj-1" };

async function populated(): Promise<ApiHarness> {
  dir = await mkdtemp(join(tmpdir(), "agyb-screens-"));
  harness = await startApiHarness({
    page: await loadApprovalPage(),
    devices: createDeviceStore({ file: join(dir, "devices.json") }),
    pairing: createPairingCodes(),
    describe: () => ({ workspace: "/home/dev/proj/api", pane: "%3" }),
  });
  const session = harness.addSession("conv-a");
  await harness.hub.refresh();
  const events: MapperEvent[] = [
    { type: "model_changed", ...base, stepIndex: 0, model: "MODEL_PLACEHOLDER_M26", displayName: "Gemini 3 Pro" } as MapperEvent,
    userMessage("conv-a", "Add a health endpoint, then run the tests"),
    {
      type: "message",
      ...base,
      stepIndex: 1,
      messageId: "m1",
      role: "assistant",
      text: "I'll add GET /health to src/app.ts and run the suite.",
      failed: false,
    } as MapperEvent,
    {
      type: "function_call",
      ...base,
      stepIndex: 2,
      callId: "c2",
      name: "view_file",
      arguments: JSON.stringify({ AbsolutePath: "/home/dev/proj/api/src/app.ts" }),
      description: "Reading the app",
    } as MapperEvent,
    {
      type: "function_call_output",
      ...base,
      stepIndex: 2,
      callId: "c2",
      name: "view_file",
      output: "import express from 'express';\n…",
      isError: false,
      stepStatus: "DONE",
    } as MapperEvent,
    {
      type: "function_call",
      ...base,
      stepIndex: 3,
      callId: "c3",
      name: "run_command",
      arguments: JSON.stringify({ CommandLine: "git clean -fdx" }),
    } as MapperEvent,
    {
      type: "function_call_output",
      ...base,
      stepIndex: 3,
      callId: "c3",
      name: "run_command",
      output: "[agy-bridge: the user declined run_command; it did not run]",
      isError: true,
      stepStatus: "DONE",
      declined: true,
    } as MapperEvent,
    permissionRequested("conv-a", 4, "npm test -- --reporter=dot --coverage --runInBand src/routes/health.test.ts"),
    {
      type: "interaction_requested",
      ...base,
      stepIndex: 5,
      interactionId: "int_file00000000005",
      stepType: "CODE_ACTION",
      callId: "agy_call_traj-1_5",
      request: {
        kind: "permission",
        variant: "filePermission",
        action: "file",
        target: "/home/dev/proj/api/src/routes/health.ts",
        description: "Creating the health route",
      },
    } as MapperEvent,
    {
      type: "interaction_requested",
      ...base,
      stepIndex: 6,
      interactionId: "int_ques00000000006",
      stepType: "ASK_QUESTION",
      callId: "agy_call_traj-1_6",
      request: {
        kind: "question",
        questions: [
          {
            question: "Which checks should run before I commit?",
            multiSelect: true,
            options: [
              { id: "1", text: "Unit tests" },
              { id: "2", text: "ESLint" },
              { id: "3", text: "tsc --noEmit" },
            ],
          },
        ],
      },
    } as MapperEvent,
    { type: "history_end", conversationId: "conv-a" } as MapperEvent,
  ];
  for (const event of events) session.push(event);
  return harness;
}

describe("the approval page's layout", { timeout: 90_000 }, () => {
  it("fits 320 px, 390 px and 1366 px without sideways scrolling, with a compact header, and saves screenshots", async () => {
    const h = await populated();
    browser = await launchChromium();
    for (const width of [320, 390, 1366]) {
      const page = await browser.newPage({ viewport: { width, height: width < 1000 ? 844 : 900 } });
      await page.goto(h.url);
      await page.getByTestId("token-input").fill(TEST_TOKEN);
      await page.getByTestId("token-save").click();
      await page.getByTestId("pending-item").nth(2).waitFor({ timeout: 20_000 });
      await page.locator('[data-testid="session"] summary').first().click();
      await page.getByTestId("t-denied").waitFor({ timeout: 20_000 });
      const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth");
      expect([width, overflow]).toEqual([width, 0]);
      const settings = await page.locator("#settings > summary").boundingBox();
      expect(settings!.width).toBeLessThan(160);
      expect(await page.getByTestId("forget").isVisible()).toBe(false);
      if (width !== 320) {
        await page.evaluate("window.scrollTo(0, 0)");
        await page.screenshot({ path: `/tmp/agy-bridge-inbox-${width}.png` });
        await page.screenshot({ path: `/tmp/agy-bridge-inbox-${width}-full.png`, fullPage: true });
      }
      await page.close();
    }
  });

  it("puts every form control behind a label a screen reader reads", async () => {
    const h = await populated();
    browser = await launchChromium();
    const page = await browser.newPage();
    await page.goto(h.url);
    await page.getByTestId("token-input").fill(TEST_TOKEN);
    await page.getByTestId("token-save").click();
    await page.getByTestId("pending-item").nth(2).waitFor({ timeout: 20_000 });
    const unlabeled = await page.evaluate<string[]>(`[...document.querySelectorAll("input, textarea")]
      .filter((i) => i.type !== "hidden" && i.labels.length === 0 && !i.getAttribute("aria-label"))
      .map((i) => i.outerHTML)`);
    expect(unlabeled).toEqual([]);
    const unnamedButtons = await page.evaluate<string[]>(
      `[...document.querySelectorAll("button")].filter((b) => b.textContent.trim() === "").map((b) => b.outerHTML)`,
    );
    expect(unnamedButtons).toEqual([]);
    // Focus follows the reading order: nothing jumps the queue with a positive tabindex.
    expect(await page.locator("[tabindex]:not([tabindex='-1']):not([tabindex='0'])").count()).toBe(0);
  });

  it("keeps text at a contrast of at least 4.5:1 in the light and the dark scheme", async () => {
    const h = await populated();
    browser = await launchChromium();
    for (const colorScheme of ["light", "dark"] as const) {
      const page = await browser.newPage({ colorScheme });
      await page.goto(h.url);
      await page.getByTestId("token-input").fill(TEST_TOKEN);
      await page.getByTestId("token-save").click();
      await page.getByTestId("pending-item").nth(2).waitFor({ timeout: 20_000 });
      // Each text element against the first opaque background behind it (WCAG relative luminance).
      const low = await page.evaluate<string[]>(`(() => {
        const rgb = (c) => c.match(/[\\d.]+/g).map(Number);
        const lum = ([r, g, b]) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }; return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
        const bg = (el) => { for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor); if (c.length === 3 || c[3] > 0.9) return c.slice(0, 3); } return [255, 255, 255]; };
        const out = [];
        for (const el of document.querySelectorAll("h1, h2, h3, p, span, label, legend, button, summary, li, strong, code")) {
          if (!el.textContent.trim() || el.closest("[hidden]") || el.offsetParent === null || el.closest(".visually-hidden")) continue;
          const a = lum(rgb(getComputedStyle(el).color)), b = lum(bg(el));
          const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
          if (ratio < 4.5) out.push(el.tagName + "." + el.className + " " + ratio.toFixed(2) + " " + el.textContent.trim().slice(0, 30));
        }
        return out;
      })()`);
      expect([colorScheme, low]).toEqual([colorScheme, []]);
      await page.close();
    }
  });
});
