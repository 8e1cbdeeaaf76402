/**
 * The processes the demo started, found by parentage: everything under the
 * tmux pane's process (the simulator's node, its `bin/agy` launcher, the
 * server and the launcher's long-lived child). Read from `/proc` where there
 * is one, else from `ps` (spawned with an argv, never a shell).
 */
import { spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";

/** Reads every visible pid's parent. */
export type ParentTable = () => Promise<Map<number, number>>;

/** The default {@link ParentTable}: `/proc/<pid>/stat`, else `ps -A -o pid=,ppid=`. */
export const readParentTable: ParentTable = async () => {
  const fromProc = await procParents();
  return fromProc ?? psParents();
};

async function procParents(): Promise<Map<number, number> | undefined> {
  let names: string[];
  try {
    names = await readdir("/proc");
  } catch {
    return undefined;
  }
  const table = new Map<number, number>();
  await Promise.all(
    names
      .filter((name) => /^[0-9]+$/.test(name))
      .map(async (name) => {
        const stat = await readFile(`/proc/${name}/stat`, "utf8").catch(() => "");
        // The command name in parentheses may itself hold spaces and ')'.
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        const ppid = Number(fields[1]);
        if (Number.isInteger(ppid)) table.set(Number(name), ppid);
      }),
  );
  return table.size > 0 ? table : undefined;
}

function psParents(): Promise<Map<number, number>> {
  return new Promise((resolve) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn("ps", ["-A", "-o", "pid=,ppid="], { stdio: ["ignore", "pipe", "ignore"] });
    } catch {
      resolve(new Map());
      return;
    }
    let out = "";
    child.on("error", () => resolve(new Map()));
    // No stdout when the spawn failed for want of fds (EMFILE): the 'error' listener settles that.
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => (out += chunk));
    child.on("close", () => {
      const table = new Map<number, number>();
      for (const line of out.split("\n")) {
        const [pid, ppid] = line.trim().split(/\s+/).map(Number);
        if (Number.isInteger(pid) && Number.isInteger(ppid)) table.set(pid as number, ppid as number);
      }
      resolve(table);
    });
  });
}

/** `root` and every live process below it. */
export async function processTree(root: number, parents: ParentTable = readParentTable): Promise<number[]> {
  const table = await parents();
  const children = new Map<number, number[]>();
  for (const [pid, ppid] of table) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const out: number[] = [];
  const queue = table.has(root) ? [root] : [];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    if (out.includes(pid)) continue;
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** True while `pid` exists (a zombie counts as gone: it holds nothing). */
export async function isAlive(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  if (stat !== undefined) return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The pids of `pids` still alive. */
export async function stillAlive(pids: readonly number[]): Promise<number[]> {
  const alive = await Promise.all(pids.map(isAlive));
  return pids.filter((_, i) => alive[i]);
}

/**
 * Processes whose environment places them in a pane of the tmux server at
 * `socketPath` (tmux sets `TMUX=<socket>,<pid>,<session>` in every pane, and
 * children inherit it): what parentage misses once a process lost its parent.
 * Linux only; elsewhere none are found.
 */
export async function processesOfTmuxServer(socketPath: string): Promise<number[]> {
  let names: string[];
  try {
    names = await readdir("/proc");
  } catch {
    return [];
  }
  const marker = `\0TMUX=${socketPath},`;
  const found = await Promise.all(
    names
      .filter((name) => /^[0-9]+$/.test(name) && Number(name) !== process.pid)
      .map(async (name) => {
        // Unreadable (another user's process) or gone: not ours.
        const environ = await readFile(`/proc/${name}/environ`, "utf8").catch(() => "");
        return `\0${environ}`.includes(marker) ? Number(name) : undefined;
      }),
  );
  return found.filter((pid): pid is number => pid !== undefined);
}
