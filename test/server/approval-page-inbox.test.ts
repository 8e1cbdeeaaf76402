/**
 * The approval page as an inbox, in a real headless Chromium over a real API
 * server with scripted sessions: what each card says, how questions are
 * asked, deny with an instruction, deep links, pairing from a link, and
 * nothing claimed before the browser is signed in.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
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

function question(stepIndex: number, text: string, multiSelect: boolean): MapperEvent {
  return {
    type: "interaction_requested",
    ...base,
    stepIndex,
    interactionId: `int_q${stepIndex.toString(16).padStart(15, "0")}`,
    stepType: "ASK_QUESTION",
    callId: `agy_call_traj-1_${stepIndex}`,
    request: {
      kind: "question",
      questions: [
        {
          question: text,
          multiSelect,
          options: [
            { id: "1", text: "Unit tests" },
            { id: "2", text: "Lint" },
            { id: "3", text: "Type check" },
          ],
        },
      ],
    },
  } as MapperEvent;
}

function fileWrite(stepIndex: number, path: string): MapperEvent {
  return {
    type: "interaction_requested",
    ...base,
    stepIndex,
    interactionId: `int_f${stepIndex.toString(16).padStart(15, "0")}`,
    stepType: "CODE_ACTION",
    callId: `agy_call_traj-1_${stepIndex}`,
    request: { kind: "permission", variant: "filePermission", action: "file", target: path, description: "Creating the app's entry point" },
  } as MapperEvent;
}

/** A command request that names where it runs (`runCommand.cwd`), apart from agy's own directory. */
function withCwd(event: MapperEvent, cwd: string): MapperEvent {
  const requested = event as Extract<MapperEvent, { type: "interaction_requested" }>;
  return { ...requested, request: { ...requested.request, cwd } } as MapperEvent;
}

const idOf = (event: MapperEvent) => (event as { interactionId: string }).interactionId;

async function start(options: { pending?: MapperEvent[]; historyEnd?: boolean } = {}) {
  dir = await mkdtemp(join(tmpdir(), "agyb-inbox-"));
  harness = await startApiHarness({
    page: await loadApprovalPage(),
    devices: createDeviceStore({ file: join(dir, "devices.json") }),
    pairing: createPairingCodes(),
    describe: () => ({ workspace: "/home/dev/proj/api", pane: "%3" }),
  });
  const session = harness.addSession("conv-a");
  await harness.hub.refresh();
  session.push({ type: "model_changed", ...base, stepIndex: 0, model: "MODEL_PLACEHOLDER_M26", displayName: "Gemini 3 Pro" } as MapperEvent);
  session.push(userMessage("conv-a", "Run the tests and set up the app"));
  session.push({
    type: "message",
    ...base,
    stepIndex: 1,
    messageId: "agy_msg_traj-1_1",
    role: "assistant",
    text: "I will run the test suite first.",
    failed: false,
  } as MapperEvent);
  for (const event of options.pending ?? []) session.push(event);
  if (options.historyEnd !== false) session.push({ type: "history_end", conversationId: "conv-a" } as MapperEvent);
  browser = await launchChromium();
  return { h: harness, session, browser };
}

async function signIn(page: Page, url: string, hash = ""): Promise<void> {
  await page.goto(`${url}/${hash}`);
  await page.getByTestId("token-input").fill(TEST_TOKEN);
  await page.getByTestId("token-save").click();
}

describe("the approval page as an inbox", { timeout: 90_000 }, () => {
  it("heads each card with what agy wants, then where, which model and how long it waited, with the turn collapsed", async () => {
    const { h, browser: b } = await start({
      pending: [withCwd(permissionRequested("conv-a", 3, "npm test"), "/home/dev/proj/api/web"), fileWrite(5, "/home/dev/proj/api/src/app.ts")],
    });
    const page = await b.newPage({ viewport: { width: 390, height: 844 } });
    await signIn(page, h.url);
    const cards = page.getByTestId("pending-item");
    await cards.nth(1).waitFor({ timeout: 20_000 });
    expect(await cards.getByTestId("headline").allTextContents()).toEqual(["Run npm test in ~/proj/api/web", "Create file src/app.ts"]);
    const line = await cards.first().getByTestId("session-line").textContent();
    expect(line).toMatch(/^~\/proj\/api · pane %3 · Gemini 3 Pro · waiting \d+\u00a0s$/);
    const turn = cards.first().getByTestId("recent-turn");
    expect(await turn.evaluate((d) => (d as unknown as { open: boolean }).open)).toBe(false);
    expect(await turn.textContent()).toContain("You: Run the tests and set up the app");
    expect(await page.getByTestId("empty").isVisible()).toBe(false);
    expect(await page.locator("body").textContent()).not.toMatch(/step \d|RUNNING/);
  });

  it("asks a multi-select question with checkboxes and a single one with radio buttons, and sends the chosen options", async () => {
    const multi = question(7, "Which checks should I run?", true);
    const single = question(9, "Which one first?", false);
    const { h, session, browser: b } = await start({ pending: [multi, single] });
    const page = await b.newPage();
    await signIn(page, h.url);
    const multiCard = page.locator(`[data-interaction-id="${idOf(multi)}"]`);
    const singleCard = page.locator(`[data-interaction-id="${idOf(single)}"]`);
    await singleCard.waitFor({ timeout: 20_000 });
    expect(await multiCard.locator("input[type=checkbox]").count()).toBe(3);
    expect(await multiCard.locator("input[type=radio]").count()).toBe(0);
    expect(await singleCard.locator("input[type=radio]").count()).toBe(3);
    expect(await multiCard.getByRole("checkbox", { name: "Lint" }).count()).toBe(1);
    await multiCard.getByTestId("option-1").check();
    await multiCard.getByTestId("option-3").check();
    await multiCard.getByTestId("submit-answer").click();
    await singleCard.getByTestId("option-2").check();
    await singleCard.getByLabel("Or write your own answer").fill("and then lint");
    await singleCard.getByTestId("submit-answer").click();
    await expect.poll(() => session.answers.length, { timeout: 10_000 }).toBe(2);
    expect(session.answers).toEqual([
      { interactionId: idOf(multi), action: { action: "answer", optionIds: ["1", "3"] } },
      { interactionId: idOf(single), action: { action: "answer", optionIds: ["2"], writeIn: "and then lint" } },
    ]);
    // Once agy says it is answered, the resolved list shows what was chosen.
    for (const [event, stepIndex] of [
      [multi, 7],
      [single, 9],
    ] as const) {
      session.push({
        type: "interaction_resolved",
        ...base,
        stepIndex,
        interactionId: idOf(event),
        kind: "question",
        outcome: "answered",
        stepStatus: "DONE",
        decidedBy: "page",
      } as MapperEvent);
    }
    const chosen = page.getByTestId("resolved-item").getByTestId("chosen-answer");
    await expect
      .poll(() => chosen.allTextContents(), { timeout: 10_000 })
      .toEqual(expect.arrayContaining(["Answer: Unit tests, Type check", "Answer: Lint, and then lint"]));
  });

  it("denies with the instruction typed on the card", async () => {
    const gate = permissionRequested("conv-a", 3, "rm -rf build");
    const { h, session, browser: b } = await start({ pending: [gate] });
    const page = await b.newPage();
    await signIn(page, h.url);
    const card = page.locator(`[data-interaction-id="${idOf(gate)}"]`);
    await card.getByLabel("Why not — sent to agy with Deny (optional)").fill("use git clean -fdx instead");
    await card.getByTestId("deny").click();
    await expect.poll(() => session.answers.length, { timeout: 10_000 }).toBe(1);
    expect(session.answers[0]).toEqual({ interactionId: idOf(gate), action: { action: "deny", instruction: "use git clean -fdx instead" } });
    await expect.poll(() => card.getByTestId("item-status").textContent(), { timeout: 10_000 }).toContain("Sent");
  });

  it("moves focus to the next card when the focused one is resolved, and counts what waits in the title", async () => {
    const gates = [3, 5].map((n) => withCwd(permissionRequested("conv-a", n, `make step-${n}`), "/tmp/build"));
    const { h, session, browser: b } = await start({ pending: gates });
    const page = await b.newPage();
    await signIn(page, h.url);
    const first = page.locator(`[data-interaction-id="${idOf(gates[0]!)}"]`);
    await page.locator(`[data-interaction-id="${idOf(gates[1]!)}"]`).waitFor({ timeout: 20_000 });
    expect(await page.title()).toBe("(2) agy inbox");
    await first.getByTestId("approve").focus();
    session.push({
      type: "interaction_resolved",
      ...base,
      stepIndex: 3,
      interactionId: idOf(gates[0]!),
      kind: "permission",
      outcome: "approved",
      stepStatus: "RUNNING",
      decidedBy: "cli",
    } as MapperEvent);
    await expect
      .poll(() => page.evaluate<string>(`document.activeElement?.getAttribute("data-interaction-id") ?? ""`), { timeout: 10_000 })
      .toBe(idOf(gates[1]!));
    expect(await page.title()).toBe("(1) agy inbox");
    const resolved = page.getByTestId("resolved-item");
    expect(await resolved.textContent()).toMatch(/by cli.*Run make step-3 in \/tmp\/build — approved$/);
  });

  it("opens and focuses the card a deep link names", async () => {
    const gates = [3, 5, 7, 9, 11, 13].map((n) => permissionRequested("conv-a", n, `make target-${n}`));
    const wanted = gates[4]!;
    const { h, browser: b } = await start({ pending: gates });
    const page = await b.newPage({ viewport: { width: 390, height: 600 } });
    await signIn(page, h.url, `#/interactions/${idOf(wanted)}`);
    await expect.poll(() => page.evaluate<string>(`document.activeElement?.getAttribute("data-interaction-id") ?? ""`), { timeout: 20_000 }).toBe(idOf(wanted));
    const card = page.locator(`[data-interaction-id="${idOf(wanted)}"]`);
    expect(await card.getAttribute("class")).toContain("highlight");
    expect(await card.isVisible()).toBe(true);
    const box = await card.boundingBox();
    expect(box!.y).toBeLessThan(600);
  });

  it("says nothing about what is waiting before the browser is signed in", async () => {
    const { h, browser: b } = await start({ pending: [permissionRequested("conv-a", 3, "npm test")] });
    const page = await b.newPage();
    await page.goto(h.url);
    await page.getByTestId("token-input").waitFor();
    expect(await page.getByTestId("empty").isVisible()).toBe(false);
    expect(await page.getByTestId("pending-list").isVisible()).toBe(false);
    expect(await page.locator("body").innerText()).not.toContain("Nothing waiting");
    await page.screenshot({ path: "/tmp/agy-bridge-signed-out.png" });
    await page.getByTestId("token-input").fill(TEST_TOKEN);
    await page.getByTestId("token-save").click();
    await page.getByTestId("pending-item").first().waitFor({ timeout: 20_000 });
    expect(await page.getByTestId("empty").isVisible()).toBe(false);
  });

  it("says nothing is waiting once every session has told what is open, and not before", async () => {
    const { h, session, browser: b } = await start({ historyEnd: false });
    const page = await b.newPage();
    await signIn(page, h.url);
    await page.getByTestId("loading").waitFor({ state: "visible", timeout: 20_000 });
    expect(await page.getByTestId("empty").isVisible()).toBe(false);
    session.push({ type: "history_end", conversationId: "conv-a" } as MapperEvent);
    await page.getByTestId("empty").waitFor({ state: "visible", timeout: 20_000 });
  });

  it("pairs from a pairing link, keeps the device token instead of the code, and answers as the device", async () => {
    const gate = permissionRequested("conv-a", 3, "npm test");
    const { h, session, browser: b } = await start({ pending: [gate] });
    const seen: string[] = [];
    const respond = session.respond.bind(session);
    session.respond = (id, action, decidedBy) => {
      seen.push(decidedBy ?? "");
      return respond(id, action, decidedBy);
    };
    const { code } = (await (await h.fetch("/v1/pairing/codes", { method: "POST" })).json()) as { code: string };
    const page = await b.newPage();
    const requested: string[] = [];
    page.on("request", (r) => requested.push(r.url()));
    await page.goto(`${h.url}/#/pair/${code}`);
    const card = page.locator(`[data-interaction-id="${idOf(gate)}"]`);
    await card.waitFor({ timeout: 20_000 });
    expect(await page.evaluate<string>("location.hash")).toBe("");
    const stored = await page.evaluate<{ device: { token: string }; bearer: string | null }>(
      `({ device: JSON.parse(localStorage.getItem("agy-bridge-device") ?? "null"), bearer: localStorage.getItem("agy-bridge-token") })`,
    );
    expect(stored.bearer).toBeNull();
    expect(stored.device.token).toMatch(/^agyd\./);
    await card.getByTestId("approve").click();
    await expect.poll(() => seen, { timeout: 10_000 }).toEqual([expect.stringMatching(/^page:HeadlessChrome on Linux|^page:Chrome on Linux/)]);
    expect(requested.filter((u) => u.includes(stored.device.token) || u.includes(TEST_TOKEN))).toEqual([]);
  });

  it("shows the live transcript with tool outputs, and a declined call as a denial", async () => {
    const { h, session, browser: b } = await start();
    const page = await b.newPage();
    await signIn(page, h.url);
    session.push({
      type: "function_call",
      ...base,
      stepIndex: 4,
      callId: "c4",
      name: "run_command",
      arguments: JSON.stringify({ CommandLine: "npm test" }),
      description: "Running the tests",
    } as MapperEvent);
    session.push({
      type: "function_call_output",
      ...base,
      stepIndex: 4,
      callId: "c4",
      name: "run_command",
      output: "12 passing",
      isError: false,
      stepStatus: "DONE",
    } as MapperEvent);
    session.push({
      type: "function_call",
      ...base,
      stepIndex: 6,
      callId: "c6",
      name: "run_command",
      arguments: JSON.stringify({ CommandLine: "rm -rf /" }),
    } as MapperEvent);
    session.push({
      type: "function_call_output",
      ...base,
      stepIndex: 6,
      callId: "c6",
      name: "run_command",
      output: "[agy-bridge: the user declined run_command; it did not run. Instruction: no]",
      isError: true,
      stepStatus: "DONE",
      declined: true,
    } as MapperEvent);
    const panel = page.locator('[data-testid="session"][data-conversation-id="conv-a"]');
    await panel.locator("summary").first().click();
    const transcript = panel.getByTestId("transcript");
    await transcript.getByTestId("t-denied").waitFor({ timeout: 20_000 });
    expect(await transcript.getByTestId("t-you").textContent()).toBe("You:Run the tests and set up the app");
    expect(await transcript.getByTestId("t-agy").textContent()).toBe("agy:I will run the test suite first.");
    const call = transcript.getByTestId("t-call");
    expect(await call.textContent()).toContain("Running the tests npm test");
    expect(await call.locator("pre").textContent()).toBe("12 passing");
    expect(await transcript.getByTestId("t-denied").textContent()).toMatch(/^Denied:run_command rm -rf \/declined — why/);
    await panel.getByLabel("Message to agy").fill("now lint");
    await panel.getByTestId("turn-send").click();
    await expect.poll(() => session.turns, { timeout: 10_000 }).toEqual(["now lint"]);
    await panel.getByTestId("interrupt").click();
    await expect.poll(() => panel.getByTestId("session-status").textContent(), { timeout: 10_000 }).toBe("Interrupted (cancelled).");
  });

  it("says how to get a new link when a pairing link was already used", async () => {
    const { h, browser: b } = await start();
    const { code } = (await (await h.fetch("/v1/pairing/codes", { method: "POST" })).json()) as { code: string };
    const first = await h.fetch("/v1/pairing", {
      token: null,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code }),
    });
    expect(first.status).toBe(201);
    const page = await b.newPage();
    await page.goto(`${h.url}/#/pair/${code}`);
    await expect.poll(() => page.getByTestId("problem").textContent(), { timeout: 20_000 }).toContain("run `agy-bridge pair` for a new link");
    expect(await page.getByTestId("token-input").isVisible()).toBe(true);
    expect(await page.getByTestId("empty").isVisible()).toBe(false);
  });
});
