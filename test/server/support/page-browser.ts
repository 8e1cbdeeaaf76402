/**
 * Debian's Chromium driven by playwright-core, for the approval page tests.
 */
import { existsSync } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";

export const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));

export async function launchChromium(): Promise<Browser> {
  if (CHROMIUM === undefined) throw new Error("Chromium is not installed: `apt-get install chromium` (.ci/run does this)");
  return chromium.launch({
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
}

/** A phone-sized page on the approval page at `url`, signed in with `token`. */
export async function openPhonePage(browser: Browser, url: string, token: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  await page.goto(url);
  await page.getByTestId("token-input").fill(token);
  await page.getByTestId("token-save").tap();
  return page;
}
