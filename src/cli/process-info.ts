/**
 * Small facts about processes the commands share: this package's version
 * (from the package.json beside `src/` and `dist/` alike) and whether a pid
 * still runs.
 */
import { readFile } from "node:fs/promises";

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
