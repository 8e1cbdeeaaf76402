/**
 * A session knows which agy it talks to, and says so once when that changes:
 * a real simulator is stopped and another one, playing another agy version
 * (`agyVersion`), starts hosting the same conversation on new ports — what a
 * self-update does to agy (spike-notes §14 #1). Discovery's side (reading
 * the version off a real agy-shaped process) is test/discovery/agy-version.test.ts;
 * here `locate` and `locateVersion` report the simulator that runs now, as
 * discovery would.
 */
import { afterEach, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { startSimServer, type SimServer } from "../../src/sim/index.js";
import { AgySession, type AgySessionApi, type AgyVersionState, type AttachOptions } from "../../src/session/index.js";
import type { MapperEvent } from "../../src/mapper/index.js";
import { until } from "../support/until.js";

interface Agy {
  sim: SimServer;
  pid: number;
}

let stops: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  stops = [];
});

async function agy(version: "1.1" | "1.2", conversationId: string, pid: number): Promise<Agy> {
  const sim = await startSimServer({ speed: 0, agyVersion: version });
  sim.engine.startHeadless(conversationId);
  stops.push(() => sim.close());
  return { sim, pid };
}

/** Attach options whose discovery finds whichever agy `current()` is. */
function discoveredBy(current: () => Agy, conversationId: string, seen: Array<{ pid?: number; url: string }>): AttachOptions {
  return {
    conversationId,
    locate: async () => {
      const { sim, pid } = current();
      return { url: sim.plainUrl, pid, conversationId, how: `pid ${pid}`, agyVersion: sim.agyVersion, agyVersionSource: "process" };
    },
    locateVersion: async (query) => {
      seen.push(query);
      const { sim, pid } = current();
      const state: AgyVersionState = { agyVersion: query.pid === pid ? sim.agyVersion : null, agyVersionSource: "process", simulator: true };
      if (query.pid !== undefined) state.pid = query.pid;
      return state;
    },
    locatePane: false,
    pollIntervalMs: 20,
    relocateAfterFailures: 1,
    goneAfterFailures: 1000,
  };
}

function collect(session: AgySessionApi): MapperEvent[] {
  const log: MapperEvent[] = [];
  void (async () => {
    for await (const event of session.events()) log.push(event);
  })().catch(() => undefined);
  return log;
}

describe("agy's version on a session", () => {
  it("knows agy's version at attach and puts it on history_end", async () => {
    const id = randomUUID();
    const first = await agy("1.1", id, 4101);
    const session = await AgySession.attach(discoveredBy(() => first, id, []));
    stops.push(() => session.close());
    expect(session.agyVersion).toBe("1.1");
    expect(session.agyVersionSource).toBe("process");
    const log = collect(session);
    const end = await until(() => log.find((e) => e.type === "history_end"), "history_end", { seen: () => log.map((e) => e.type).join(", ") });
    expect(end).toMatchObject({ type: "history_end", agyVersion: "1.1" });
  });

  it("says agy_version_changed exactly once when agy restarts as another version under the same conversation, and has the new version everywhere", async () => {
    const id = randomUUID();
    let current = await agy("1.1", id, 4201);
    const reads: Array<{ pid?: number; url: string }> = [];
    const session = await AgySession.attach(discoveredBy(() => current, id, reads));
    stops.push(() => session.close());
    const told: AgyVersionState[] = [];
    session.onVersion?.((state) => told.push(state));
    const log = collect(session);
    await until(() => log.some((e) => e.type === "history_end"), "history_end", { seen: () => log.map((e) => e.type).join(", ") });

    // The self-update: the old agy goes away, a new process of another version serves the same conversation.
    await current.sim.close();
    current = await agy("1.2", id, 4202);

    const changed = await until(() => log.find((e) => e.type === "agy_version_changed"), "agy_version_changed", {
      seen: () => `${log.map((e) => e.type).join(", ")}; version reads: ${JSON.stringify(reads)}`,
    });
    expect(changed).toEqual({ type: "agy_version_changed", conversationId: id, from: "1.1", to: "1.2", source: "process", pid: 4202 });
    // The reconnect on the new server reads the version again; that read must not say it twice.
    await until(() => reads.some((r) => r.pid === 4202 && r.url === current.sim.plainUrl), "a version read of the new agy", {
      seen: () => JSON.stringify(reads),
    });
    await session.pending();
    expect(log.filter((e) => e.type === "agy_version_changed")).toHaveLength(1);
    expect(session.agyVersion).toBe("1.2");
    expect(told.map((s) => s.agyVersion)).toEqual(["1.2"]);
    // A consumer that starts now is told the new version on its history_end.
    const later: MapperEvent[] = [];
    const stop = new AbortController();
    void (async () => {
      for await (const event of session.events({ signal: stop.signal })) later.push(event);
    })().catch(() => undefined);
    const end = await until(() => later.find((e) => e.type === "history_end"), "the later consumer's history_end", {
      seen: () => later.map((e) => e.type).join(", "),
    });
    stop.abort();
    expect(end).toMatchObject({ agyVersion: "1.2" });
  });

  it("keeps a known version when a read of the same agy finds nothing after a reconnect, and says nothing", async () => {
    const id = randomUUID();
    const only = await agy("1.2", id, 4301);
    const reads: Array<{ pid?: number; url: string }> = [];
    const options = discoveredBy(() => only, id, reads);
    // This agy's process stops naming its version (its children are gone): the read says unknown.
    options.locateVersion = async (query) => {
      reads.push(query);
      return { agyVersion: null, agyVersionSource: null, simulator: false, pid: 4301 };
    };
    const session = await AgySession.attach(options);
    stops.push(() => session.close());
    expect(session.agyVersion).toBe("1.2");
    const log = collect(session);
    await until(() => log.some((e) => e.type === "history_end"), "history_end");
    // New ports, same process: the session moves to them, reconnects, and reads the version again.
    await only.sim.restart();
    await until(() => reads.some((r) => r.url === only.sim.plainUrl), "a version read after the move", { seen: () => JSON.stringify(reads) });
    await session.pending();
    expect(session.agyVersion).toBe("1.2");
    expect(log.filter((e) => e.type === "agy_version_changed")).toEqual([]);
  });
});
