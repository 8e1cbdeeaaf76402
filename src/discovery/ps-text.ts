/**
 * Pure reader of `ps -axo pid=,ppid=,comm=` output, the process list on
 * systems without `/proc` (macOS). `comm` is the executable path there and
 * may contain spaces, so it is the rest of the line.
 */

export interface PsEntry {
  pid: number;
  ppid: number;
  command: string;
}

/** One entry per well-formed line; others are skipped. */
export function parsePsList(text: string): PsEntry[] {
  const out: PsEntry[] = [];
  for (const line of text.split("\n")) {
    const match = /^\s*(\d+)\s+(\d+)\s+(\S.*?)\s*$/.exec(line);
    if (match !== null) out.push({ pid: Number(match[1]), ppid: Number(match[2]), command: match[3] as string });
  }
  return out;
}
