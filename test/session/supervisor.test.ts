import { describe, expect, it } from "vitest";
import { createSupervisor, type DropReason } from "../../src/session/supervisor.js";

/** A session whose reading ends when `end` is called; counts its closes. */
function fakeSession(conversationId: string) {
  let end!: (error?: Error) => void;
  const ended = new Promise<void>((resolve, reject) => (end = (error) => (error === undefined ? resolve() : reject(error))));
  const session = {
    conversationId,
    closes: 0,
    ended,
    end: (error?: Error) => end(error),
    async close() {
      session.closes += 1;
    },
  };
  return session;
}
type Fake = ReturnType<typeof fakeSession>;

function world(ids: string[]) {
  const listed = { ids };
  const sessions = new Map<string, Fake[]>();
  const dropped: [string, DropReason][] = [];
  const problems: string[] = [];
  let attaching = 0;
  let mostAtOnce = 0;
  const failing = new Set<string>();
  const supervisor = createSupervisor<{ conversationId: string }, Fake, { reads: number }>({
    list: async () => listed.ids.map((conversationId) => ({ conversationId })),
    retain: (d) => d.conversationId.startsWith("keep-"),
    async attach(d) {
      attaching += 1;
      mostAtOnce = Math.max(mostAtOnce, attaching);
      await new Promise((r) => setImmediate(r));
      attaching -= 1;
      if (failing.has(d.conversationId)) throw new Error(`no server for ${d.conversationId}`);
      const session = fakeSession(d.conversationId);
      sessions.set(d.conversationId, [...(sessions.get(d.conversationId) ?? []), session]);
      return session;
    },
    follow: (_d, session, signal) => ({
      state: { reads: 0 },
      reading: Promise.race([session.ended, new Promise<void>((r) => signal.addEventListener("abort", () => r()))]),
    }),
    onDropped: (s, why) => dropped.push([s.conversationId, why]),
    attachConcurrency: 3,
    onProblem: (message) => problems.push(message),
  });
  return { listed, sessions, dropped, problems, failing, supervisor, mostAtOnce: () => mostAtOnce };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("createSupervisor", () => {
  it("attaches what is listed a few at a time, once each, and concurrent refreshes share one run", async () => {
    const ids = Array.from({ length: 10 }, (_, i) => `conv-${i}`);
    const w = world([...ids, "conv-3"]);
    let changes = 0;
    w.supervisor.onChange(() => changes++);
    await Promise.all([w.supervisor.refresh(), w.supervisor.refresh()]);
    expect(
      w.supervisor
        .list()
        .map((s) => s.conversationId)
        .sort(),
    ).toEqual([...ids].sort());
    expect([...w.sessions.values()].map((s) => s.length)).toEqual(Array(10).fill(1));
    expect(w.mostAtOnce()).toBe(3);
    expect(changes).toBe(10);
    await w.supervisor.close();
  });

  it("drops a session that vanished unless the source retains it, and one whose reading ended", async () => {
    const w = world(["conv-a", "keep-b", "conv-c"]);
    await w.supervisor.refresh();
    w.listed.ids = ["conv-c"];
    await w.supervisor.refresh();
    expect(
      w.supervisor
        .list()
        .map((s) => s.conversationId)
        .sort(),
    ).toEqual(["conv-c", "keep-b"]);
    expect(w.dropped).toEqual([["conv-a", "vanished"]]);
    expect(w.sessions.get("conv-a")![0]!.closes).toBe(1);

    w.sessions.get("conv-c")![0]!.end(new Error("the stream broke"));
    await until(() => w.supervisor.get("conv-c") === undefined, "conv-c to be dropped");
    expect(w.dropped).toContainEqual(["conv-c", "ended"]);
    expect(w.problems).toEqual(["conversation conv-c: the stream broke"]);
    // The next refresh attaches it again.
    await w.supervisor.refresh();
    expect(w.sessions.get("conv-c")).toHaveLength(2);
    await w.supervisor.close();
  });

  it("reports a failed attach in a sentence and tries again on the next refresh", async () => {
    const w = world(["conv-a"]);
    w.failing.add("conv-a");
    await w.supervisor.refresh();
    expect(w.supervisor.list()).toEqual([]);
    expect(w.problems).toEqual(["attaching to conversation conv-a failed: no server for conv-a"]);
    w.failing.clear();
    await w.supervisor.refresh();
    expect(w.supervisor.get("conv-a")?.session.conversationId).toBe("conv-a");
    await w.supervisor.close();
  });

  it("adopts a session attached elsewhere, keeping the one followed when there is one", async () => {
    const w = world(["conv-a"]);
    await w.supervisor.refresh();
    const other = fakeSession("conv-a");
    const kept = await w.supervisor.adopt({ conversationId: "conv-a" }, other);
    expect(kept.session).toBe(w.sessions.get("conv-a")![0]);
    expect(other.closes).toBe(1);
    const fresh = fakeSession("conv-z");
    expect((await w.supervisor.adopt({ conversationId: "conv-z" }, fresh)).session).toBe(fresh);
    await w.supervisor.close();
  });

  it("close drops and closes every session once, tells no listener, and later refreshes attach nothing", async () => {
    const w = world(["conv-a", "conv-b"]);
    await w.supervisor.refresh();
    let changes = 0;
    w.supervisor.onChange(() => changes++);
    await w.supervisor.close();
    expect(w.supervisor.signal.aborted).toBe(true);
    expect([...w.sessions.values()].map((s) => s[0]!.closes)).toEqual([1, 1]);
    expect(w.dropped.map(([, why]) => why)).toEqual(["closed", "closed"]);
    await w.supervisor.refresh();
    expect(w.supervisor.list()).toEqual([]);
    expect(changes).toBe(0);
    await expect(w.supervisor.adopt({ conversationId: "conv-q" }, fakeSession("conv-q"))).rejects.toThrow(/closed/);
  });
});
