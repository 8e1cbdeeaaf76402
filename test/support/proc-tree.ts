/**
 * Test-side reading of the process tree through `/proc`: command lines,
 * environments, children, and whether a pid still runs. Tests use it to
 * check the simulated agy's process shape (spike-notes §2.1, §2.2).
 */
import { readdirSync, readFileSync } from "node:fs";

/** The process's argv, or [] once it is gone (or a zombie). */
export function cmdline(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  } catch {
    return [];
  }
}

/** The process's environment as it was at exec. */
export function environ(pid: number): Map<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean);
  return new Map(entries.map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]));
}

/** The pids whose parent is `pid`. */
export function childrenOf(pid: number): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((candidate) => {
      try {
        const stat = readFileSync(`/proc/${candidate}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid;
      } catch {
        return false;
      }
    });
}

/** A zombie still has a /proc entry; a live process has a state other than Z. */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/**
 * The launcher's one idle child (`node -e …`, no listeners), waited for:
 * between fork and exec it still shows the launcher's command line. Fails
 * naming the children it saw.
 */
export async function idleChild(launcherPid: number, ms = 10_000): Promise<number> {
  const deadline = Date.now() + ms;
  let seen: string[][] = [];
  while (Date.now() < deadline) {
    const children = childrenOf(launcherPid);
    const found = children.filter((pid) => cmdline(pid)[1] === "-e");
    if (found.length === 1) return found[0] as number;
    seen = children.map(cmdline);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`expected one idle child of ${launcherPid}; its children were ${JSON.stringify(seen)}`);
}
