/**
 * The local session source's own rules, fed discovery's answers through its
 * `DiscoveryFeed` seam: one offer per top-level conversation of a server that
 * answered, the -L/-S scope applied, attach on the server each conversation
 * was last seen on (its URL, token and pane), and what a refresh missed kept
 * for attach. Its use by the real commands is tested in test/cli/tmux-scope.test.ts.
 */
import { describe, expect, it } from "vitest";
import { createTmuxScope, type DiscoveredServer } from "../../src/discovery/index.js";
import { createLocalSessionSource, type AgySessionApi, type AttachOptions } from "../../src/session/index.js";

function server(pid: number, extra: Partial<DiscoveredServer>): DiscoveredServer {
  return { pid, executable: "/usr/bin/agy", listeners: [], csrfTokenPresent: false, conversations: [], ...extra };
}

const conversation = (conversationId: string, extra: object = {}) => ({ conversationId, waitingSteps: [], ...extra });

function world(rounds: DiscoveredServer[][], scoped?: { socketName: string }) {
  const attached: AttachOptions[] = [];
  const asked: number[] = [];
  const skipped: string[] = [];
  let round = 0;
  let closed = false;
  const source = createLocalSessionSource({
    scope: createTmuxScope(scoped, { onSkipped: (message) => skipped.push(message) }),
    discovery: {
      refresh: async () => rounds[Math.min(round++, rounds.length - 1)]!,
      close: async () => {
        closed = true;
      },
    },
    attach: async (options) => {
      attached.push(options);
      return { conversationId: options.conversationId } as AgySessionApi;
    },
    alive: (pid) => pid === 10,
    // agy 10's directory is known; any other's read has not finished.
    workspaceOf: (pid) => {
      asked.push(pid);
      return pid === 10 ? "/home/me/project" : undefined;
    },
  });
  return { source, attached, skipped, asked, closed: () => closed };
}

describe("the local session source", () => {
  it("offers each top-level conversation of a server that answered, with what discovery knows of it", async () => {
    const w = world([
      [
        server(10, {
          url: "https://127.0.0.1:4100",
          csrfToken: "tok-a",
          tmuxPane: "%3",
          conversations: [
            conversation("c-1", { title: "Fix the build", lastUserInputTime: "2026-12-03T10:00:00Z" }),
            conversation("c-sub", { parentConversationId: "c-1" }),
          ],
        }),
        // No listener answered: nothing of it can be attached.
        server(11, { conversations: [conversation("c-dark")] }),
      ],
    ]);
    expect(await w.source.list()).toEqual([{ conversationId: "c-1", pid: 10, title: "Fix the build", updatedAt: "2026-12-03T10:00:00Z", pane: "%3" }]);
    await w.source.attach("c-1", { follow: false });
    expect(w.attached).toEqual([{ conversationId: "c-1", url: "https://127.0.0.1:4100", csrfToken: "tok-a", pane: { target: "%3" }, follow: false }]);
    await expect(w.source.attach("c-dark")).rejects.toThrow(/its server is gone/);
    await w.source.close();
    expect(w.closed()).toBe(true);
  });

  it("keeps what a refresh missed for attach, and retains only a session whose agy still runs", async () => {
    const w = world([[server(10, { url: "http://127.0.0.1:4200", conversations: [conversation("c-1")] })], []]);
    const [offer] = await w.source.list();
    expect(await w.source.list()).toEqual([]);
    // The busy agy missed the probe: its conversation still attaches on the server it was seen on.
    await w.source.attach("c-1");
    expect(w.attached[0]).toMatchObject({ url: "http://127.0.0.1:4200" });
    expect(w.source.retain(offer!)).toBe(true);
    expect(w.source.retain({ conversationId: "c-9", pid: 99 })).toBe(false);
  });

  it("with -L offers only agy in a pane of that tmux server, attaches with that server's pane, and says once what it left out", async () => {
    const inPane = server(10, { url: "http://127.0.0.1:4300", tmuxPane: "%7", conversations: [conversation("c-in")] });
    const outside = server(12, { url: "http://127.0.0.1:4301", conversations: [conversation("c-out")] });
    const w = world([[inPane, outside]], { socketName: "work" });
    expect((await w.source.list()).map((o) => o.conversationId)).toEqual(["c-in"]);
    expect((await w.source.list()).map((o) => o.conversationId)).toEqual(["c-in"]);
    expect(w.skipped).toHaveLength(1);
    expect(w.skipped[0]).toContain("left out agy (pid 12): it runs in no pane of the tmux server -L work");
    await w.source.attach("c-in");
    expect(w.attached[0]!.pane).toEqual({ target: "%7", socketName: "work" });
    await expect(w.source.attach("c-out")).rejects.toThrow(/its server is gone/);
  });

  it("says where a listed conversation's agy runs: its directory and pane, each only when known", async () => {
    const w = world([
      [
        server(10, { url: "http://127.0.0.1:4400", tmuxPane: "%2", conversations: [conversation("c-here")] }),
        server(11, { url: "http://127.0.0.1:4401", conversations: [conversation("c-bare")] }),
      ],
    ]);
    expect(w.source.describe("c-here")).toEqual({});
    await w.source.list();
    expect(w.source.describe("c-here")).toEqual({ workspace: "/home/me/project", pane: "%2" });
    expect(w.source.describe("c-bare")).toEqual({});
    expect(w.source.describe("c-never")).toEqual({});
    // The directory is asked by agy's pid, never for a conversation discovery did not offer.
    expect(w.asked).toEqual([10, 11]);
  });
});
