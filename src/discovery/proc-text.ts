/**
 * Pure readers of the text Linux puts in `/proc`: `net/tcp` and `net/tcp6`
 * tables, `cmdline`, `stat`, `environ` and fd links. Nothing here touches the
 * file system; malformed or truncated input yields fewer rows, never a throw.
 */
import { isLoopbackHost } from "../rpc/loopback.js";

/** A LISTEN row of `/proc/<pid>/net/tcp{,6}`. */
export interface TcpListenRow {
  /** Dotted IPv4 or full IPv6 text (`::ffff:127.0.0.1` for IPv4-mapped). */
  host: string;
  port: number;
  /** The socket inode (field 10), matched against `socket:[inode]` fd links. */
  inode: string;
  /** The uid that owns the socket (field 8): the user of the process that opened it. */
  uid: number;
  loopback: boolean;
}

/** TCP state `0A` is LISTEN (include/net/tcp_states.h). */
const LISTEN_STATE = "0A";

/**
 * The LISTEN rows of a `net/tcp` (family 4) or `net/tcp6` (family 6) table
 * (spike-notes §2.3, §10.2). The header and any row that does not parse are
 * skipped.
 */
export function parseNetTcp(text: string, family: 4 | 6): TcpListenRow[] {
  const rows: TcpListenRow[] = [];
  for (const line of text.split("\n")) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 10 || fields[3]?.toUpperCase() !== LISTEN_STATE) continue;
    const [addressHex, portHex] = (fields[1] ?? "").split(":");
    const inode = fields[9] ?? "";
    const uid = fields[7] ?? "";
    if (addressHex === undefined || portHex === undefined || !/^[0-9A-Fa-f]{4}$/.test(portHex) || !/^\d+$/.test(inode) || !/^\d+$/.test(uid)) continue;
    const host = family === 4 ? decodeIpv4(addressHex) : decodeIpv6(addressHex);
    if (host === undefined) continue;
    const port = Number.parseInt(portHex, 16);
    if (port === 0) continue;
    rows.push({ host, port, inode, uid: Number(uid), loopback: isLoopbackHost(host) });
  }
  return rows;
}

/** `0100007F` → `127.0.0.1`: the kernel prints the u32 in host (little-endian) order. */
function decodeIpv4(hex: string): string | undefined {
  if (!/^[0-9A-Fa-f]{8}$/.test(hex)) return undefined;
  const bytes = littleEndianWord(hex);
  return bytes.join(".");
}

/** 32 hex digits: four little-endian u32 words. */
function decodeIpv6(hex: string): string | undefined {
  if (!/^[0-9A-Fa-f]{32}$/.test(hex)) return undefined;
  const bytes: number[] = [];
  for (let i = 0; i < 32; i += 8) bytes.push(...littleEndianWord(hex.slice(i, i + 8)));
  const mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  if (mapped) return `::ffff:${bytes.slice(12).join(".")}`;
  const words: string[] = [];
  for (let i = 0; i < 16; i += 2) words.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  return words.join(":");
}

function littleEndianWord(hex: string): number[] {
  const bytes = [0, 2, 4, 6].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
  return bytes.reverse();
}

/** `/proc/<pid>/cmdline`: NUL-separated arguments; an empty file (kernel thread, zombie) gives `[]`. */
export function parseCmdline(text: string): string[] {
  const parts = text.split("\0");
  if (parts[parts.length - 1] === "") parts.pop();
  return parts;
}

/**
 * The parent pid from `/proc/<pid>/stat`. The comm field may hold spaces and
 * parentheses, so fields are read after the LAST `)` (spike-notes §2.2).
 */
export function parseStatPpid(text: string): number | undefined {
  const close = text.lastIndexOf(")");
  if (close < 0) return undefined;
  const fields = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  const ppid = fields[1];
  return ppid !== undefined && /^\d+$/.test(ppid) ? Number(ppid) : undefined;
}

/**
 * What identifies a process image in `/proc/<pid>/stat`: its command name
 * (changed by exec) and start time (field 22; a reused pid starts later).
 * Undefined for text that is not a stat line.
 */
export function parseStatIdentity(text: string): string | undefined {
  const close = text.lastIndexOf(")");
  const open = text.indexOf("(");
  if (close < 0 || open < 0) return undefined;
  const start = text
    .slice(close + 1)
    .trim()
    .split(/\s+/)[19];
  return start !== undefined && /^\d+$/.test(start) ? `${text.slice(open + 1, close)}\u0000${start}` : undefined;
}

/** `/proc/<pid>/environ`: NUL-separated `NAME=value`; entries without `=` are skipped. */
export function parseEnviron(text: string): Map<string, string> {
  const env = new Map<string, string>();
  for (const entry of text.split("\0")) {
    const eq = entry.indexOf("=");
    if (eq <= 0) continue;
    env.set(entry.slice(0, eq), entry.slice(eq + 1));
  }
  return env;
}

/**
 * The uid a process's new sockets are owned by, from `/proc/<pid>/status`:
 * the filesystem uid (4th of `Uid:`'s real, effective, saved, fs), which is
 * what the kernel records for a socket and prints in `net/tcp`.
 */
export function parseStatusUid(text: string): number | undefined {
  const line = /^Uid:\s+(\d+)\s+(\d+)(?:\s+(\d+)\s+(\d+))?/m.exec(text);
  if (line === null) return undefined;
  return Number(line[4] ?? line[2]);
}

/** `socket:[12345]` → `12345`; any other link target → undefined. */
export function parseSocketLink(link: string): string | undefined {
  const match = /^socket:\[(\d+)\]$/.exec(link.trim());
  return match?.[1];
}
