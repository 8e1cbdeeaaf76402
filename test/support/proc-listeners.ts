/**
 * Test-side reading of `/proc`: the loopback LISTEN ports whose socket inode a
 * process holds as an fd (spike-notes §10.2). Tests use it to
 * check that the simulator's process looks like agy to discovery.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** The ports, ascending, of the IPv4 loopback listeners `pid` holds as fds. */
export function ownedLoopbackListeners(pid: number): number[] {
  const inodes = new Set(
    readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return []; // closed between the listing and the read
      }
      const match = /^socket:\[(\d+)\]$/.exec(target);
      return match === null ? [] : [match[1]];
    }),
  );
  return readFileSync(`/proc/${pid}/net/tcp`, "utf8")
    .split("\n")
    .slice(1)
    .map((row) => row.trim().split(/\s+/))
    .filter((f) => f[3] === "0A" && f[1]?.split(":")[0]?.toUpperCase() === "0100007F" && inodes.has(f[9] as string))
    .map((f) => parseInt(f[1]?.split(":")[1] as string, 16))
    .sort((a, b) => a - b);
}
