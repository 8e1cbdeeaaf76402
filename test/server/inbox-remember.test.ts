/**
 * The remember choice on the inbox's permission cards and the learned-rules
 * view in Settings, in a real headless Chromium. serve's rules routes are
 * answered by a loopback stand-in with the contract's exact shapes
 * (support/rules-stand-in.ts) in front of a real API server with a scripted
 * session; everything else is the real API.
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
import { startRulesStandIn, type RulesStandIn, type StandInRule } from "./support/rules-stand-in.js";
import { permissionRequested, type ScriptedSession } from "./support/scripted-session.js";

const base = { conversationId: "conv-a", trajectoryId: "traj-1" };
const watch = permissionRequested("conv-a", 3, "npm test -- --watch") as MapperEvent & { interactionId: string };
const wipe = permissionRequested("conv-a", 5, "rm -rf build") as MapperEvent & { interactionId: string };
const odd = permissionRequested("conv-a", 9, "frobnicate") as MapperEvent & { interactionId: string };
const kept: StandInRule = {
  id: "r-old",
  decision: "deny",
  match: "git push --force",
  scope: "everywhere",
  kind: "command",
  addedBy: "page:Safari on iPhone",
  addedAt: "2026-11-30T10:00:00.000Z",
  fromRequest: "int_0000000000000001",
  fired: 2,
  lastFired: "2026-12-01T09:30:00.000Z",
};

let harness: ApiHarness | undefined;
let standIn: RulesStandIn | undefined;
let browser: Browser | undefined;
let dir: string | undefined;
afterEach(async () => {
  await browser?.close();
  await standIn?.close();
  await harness?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  dir = undefined;
  harness = undefined;
  standIn = undefined;
  browser = undefined;
});

async function world(): Promise<{ session: ScriptedSession; page: Page; rules: RulesStandIn }> {
  harness = await startApiHarness({ page: await loadApprovalPage(), describe: () => ({ workspace: "/home/dev/proj/api", pane: "%3" }) });
  const session = harness.addSession("conv-a");
  await harness.hub.refresh();
  for (const gate of [watch, wipe, odd]) session.push(gate);
  session.push({ type: "history_end", conversationId: "conv-a" } as MapperEvent);
  standIn = await startRulesStandIn({
    upstream: harness.url,
    token: TEST_TOKEN,
    rules: [kept],
    proposals: {
      [watch.interactionId]: { match: "npm test", scope: "workspace", kind: "command", alternatives: ["npm *"] },
      [wipe.interactionId]: {
        match: "rm -rf build",
        scope: "workspace",
        kind: "command",
        alternatives: [],
        allowRefused: "No rule may approve this command line, because it removes files recursively; answer it without remembering.",
      },
    },
  });
  browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
  await page.goto(standIn.url);
  await page.getByTestId("token-input").fill(TEST_TOKEN);
  await page.getByTestId("token-save").click();
  await page.locator('[data-testid="pending-item"]').nth(2).waitFor({ timeout: 20_000 });
  return { session, page, rules: standIn };
}

function resolved(interactionId: string, stepIndex: number, outcome: "approved" | "denied"): MapperEvent {
  return { type: "interaction_resolved", ...base, stepIndex, interactionId, kind: "permission", outcome, stepStatus: "DONE", decidedBy: "page" } as MapperEvent;
}

describe("the remember choice on a card", { timeout: 90_000 }, () => {
  it("shows the proposed rule exactly, lets it be edited and scoped, and sends it with Approve as always allow", async () => {
    const { session, page, rules } = await world();
    const card = page.locator(`[data-interaction-id="${watch.interactionId}"]`);
    expect(await card.getByTestId("approve").textContent()).toBe("Approve");
    await card.getByTestId("remember-toggle").check();
    const text = card.getByTestId("remember-rule");
    await expect.poll(() => text.inputValue(), { timeout: 10_000 }).toBe("npm test");
    expect(await card.getByTestId("remember-scope-workspace").isChecked()).toBe(true);
    expect(await card.getByTestId("remember-preview").textContent()).toBe(
      "Saves the command rule npm test for this workspace, with the answer you choose below.",
    );
    expect(await card.getByTestId("approve").textContent()).toBe("Approve · always allow");
    expect(await card.getByTestId("deny").textContent()).toBe("Deny · always deny");
    const wider = card.getByTestId("remember-alternative");
    expect(await wider.getAttribute("aria-label")).toBe("Use the wider rule npm *");
    await wider.click();
    expect(await text.inputValue()).toBe("npm *");
    expect(await card.getByTestId("remember-match").textContent()).toBe("npm *");
    await text.fill("npm test --");
    await card.getByTestId("remember-scope-conversation").check();
    expect(await card.getByTestId("remember-match").textContent()).toBe("npm test --");
    expect(await card.getByTestId("remember-preview").textContent()).toContain("for this conversation only");
    const found = await seriousViolations(page, `[data-interaction-id="${watch.interactionId}"]`);
    expect(found, `axe on the card with Remember open:\n${found.join("\n")}`).toEqual([]);
    await page.emulateMedia({ colorScheme: "dark" });
    const dark = await seriousViolations(page, `[data-interaction-id="${watch.interactionId}"]`);
    expect(dark, `axe on the card with Remember open, dark scheme:\n${dark.join("\n")}`).toEqual([]);
    await page.emulateMedia({ colorScheme: "light" });
    // From the top: the sticky header then stays where a person sees it.
    await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
    await page.screenshot({ path: "test-results/inbox/remember-1366.png", fullPage: true });
    await card.screenshot({ path: "test-results/inbox/remember-card-1366.png" });
    await page.setViewportSize({ width: 390, height: 844 });
    // From the top: the sticky header then stays where a person sees it.
    await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
    await page.screenshot({ path: "test-results/inbox/remember-390.png", fullPage: true });
    await card.screenshot({ path: "test-results/inbox/remember-card-390.png" });
    await card.getByTestId("approve").click();
    await expect.poll(() => rules.remembered.length, { timeout: 10_000 }).toBe(1);
    expect(rules.remembered[0]).toEqual({ interactionId: watch.interactionId, action: "approve", remember: { scope: "conversation", rule: "npm test --" } });
    // The rule is kept before the answer goes out: wait for the answer too.
    await expect.poll(() => session.answers, { timeout: 10_000 }).toEqual([{ interactionId: watch.interactionId, action: { action: "approve" } }]);
    await expect
      .poll(() => card.getByTestId("item-status").textContent(), { timeout: 10_000 })
      .toBe("Sent — saved the rule: always allow npm test -- (this conversation only).");
    session.push(resolved(watch.interactionId, 3, "approved"));
    const saved = page.locator(`[data-testid="resolved-item"][data-interaction-id="${watch.interactionId}"] [data-testid="saved-rule"]`);
    await saved.waitFor({ timeout: 10_000 });
    expect(await saved.textContent()).toBe("Rule saved: always allow npm test -- (this conversation only)");
  });

  it("sends the rule with Deny as always deny, with the instruction, and not without Remember", async () => {
    const { session, page, rules } = await world();
    const card = page.locator(`[data-interaction-id="${wipe.interactionId}"]`);
    await card.getByTestId("remember-toggle").check();
    await expect.poll(() => card.getByTestId("remember-rule").inputValue(), { timeout: 10_000 }).toBe("rm -rf build");
    // serve refuses an allow rule for it, so only Deny remembers.
    const refusal = "No rule may approve this command line, because it removes files recursively; answer it without remembering.";
    expect(await card.getByTestId("remember-status").textContent()).toBe(`Only Deny can be remembered: ${refusal}`);
    expect(await card.getByTestId("approve").textContent()).toBe("Approve");
    expect(await card.getByTestId("deny").textContent()).toBe("Deny · always deny");
    await card.getByTestId("approve").click();
    expect(await card.getByTestId("item-status").textContent()).toBe(
      `This request cannot be remembered as always allow: ${refusal} Untick Remember to approve it once.`,
    );
    expect(session.answers).toEqual([]);
    await card.getByTestId("remember-scope-everywhere").check();
    await card.getByTestId("instruction").fill("never wipe build");
    await card.getByTestId("deny").click();
    await expect.poll(() => rules.remembered.length, { timeout: 10_000 }).toBe(1);
    expect(rules.remembered[0]).toEqual({ interactionId: wipe.interactionId, action: "deny", remember: { scope: "everywhere", rule: "rm -rf build" } });
    // The rule is kept before the answer goes out: wait for the answer too.
    await expect
      .poll(() => session.answers, { timeout: 10_000 })
      .toEqual([{ interactionId: wipe.interactionId, action: { action: "deny", instruction: "never wipe build" } }]);
    expect(rules.rules.map((r) => [r.decision, r.match, r.scope])).toEqual([
      ["deny", "git push --force", "everywhere"],
      ["deny", "rm -rf build", "everywhere"],
    ]);
    // Unticked, an answer carries no rule.
    const other = page.locator(`[data-interaction-id="${watch.interactionId}"]`);
    await other.getByTestId("remember-toggle").check();
    await expect.poll(() => other.getByTestId("remember-rule").inputValue(), { timeout: 10_000 }).toBe("npm test");
    await other.getByTestId("remember-toggle").uncheck();
    expect(await other.getByTestId("approve").textContent()).toBe("Approve");
    await other.getByTestId("approve").click();
    await expect.poll(() => session.answers.length, { timeout: 10_000 }).toBe(2);
    expect(session.answers[1]).toEqual({ interactionId: watch.interactionId, action: { action: "approve" } });
    expect(rules.remembered).toHaveLength(1);
  });

  it("refuses an empty rule, and says so when serve has no rule to propose", async () => {
    const { session, page } = await world();
    const card = page.locator(`[data-interaction-id="${watch.interactionId}"]`);
    await card.getByTestId("remember-toggle").check();
    await expect.poll(() => card.getByTestId("remember-rule").inputValue(), { timeout: 10_000 }).toBe("npm test");
    await card.getByTestId("remember-rule").fill("  ");
    await card.getByTestId("approve").click();
    expect(await card.getByTestId("item-status").textContent()).toBe("Write the rule to save, or untick Remember.");
    expect(session.answers).toEqual([]);
    const none = page.locator(`[data-interaction-id="${odd.interactionId}"]`);
    // The page unticks it again once serve says there is nothing to propose.
    await none.getByTestId("remember-toggle").click();
    await expect
      .poll(() => none.getByTestId("remember-status").textContent(), { timeout: 10_000 })
      .toBe("No rule to propose: no rule can be proposed for this request.");
    expect(await none.getByTestId("remember-toggle").isChecked()).toBe(false);
    expect(await none.getByTestId("remember-rule").isVisible()).toBe(false);
  });
});

describe("the learned rules in Settings", { timeout: 90_000 }, () => {
  it("lists GET /v1/rules and revokes one with DELETE", async () => {
    const { page, rules } = await world();
    await page.locator("#settings summary").click();
    const item = page.locator('[data-testid="rule"][data-rule-id="r-old"]');
    await item.waitFor({ timeout: 10_000 });
    expect(await item.getByTestId("rule-match").textContent()).toBe("git push --force");
    const text = (await item.textContent()) ?? "";
    expect(text).toContain("always deny");
    expect(text).toContain("everywhere · added by Safari on iPhone");
    expect(text).toContain("fired 2 times, last");
    expect(await item.getByTestId("rule-revoke").getAttribute("aria-label")).toBe("Revoke: always deny git push --force");
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: "test-results/inbox/rules-390.png" });
    const found = await seriousViolations(page);
    expect(found, `axe on Settings with its rules:\n${found.join("\n")}`).toEqual([]);
    await item.getByTestId("rule-revoke").click();
    await expect.poll(() => rules.revoked, { timeout: 10_000 }).toEqual(["r-old"]);
    await expect.poll(() => page.getByTestId("rules-status").textContent(), { timeout: 10_000 }).toBe("Revoked: always deny git push --force.");
    expect(await page.getByTestId("rule").count()).toBe(0);
    expect(rules.rules).toEqual([]);
  });
});

describe("the remember choice against serve's own rules routes", { timeout: 90_000 }, () => {
  it("saves the policy layer's proposal as edited on the page, lists it in Settings and revokes it", async () => {
    dir = await mkdtemp(join(tmpdir(), "agyb-remember-"));
    const store = createLearnedStore({ file: join(dir, "learned.yaml") });
    harness = await startApiHarness({ page: await loadApprovalPage(), describe: () => ({ workspace: "/home/dev/proj/api", pane: "%3" }), rules: store });
    const session = harness.addSession("conv-a");
    await harness.hub.refresh();
    const redirect = permissionRequested("conv-a", 11, "echo hi > out.txt") as MapperEvent & { interactionId: string };
    session.push(watch);
    session.push(redirect);
    session.push({ type: "history_end", conversationId: "conv-a" } as MapperEvent);
    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
    await page.goto(harness.url);
    await page.getByTestId("token-input").fill(TEST_TOKEN);
    await page.getByTestId("token-save").click();
    const card = page.locator(`[data-interaction-id="${watch.interactionId}"]`);
    await card.waitFor({ timeout: 20_000 });
    await card.getByTestId("remember-toggle").check();
    await expect.poll(() => card.getByTestId("remember-rule").inputValue(), { timeout: 10_000 }).toBe("npm test -- --watch");
    expect(await card.getByTestId("remember-scope-workspace").isChecked()).toBe(true);
    await card.getByTestId("remember-alternative").click();
    expect(await card.getByTestId("remember-rule").inputValue()).toBe("npm test *");
    // `a` on the focused card approves with the rule, as the button does.
    await card.focus();
    await page.keyboard.press("a");
    await expect
      .poll(() => card.getByTestId("item-status").textContent(), { timeout: 10_000 })
      .toBe("Sent — saved the rule: always allow npm test * (this workspace).");
    expect(session.answers).toEqual([{ interactionId: watch.interactionId, action: { action: "approve" } }]);
    expect(store.list().map((r) => [r.decision, r.match, r.scope, r.fromRequest])).toEqual([["approve", "npm test *", "workspace", watch.interactionId]]);
    await page.locator("#settings summary").click();
    const item = page.getByTestId("rule");
    await item.waitFor({ timeout: 10_000 });
    expect(await item.getByTestId("rule-match").textContent()).toBe("npm test *");
    await item.getByTestId("rule-revoke").click();
    await expect.poll(() => page.getByTestId("rules-status").textContent(), { timeout: 10_000 }).toBe("Revoked: always allow npm test *.");
    expect(store.list()).toEqual([]);
    // A command no rule may allow (it writes a file) can be remembered with Deny only.
    await page.keyboard.press("Escape");
    const writes = page.locator(`[data-interaction-id="${redirect.interactionId}"]`);
    await writes.getByTestId("remember-toggle").check();
    await expect.poll(() => writes.getByTestId("remember-rule").inputValue(), { timeout: 10_000 }).not.toBe("");
    const shown = await writes.getByTestId("remember-rule").inputValue();
    expect(await writes.getByTestId("remember-status").textContent()).toMatch(/^Only Deny can be remembered: No rule may approve this command line, because /);
    await writes.getByTestId("deny").click();
    await expect.poll(() => store.list().map((r) => [r.decision, r.match]), { timeout: 10_000 }).toEqual([["deny", shown]]);
  });
});

describe("the remember choice on a serve that keeps no rules", { timeout: 90_000 }, () => {
  it("says no answer can be remembered there and answers without a rule", async () => {
    harness = await startApiHarness({ page: await loadApprovalPage(), describe: () => ({ workspace: "/home/dev/proj/api", pane: "%3" }) });
    const session = harness.addSession("conv-a");
    await harness.hub.refresh();
    session.push(watch);
    session.push({ type: "history_end", conversationId: "conv-a" } as MapperEvent);
    browser = await launchChromium();
    const page = await browser.newPage();
    await page.goto(harness.url);
    await page.getByTestId("token-input").fill(TEST_TOKEN);
    await page.getByTestId("token-save").click();
    const card = page.locator(`[data-interaction-id="${watch.interactionId}"]`);
    await card.waitFor({ timeout: 20_000 });
    await card.getByTestId("remember-toggle").click();
    await expect
      .poll(() => card.getByTestId("remember-status").textContent(), { timeout: 10_000 })
      .toBe("This serve applies no policy, so no answer can be remembered here (start it with --policy).");
    expect(await card.getByTestId("remember-toggle").isChecked()).toBe(false);
    // `a` on the focused card still approves, once, with no rule.
    await card.focus();
    await page.keyboard.press("a");
    await expect.poll(() => session.answers, { timeout: 10_000 }).toEqual([{ interactionId: watch.interactionId, action: { action: "approve" } }]);
  });
});
