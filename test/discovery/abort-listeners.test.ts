/**
 * One caller signal shared by every probe of a discovery: many agy servers
 * (each with a TLS and a plain listener, spike-notes §10.2) must not pile
 * abort listeners on it past Node's limit of 10, which prints a
 * MaxListenersExceededWarning on the CLI's stderr.
 */
import { getEventListeners } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { createAbortFanout } from "../../src/discovery/abort-fanout.js";
import { discoverServers } from "../../src/discovery/index.js";
import { startSimServer, type SimServer } from "../../src/sim/index.js";
import { createFakeProc } from "./support/fake-proc.js";

const FAKE_AGY = "/opt/fake/bin/agy";
const TOKEN = "tok-many-servers-51e0";
const SERVERS = 6;

const warnings: Error[] = [];
const onWarning = (warning: Error): void => {
  warnings.push(warning);
};

afterEach(() => {
  process.off("warning", onWarning);
  warnings.length = 0;
});

describe("discovery with one signal over many listeners", () => {
  it(`probes ${SERVERS * 2} listeners with one caller signal and no MaxListenersExceededWarning`, async () => {
    const sims: SimServer[] = await Promise.all(Array.from({ length: SERVERS }, () => startSimServer({ speed: 0, csrfToken: TOKEN })));
    const fake = createFakeProc(
      sims.map((_, i) => ({ pid: 6100 + i, exe: FAKE_AGY, argv: [FAKE_AGY], fds: [`${8100 + 2 * i}`, `${8101 + 2 * i}`] })),
      sims.flatMap((sim, i) => [
        { port: sim.tlsPort, inode: `${8100 + 2 * i}` },
        { port: sim.plainPort, inode: `${8101 + 2 * i}` },
      ]),
    );
    process.on("warning", onWarning);
    try {
      const controller = new AbortController();
      const { servers } = await discoverServers({ procRoot: fake.root, csrfToken: TOKEN, tmuxServers: [], logPath: false, signal: controller.signal });
      expect(servers.filter((s) => s.url !== undefined)).toHaveLength(SERVERS);
      // Warnings are emitted on the next tick; a round through the event loop lets any arrive.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((w) => `${w.name}: ${w.message}`)).toEqual([]);
    } finally {
      fake.remove();
      await Promise.all(sims.map((sim) => sim.close()));
    }
  });
});

describe("the abort fan-out", () => {
  it("keeps one listener on the parent for any number of children, aborts them all with it, and removes it on close", () => {
    const parent = new AbortController();
    const fanout = createAbortFanout(parent.signal);
    const children = Array.from({ length: 20 }, () => fanout.child());
    expect(getEventListeners(parent.signal, "abort")).toHaveLength(1);
    parent.abort(new Error("stop"));
    expect(children.map((c) => c?.aborted)).toEqual(children.map(() => true));
    expect((children[0]?.reason as Error).message).toBe("stop");
    expect(fanout.child()?.aborted).toBe(true);

    const other = new AbortController();
    const closed = createAbortFanout(other.signal);
    const kept = closed.child();
    closed.close();
    expect(getEventListeners(other.signal, "abort")).toHaveLength(0);
    other.abort();
    expect(kept?.aborted).toBe(false);
  });
});
