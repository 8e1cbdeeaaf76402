/**
 * A revoked device's page, in a real headless Chromium over a real API
 * server: revoked by another process (as `agy-bridge devices --revoke` does),
 * its open event stream is ended by serve at once, and the page says it was
 * signed out — told by the stream itself, before any request of its is
 * refused — with no card and no button left to press.
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
import { until } from "../support/until.js";
import { startApiHarness, type ApiHarness } from "./support/api-harness.js";
import { launchChromium } from "./support/page-browser.js";
import { permissionRequested } from "./support/scripted-session.js";

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

describe("a revoked device's page", { timeout: 90_000 }, () => {
  it("shows signed out, with no live buttons, as soon as the device is revoked", async () => {
    dir = await mkdtemp(join(tmpdir(), "agyb-revoked-page-"));
    harness = await startApiHarness({
      page: await loadApprovalPage(),
      devices: createDeviceStore({ file: join(dir, "devices.json") }),
      pairing: createPairingCodes(),
      // No periodic check within the test: only the watch on the device file ends the stream.
      revocationCheckMs: 3_600_000,
    });
    const gate = permissionRequested("conv-a", 3, "npm test");
    const session = harness.addSession("conv-a");
    await harness.hub.refresh();
    session.push(gate);
    session.push({ type: "history_end", conversationId: "conv-a" } as MapperEvent);
    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    const refused: string[] = [];
    page.on("response", (r) => {
      if (r.status() === 401) refused.push(r.url());
    });
    const { code } = (await (await harness.fetch("/v1/pairing/codes", { method: "POST" })).json()) as { code: string };
    await page.goto(`${harness.url}/#/pair/${code}`);
    const card = page.locator(`[data-interaction-id="${(gate as { interactionId: string }).interactionId}"]`);
    await card.getByTestId("approve").waitFor({ timeout: 20_000 });
    const device = await page.evaluate<{ id: string }>(`JSON.parse(localStorage.getItem("agy-bridge-device"))`);

    // Another process revokes it, as `agy-bridge devices --revoke` does.
    expect(await createDeviceStore({ file: join(dir, "devices.json") }).revoke(device.id)).toBe(true);
    let shown = "";
    const problem = await until(
      async () => {
        shown = (await page.getByTestId("problem").textContent()) ?? "";
        return /signed out/.test(shown) ? shown : undefined;
      },
      "the page to say it was signed out",
      { ms: 20_000, seen: () => `problem: ${JSON.stringify(shown)}; refused: ${refused.join(", ")}` },
    );
    expect(problem).toContain("it was revoked");
    // The stream told it: no request of the page had been refused yet.
    expect(refused).toEqual([]);
    expect(await page.locator('[data-testid="approve"], [data-testid="deny"]').count()).toBe(0);
    expect(await page.getByTestId("pending-item").count()).toBe(0);
    expect(await page.getByTestId("token-input").isVisible()).toBe(true);
    expect(await page.evaluate<string | null>(`localStorage.getItem("agy-bridge-device")`)).toBeNull();
  });
});
