/**
 * The inbox under axe-core in a real headless Chromium, over a real API
 * server with a scripted session: the sign-in screen, the inbox with its
 * cards, one card (with its remember choice open), the resolved list, the
 * transcript and Settings (with a learned rule) have no serious or critical
 * violation, in the light and the dark colour scheme.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import type { MapperEvent } from "../../src/mapper/index.js";
import { createLearnedStore } from "../../src/audit/learned-store.js";
import { loadApprovalPage } from "../../src/server/approval-page.js";
import { startApiHarness, TEST_TOKEN, type ApiHarness } from "./support/api-harness.js";
import { seriousViolations } from "./support/axe-check.js";
import { launchChromium } from "./support/page-browser.js";
import { permissionRequested, userMessage, type ScriptedSession } from "./support/scripted-session.js";

const base = { conversationId: "conv-a", trajectoryId: "traj-1" };

let harness: ApiHarness | undefined;
let browser: Browser | undefined;
let dir: string | undefined;
afterEach(async () => {
  await browser?.close();
  await harness?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  dir = undefined;
  harness = undefined;
  browser = undefined;
});

const gate = permissionRequested("conv-a", 3, "npm test -- --watch") as MapperEvent & { interactionId: string };
const question = {
  type: "interaction_requested",
  ...base,
  stepIndex: 7,
  interactionId: "int_q7",
  stepType: "ASK_QUESTION",
  callId: "agy_call_traj-1_7",
  request: {
    kind: "question",
    questions: [
      {
        question: "Which checks **first**?",
        multiSelect: false,
        options: [
          { id: "1", text: "Unit tests" },
          { id: "2", text: "Lint" },
        ],
      },
    ],
  },
} as MapperEvent;

async function world(): Promise<{ h: ApiHarness; session: ScriptedSession }> {
  dir = await mkdtemp(join(tmpdir(), "agyb-a11y-"));
  harness = await startApiHarness({
    page: await loadApprovalPage(),
    describe: () => ({ workspace: "/home/dev/proj/api", pane: "%3" }),
    rules: createLearnedStore({ file: join(dir, "learned.yaml") }),
  });
  const session = harness.addSession("conv-a");
  await harness.hub.refresh();
  session.push(userMessage("conv-a", "Run the tests"));
  session.push({ type: "message", ...base, stepIndex: 1, text: "I will run `npm test` first.\n\n- then lint" } as MapperEvent);
  session.push({
    type: "function_call",
    ...base,
    stepIndex: 2,
    callId: "c2",
    name: "run_command",
    arguments: JSON.stringify({ CommandLine: "ls" }),
  } as MapperEvent);
  session.push({
    type: "function_call_output",
    ...base,
    stepIndex: 2,
    callId: "c2",
    name: "run_command",
    output: "a\nb",
    isError: false,
    stepStatus: "DONE",
  } as MapperEvent);
  session.push(gate);
  session.push(question);
  session.push({ type: "history_end", conversationId: "conv-a" } as MapperEvent);
  return { h: harness, session };
}

/** Collects each view's serious and critical violations, so one run reports them all. */
function checker(page: Page) {
  const found: string[] = [];
  return {
    async check(what: string, selector?: string): Promise<void> {
      for (const v of await seriousViolations(page, selector)) found.push(`on ${what}: ${v}`);
    },
    verdict(): void {
      expect(found, `axe found serious or critical violations:\n${found.join("\n")}`).toEqual([]);
    },
  };
}

describe("the inbox is accessible", { timeout: 90_000 }, () => {
  for (const colorScheme of ["light", "dark"] as const) {
    it(`has no serious or critical axe violation on sign-in, the inbox, a card, the transcript and Settings (${colorScheme})`, async () => {
      const { h, session } = await world();
      browser = await launchChromium();
      const page = await browser.newPage({ viewport: { width: 1366, height: 900 }, colorScheme });
      const axe = checker(page);
      await page.goto(h.url);
      await page.getByTestId("token-input").waitFor();
      await axe.check("the sign-in screen");
      await page.getByTestId("token-input").fill(TEST_TOKEN);
      await page.getByTestId("token-save").click();
      await page.locator('[data-testid="pending-item"]').nth(1).waitFor({ timeout: 20_000 });
      await axe.check("the inbox");
      await axe.check("a permission card", `[data-interaction-id="${gate.interactionId}"]`);
      await axe.check("a question card", '[data-interaction-id="int_q7"]');
      const card = page.locator(`[data-interaction-id="${gate.interactionId}"]`);
      await card.getByTestId("remember-toggle").click();
      await card.getByTestId("remember-rule").waitFor({ timeout: 10_000 });
      await axe.check("a card with Remember ticked", `[data-interaction-id="${gate.interactionId}"]`);
      await card.getByTestId("approve").click();
      await expect.poll(() => session.answers.length, { timeout: 10_000 }).toBe(1);
      session.push({
        type: "interaction_resolved",
        ...base,
        stepIndex: 3,
        interactionId: gate.interactionId,
        kind: "permission",
        outcome: "approved",
        stepStatus: "DONE",
        decidedBy: "page",
      } as MapperEvent);
      await page.getByTestId("saved-rule").waitFor({ timeout: 10_000 });
      await axe.check("the inbox with a resolved item");
      await page.getByTestId("session-title").click();
      await page.getByTestId("t-agy").waitFor({ timeout: 20_000 });
      await page.locator('[data-testid="t-call"] summary').click();
      await axe.check("the transcript", '[data-testid="session"]');
      await page.locator("#settings summary").click();
      await page.getByTestId("rule").waitFor({ timeout: 10_000 });
      await axe.check("Settings");
      axe.verdict();
    });
  }
});
