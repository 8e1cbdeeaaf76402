/**
 * Small facts about processes the commands share: this package's version
 * (from the package.json beside `src/` and `dist/` alike), whether a pid
 * still runs, and which user the process runs as.
 */
import { readFile } from "node:fs/promises";
import { userInfo } from "node:os";

/** The package's version; "0.0.0" when the package.json cannot be read. */
export async function packageVersion(): Promise<string> {
  try {
    const text = await readFile(new URL("../../package.json", import.meta.url), "utf8");
    return (JSON.parse(text) as { version?: string }).version ?? "0.0.0";
  } catch {
    return "0.0.0";
  }
}

/** Whether a process with this pid exists (one we may not signal counts). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * `{ uid }` of the user this process runs as, for the checks that a token or
 * device file is this user's own; `{}` where there are no uids
 * (`userInfo().uid` is -1 there).
 */
export function ownUser(): { uid?: number } {
  const uid = userInfo().uid;
  return uid < 0 ? {} : { uid };
}
