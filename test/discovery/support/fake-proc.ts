/**
 * A hand-made `/proc` tree for the cases the real one cannot be put into on
 * demand: fds that cannot be read, listeners that belong to raw servers.
 * The files have the kernel's formats (NUL-separated cmdline, stat with the
 * ppid after the comm, `socket:[inode]` fd links, net/tcp rows), so
 * discovery reads them through the same code as the real `/proc`.
 */
import { mkdirSync, mkdtempSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The uid this test runs as: the default owner of fake processes and sockets. */
export const OWN_UID = process.getuid?.() ?? 1000;

export interface FakeListener {
  port: number;
  inode: string;
  /** The socket's owner in net/tcp; default {@link OWN_UID}. */
  uid?: number;
  /** Default `127.0.0.1`. */
  host?: "127.0.0.1" | "::ffff:127.0.0.1" | "10.0.0.5";
}

export interface FakeProcess {
  pid: number;
  ppid?: number;
  exe: string;
  argv: string[];
  /** Socket inodes held as fds; `"unreadable"` leaves the fd directory out. */
  fds: string[] | "unreadable";
  environ?: Record<string, string>;
  /** The uid in its status file; default {@link OWN_UID}; `"unreadable"` leaves the file out. */
  uid?: number | "unreadable";
}

export interface FakeProc {
  root: string;
  remove(): void;
}

const NETNS = readlinkSync("/proc/self/ns/net");

export function createFakeProc(processes: readonly FakeProcess[], listeners: readonly FakeListener[]): FakeProc {
  const root = mkdtempSync(join(tmpdir(), "agy-fake-proc-"));
  mkdirSync(join(root, "self", "ns"), { recursive: true });
  symlinkSync(NETNS, join(root, "self", "ns", "net"));
  const v4 = listeners.filter((l) => (l.host ?? "127.0.0.1") !== "::ffff:127.0.0.1");
  const v6 = listeners.filter((l) => l.host === "::ffff:127.0.0.1");
  const tables = { tcp: netTcp(v4, 4), tcp6: netTcp(v6, 6) };
  mkdirSync(join(root, "net"));
  for (const [name, text] of Object.entries(tables)) writeFileSync(join(root, "net", name), text);
  for (const p of processes) {
    const dir = join(root, String(p.pid));
    mkdirSync(join(dir, "ns"), { recursive: true });
    mkdirSync(join(dir, "net"));
    for (const [name, text] of Object.entries(tables)) writeFileSync(join(dir, "net", name), text);
    symlinkSync(NETNS, join(dir, "ns", "net"));
    symlinkSync(p.exe, join(dir, "exe"));
    writeFileSync(join(dir, "cmdline"), `${p.argv.join("\0")}\0`);
    writeFileSync(join(dir, "stat"), `${p.pid} (${p.exe.split("/").pop()}) S ${p.ppid ?? 1} ${p.pid} ${p.pid} 0 -1\n`);
    writeFileSync(
      join(dir, "environ"),
      Object.entries(p.environ ?? {})
        .map(([k, v]) => `${k}=${v}\0`)
        .join(""),
    );
    if (p.uid !== "unreadable") {
      const uid = p.uid ?? OWN_UID;
      writeFileSync(join(dir, "status"), `Name:\t${p.exe.split("/").pop()}\nPid:\t${p.pid}\nUid:\t${uid}\t${uid}\t${uid}\t${uid}\n`);
    }
    if (p.fds !== "unreadable") {
      mkdirSync(join(dir, "fd"));
      symlinkSync("/dev/null", join(dir, "fd", "0"));
      p.fds.forEach((inode, i) => symlinkSync(`socket:[${inode}]`, join(dir, "fd", String(i + 3))));
    }
  }
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}

function netTcp(listeners: readonly FakeListener[], family: 4 | 6): string {
  const header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
  const rows = listeners.map((l, i) => {
    const port = l.port.toString(16).toUpperCase().padStart(4, "0");
    const address = family === 6 ? "0000000000000000FFFF00000100007F" : (l.host ?? "127.0.0.1") === "10.0.0.5" ? "0500000A" : "0100007F";
    const remote = family === 6 ? "00000000000000000000000000000000:0000" : "00000000:0000";
    const uid = String(l.uid ?? OWN_UID).padStart(5);
    return `  ${i}: ${address}:${port} ${remote} 0A 00000000:00000000 00:00000000 00000000 ${uid}        0 ${l.inode} 1 0000000000000000 100 0 0 10 0\n`;
  });
  return header + rows.join("");
}
