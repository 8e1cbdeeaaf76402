/**
 * axe-core run inside a playwright page: its source is injected as a script
 * (the page's CSP allows inline scripts only, and a test's injection is not
 * subject to it), then run on one part of the page.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { Page } from "playwright-core";

interface AxeNode {
  target: unknown[];
  html: string;
  failureSummary?: string;
}
interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: AxeNode[];
}

let source: Promise<string> | undefined;
function axeSource(): Promise<string> {
  const require = createRequire(import.meta.url);
  source ??= readFile(join(dirname(require.resolve("axe-core")), "axe.min.js"), "utf8");
  return source;
}

/**
 * The serious and critical violations axe finds in `selector` (the whole
 * document when absent), each as one readable paragraph; empty when none.
 */
export async function seriousViolations(page: Page, selector?: string): Promise<string[]> {
  if (!(await page.evaluate(() => "axe" in globalThis))) await page.addScriptTag({ content: await axeSource() });
  const violations = await page.evaluate(async (context) => {
    const axe = (globalThis as unknown as { axe: { run(c: unknown, o: unknown): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run(context ?? "html", { resultTypes: ["violations"] });
    return result.violations;
  }, selector);
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map(
      (v) =>
        `${v.impact} ${v.id}: ${v.help}\n` +
        v.nodes.map((n) => `  at ${JSON.stringify(n.target)}: ${n.html.slice(0, 200)}\n    ${(n.failureSummary ?? "").replace(/\n/g, "\n    ")}`).join("\n"),
    );
}
