/**
 * The approval page's HTML, read once from the file shipped beside this
 * module (the build copies it into `dist/server/`), with its Markdown
 * parser and sanitizer inlined from node_modules: the page's CSP allows
 * inline scripts only, and one document keeps the offline shell whole.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { AgyBridgeError } from "../errors.js";

export const APPROVAL_PAGE_FILE = new URL("./approval-page.html", import.meta.url);
const VENDOR_MARK = "<!-- vendor-scripts -->";

async function vendorScripts(): Promise<string> {
  const require = createRequire(import.meta.url);
  // marked's package exports hide its browser build; it sits beside package.json.
  const marked = join(dirname(require.resolve("marked/package.json")), "lib", "marked.umd.js");
  const purify = require.resolve("dompurify/dist/purify.min.js");
  const sources = await Promise.all([readFile(marked, "utf8"), readFile(purify, "utf8")]);
  return sources.map((code) => "<script>" + code.replace(/<\/script/gi, "<\\/script") + "</script>").join("\n");
}

export async function loadApprovalPage(): Promise<string> {
  try {
    const [html, vendor] = await Promise.all([readFile(APPROVAL_PAGE_FILE, "utf8"), vendorScripts()]);
    return html.replace(VENDOR_MARK, () => vendor);
  } catch (error) {
    throw new AgyBridgeError(
      "internal",
      `the approval page or its scripts (marked, dompurify) are missing from this installation (${fileURLToPath(APPROVAL_PAGE_FILE)}); reinstall agy-bridge, or run \`npm install && npm run build\` in a checkout`,
      { cause: error },
    );
  }
}
