/**
 * Pure reader of `lsof -nP -a -p PID -iTCP -sTCP:LISTEN -F pcn` output, the
 * macOS way to see a process's listeners (spike-notes §2.3, §10.2). With `-F`
 * lsof prints one field per line, tagged by its first character: `p<pid>`
 * starts a process set, `c<command>` names it, `f<fd>` starts a file and
 * `n<address>` names it (`127.0.0.1:52548`, sometimes followed by ` (LISTEN)`).
 */
import { isLoopbackHost } from "../rpc/loopback.js";

export interface LsofProcess {
  pid: number;
  command?: string;
  /** Loopback listeners only; `*:port` and LAN addresses are dropped. */
  listeners: Array<{ host: string; port: number }>;
}

/** Parses `-F pcn` output; lines it does not understand are skipped. */
export function parseLsofListen(text: string): LsofProcess[] {
  const out: LsofProcess[] = [];
  let current: LsofProcess | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.replace(/\r$/, "");
    const tag = line[0];
    const value = line.slice(1);
    if (tag === "p") {
      current = /^\d+$/.test(value) ? { pid: Number(value), listeners: [] } : undefined;
      if (current !== undefined) out.push(current);
    } else if (tag === "c" && current !== undefined) {
      current.command = value;
    } else if (tag === "n" && current !== undefined) {
      const address = parseAddress(value.replace(/\s*\(LISTEN\)\s*$/, ""));
      if (address === undefined || !isLoopbackHost(address.host)) continue;
      if (!current.listeners.some((l) => l.port === address.port && l.host === address.host)) current.listeners.push(address);
    }
  }
  for (const process of out) process.listeners.sort((a, b) => a.port - b.port);
  return out;
}

/** `127.0.0.1:52548` or `[::1]:52548`; a connected pair (`a->b`) is not a listener. */
function parseAddress(text: string): { host: string; port: number } | undefined {
  if (text.includes("->")) return undefined;
  const match = /^(\[[^\]]+\]|[^:\s]+):(\d{1,5})$/.exec(text.trim());
  if (match === null) return undefined;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return undefined;
  return { host: (match[1] ?? "").replace(/^\[|\]$/g, ""), port };
}
