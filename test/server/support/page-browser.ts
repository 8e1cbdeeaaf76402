/**
 * Debian's Chromium driven by playwright-core, for the approval page tests.
 */
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

export const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));

export async function launchChromium(): Promise<Browser> {
  if (CHROMIUM === undefined) throw new Error("Chromium is not installed: `apt-get install chromium` (.ci/run does this)");
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}
