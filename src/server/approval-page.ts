/**
 * The approval page's HTML, read once from the file shipped beside this
 * module (the build copies it into `dist/server/`).
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { AgyBridgeError } from "../errors.js";

export const APPROVAL_PAGE_FILE = new URL("./approval-page.html", import.meta.url);

export async function loadApprovalPage(): Promise<string> {
  try {
    return await readFile(APPROVAL_PAGE_FILE, "utf8");
  } catch (error) {
    throw new AgyBridgeError(
      "internal",
      `the approval page is missing from this installation (${fileURLToPath(APPROVAL_PAGE_FILE)}); reinstall agy-bridge, or run \`npm run build\` in a checkout`,
      { cause: error },
    );
  }
}
