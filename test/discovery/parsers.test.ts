/**
 * The pure readers discovery builds on: /proc text (spike-notes §2.2, §2.3,
 * §10.2), lsof -F output, ps output, agy's log port lines (§10.2), tmux pane
 * lists — each with malformed and truncated input.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseLsofListen } from "../../src/discovery/lsof-text.js";
import { parseLogPorts } from "../../src/discovery/log-text.js";
import { parsePaneList } from "../../src/discovery/pane-lookup.js";
import { parseCmdline, parseEnviron, parseNetTcp, parseSocketLink, parseStatPpid, parseStatusUid } from "../../src/discovery/proc-text.js";
import { parsePsList } from "../../src/discovery/ps-text.js";
import { agyInSubtree, descendants, serverKindOf } from "../../src/discovery/process-scan.js";

const TCP = [
  "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
  "   0: 0100007F:1A6B 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 111 1 0000000000000000 100 0 0 10 0",
  "   1: 0100A8C0:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 222 1 0000000000000000 100 0 0 10 0",
  "   2: 0100007F:CD2A 0100007F:1A6B 01 00000000:00000000 00:00000000 00000000     0        0 333 1 0000000000000000 100 0 0 10 0",
  "   3: 0200007F:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 444 1 0000000000000000 100 0 0 10 0",
].join("\n");

describe("parseNetTcp", () => {
  it("keeps LISTEN rows with their decoded address, port, owner uid and inode, and marks which are loopback", () => {
    expect(parseNetTcp(TCP, 4)).toEqual([
      { host: "127.0.0.1", port: 6763, inode: "111", uid: 1000, loopback: true },
      { host: "192.168.0.1", port: 8080, inode: "222", uid: 0, loopback: false },
      { host: "127.0.0.2", port: 80, inode: "444", uid: 0, loopback: true },
    ]);
  });

  it("reads the uid a process's sockets belong to from its status (the filesystem uid)", () => {
    expect(parseStatusUid("Name:\tagy\nUid:\t1000\t1001\t1002\t1003\nGid:\t5\t5\t5\t5\n")).toBe(1003);
    expect(parseStatusUid("Uid:\t42\t43\n")).toBe(43);
    expect(parseStatusUid("Name:\tagy\n")).toBeUndefined();
  });

  it("decodes IPv4-mapped and ::1 listeners of tcp6 as loopback", () => {
    const tcp6 = [
      "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
      "   0: 0000000000000000FFFF00000100007F:D431 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5001 1 0000000000000000 100 0 0 10 0",
      "   1: 00000000000000000000000001000000:D432 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5002 1 0000000000000000 100 0 0 10 0",
      "   2: 00000000000000000000000000000000:D433 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5003 1 0000000000000000 100 0 0 10 0",
    ].join("\n");
    const rows = parseNetTcp(tcp6, 6);
    expect(rows.map((r) => [r.host, r.port, r.loopback])).toEqual([
      ["::ffff:127.0.0.1", 0xd431, true],
      ["0:0:0:0:0:0:0:1", 0xd432, true],
      ["0:0:0:0:0:0:0:0", 0xd433, false],
    ]);
  });

  it("skips malformed rows and a row cut off before its inode", () => {
    const text = [
      TCP.split("\n")[0],
      "   0: 0100007F:ZZZZ 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1",
      "   1: 0100007:1A6B 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2 1",
      "   2: 0100007F:1A6C 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3 1",
      "   3: 0100007F:1A6D 00000000:0000 0A 00000000:00000000 00:000",
      "garbage",
      "",
    ].join("\n");
    expect(parseNetTcp(text, 4).map((r) => r.port)).toEqual([0x1a6c]);
    expect(parseNetTcp("", 4)).toEqual([]);
  });
});

describe("proc text readers", () => {
  it("splits cmdline on NUL and gives [] for an empty one", () => {
    expect(parseCmdline("/usr/local/bin/agy\0--csrf_token\0t\0")).toEqual(["/usr/local/bin/agy", "--csrf_token", "t"]);
    expect(parseCmdline("")).toEqual([]);
  });

  it("reads the parent pid after the last parenthesis, so a comm with spaces and parentheses does not shift fields", () => {
    expect(parseStatPpid("4242 (a) b)) S 17 4242 4242 0 -1")).toBe(17);
    expect(parseStatPpid("4242 (agy) S")).toBeUndefined();
    expect(parseStatPpid("4242 agy S 17")).toBeUndefined();
  });

  it("reads environ entries and skips ones without a name", () => {
    const env = parseEnviron("A=1\0=x\0noequals\0B=x=y\0");
    expect([...env]).toEqual([
      ["A", "1"],
      ["B", "x=y"],
    ]);
  });

  it("takes the inode only from socket:[N] links", () => {
    expect(parseSocketLink("socket:[98765]")).toBe("98765");
    expect(parseSocketLink("pipe:[98765]")).toBeUndefined();
    expect(parseSocketLink("socket:[98765")).toBeUndefined();
  });
});

describe("process identity and trees", () => {
  it("recognises agy and the IDE's language_server executables by basename only", () => {
    expect(serverKindOf("/usr/local/bin/agy")).toBe("agy");
    expect(serverKindOf("/home/u/.local/bin/agy (deleted)")).toBe("agy");
    expect(serverKindOf("/opt/ide/bin/language_server_linux_x64")).toBe("language_server");
    expect(serverKindOf("/opt/ide/bin/language_server")).toBe("language_server");
    expect(serverKindOf("/usr/bin/agy-bridge")).toBeUndefined();
    expect(serverKindOf("/usr/bin/node")).toBeUndefined();
  });

  it("finds the agy below a pane breadth-first and survives a parent cycle", () => {
    const parents = new Map([
      [10, 1],
      [11, 10],
      [12, 11],
      [13, 10],
      [20, 21],
      [21, 20],
    ]);
    expect(agyInSubtree(parents, 10, new Set([12]))).toBe(12);
    expect(agyInSubtree(parents, 12, new Set([12]))).toBe(12);
    expect(agyInSubtree(parents, 20, new Set([99]))).toBeUndefined();
    expect(descendants(parents, 10)).toEqual([11, 13, 12]);
  });
});

describe("parseLsofListen", () => {
  it("reads the recorded -F pcn output: loopback listeners per process, sorted and unique", () => {
    const text = readFileSync(join(import.meta.dirname, "fixtures/lsof-listen-F-pcn.txt"), "utf8");
    expect(parseLsofListen(text)).toEqual([
      {
        pid: 52140,
        command: "agy",
        listeners: [
          { host: "127.0.0.1", port: 52548 },
          { host: "127.0.0.1", port: 52549 },
          { host: "::1", port: 52550 },
        ],
      },
      { pid: 52200, command: "node", listeners: [{ host: "127.0.0.1", port: 40001 }] },
    ]);
  });

  it("ignores names before any process, a bad pid line, and a truncated name", () => {
    expect(parseLsofListen("n127.0.0.1:1\npabc\nn127.0.0.1:2\np7\nn127.0.0.1:\nn127.0.0.1:99999\nn127.0.0.1:3")).toEqual([
      { pid: 7, listeners: [{ host: "127.0.0.1", port: 3 }] },
    ]);
    expect(parseLsofListen("")).toEqual([]);
  });
});

describe("other command output", () => {
  it("reads ps lines whose command path contains spaces", () => {
    expect(parsePsList("  1     0 /sbin/launchd\n 812   1 /Applications/Antigravity App/bin/agy\nbroken line\n")).toEqual([
      { pid: 1, ppid: 0, command: "/sbin/launchd" },
      { pid: 812, ppid: 1, command: "/Applications/Antigravity App/bin/agy" },
    ]);
  });

  it("reads tmux pane lists and skips anything else", () => {
    expect(parsePaneList("%0 123\n%12 456\nno server running\n%x 1\n")).toEqual([
      { paneId: "%0", pid: 123 },
      { paneId: "%12", pid: 456 },
    ]);
  });

  it("takes the last HTTP and HTTPS port lines of agy's log and ignores a truncated last line", () => {
    const log = [
      "I1130 10:00:00 listening on random port at 41000 for HTTP",
      "I1130 10:00:00 listening on random port at 41001 for HTTPS (gRPC)",
      "I1130 11:00:00 listening on random port at 42000 for HTTP",
      "I1130 11:00:00 listening on random port at 4300",
    ].join("\n");
    expect(parseLogPorts(log)).toEqual({ http: 42000, https: 41001 });
    expect(parseLogPorts(`${log}\n`)).toEqual({ http: 42000, https: 41001 });
    expect(parseLogPorts("listening on random port at 70000 for HTTP\n")).toEqual({});
  });
});
