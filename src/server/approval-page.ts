/**
 * The approval page's HTML, read once from the file shipped beside this
 * module (the build copies it into `dist/server/`).
 */
import { readFile } from "node:fs/promises";

export const APPROVAL_PAGE_FILE = new URL("./approval-page.html", import.meta.url);

export function loadApprovalPage(): Promise<string> {
  return readFile(APPROVAL_PAGE_FILE, "utf8");
}
