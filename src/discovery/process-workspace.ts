/**
 * The working directory of a process (`/proc/<pid>/cwd`), read once per pid
 * in the background: a card or the page says where agy runs without a read
 * on the path of the request that shows it. Until the read has finished, and
 * when it fails (the process is gone, or is another user's), the answer is
 * `undefined`.
 */
import { readlink as readLink } from "node:fs/promises";

/** `(pid) => directory`: the first call starts the read, later calls answer what it found. */
export type WorkspaceReader = (pid: number) => string | undefined;

export function createWorkspaceReader(readlink: (path: string) => Promise<string> = readLink): WorkspaceReader {
  // "" while a read runs or after it failed.
  const dirs = new Map<number, string>();
  return (pid) => {
    const known = dirs.get(pid);
    if (known !== undefined) return known === "" ? undefined : known;
    dirs.set(pid, "");
    void readlink(`/proc/${pid}/cwd`).then(
      (dir) => dirs.set(pid, dir),
      () => undefined,
    );
    return undefined;
  };
}
