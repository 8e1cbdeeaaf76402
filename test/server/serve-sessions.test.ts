/**
 * serve's sessions as the command wires them (server/serve-sessions.ts):
 * over this machine's local source, a real simulator attached through a
 * discovery answer; over a remote source, nothing of this machine read.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { SessionAuditor } from "../../src/audit/session-auditor.js";
import { createTmuxScope, type DiscoveredServer } from "../../src/discovery/index.js";
import { createServeSessions } from "../../src/server/serve-sessions.js";
import type { SupervisedSession } from "../../src/server/session-hub.js";
import { AgySession, createLocalSessionSource } from "../../src/session/index.js";
import { startSimServer } from "../../src/sim/index.js";
import { until } from "../support/until.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

function recordingAuditor(): SessionAuditor & { observed: string[] } {
  const observed: string[] = [];
  return { observed, observe: (event) => observed.push(event.type), policy: () => undefined, answered: () => undefined, flush: async () => undefined };
}

async function localWorld(options: { workspace?: string; policy?: boolean } = {}) {
  const sim = await startSimServer({ speed: 0.05, agyVersion: "1.2", workspacePath: "/srv/work/shop" });
  cleanups.push(() => sim.close());
  const conversationId = sim.engine.activeConversationId;
  const server: DiscoveredServer = {
    pid: 4242,
    executable: "/usr/bin/agy",
    listeners: [],
    csrfTokenPresent: false,
    url: sim.plainUrl,
    conversations: [{ conversationId, waitingSteps: [] }],
  };
  let discoveryClosed = false;
  const local = createLocalSessionSource({
    scope: createTmuxScope(undefined),
    discovery: {
      refresh: async () => [server],
      close: async () => {
        discoveryClosed = true;
      },
    },
    attach: AgySession.attach,
    // agy's own directory, as /proc/<pid>/cwd would say it.
    workspaceOf: (pid) => (pid === 4242 ? "/home/u/agy-dir" : undefined),
  });
  const auditor = recordingAuditor();
  const sessions = createServeSessions({ from: { local, tmux: { socketName: "work" }, auditor }, ...options });
  cleanups.push(() => sessions.close());
  await sessions.hub.refresh();
  return { sessions, conversationId, auditor, discoveryClosed: () => discoveryClosed };
}

describe("serve's sessions", () => {
  it("attach this machine's agy, say where it runs, and refuse a turn with no pane naming the tmux server", async () => {
    const { sessions, conversationId, auditor, discoveryClosed } = await localWorld({ policy: true });
    const entry = sessions.hub.get(conversationId);
    expect(entry?.pid).toBe(4242);
    expect(sessions.describe(conversationId)).toEqual({ workspace: "/home/u/agy-dir" });
    expect(sessions.describe("not-listed")).toEqual({});
    // With a policy and no --workspace, the rule's workspace is agy's own as the policy reads it (its metadata).
    await until(() => (sessions.ruleWorkspace(conversationId) === "/srv/work/shop" ? true : undefined), "the workspace read from agy's metadata", {
      ms: 10_000,
      seen: () => String(sessions.ruleWorkspace(conversationId)),
    });
    const turn = await entry!.sendTurn("hello");
    expect(turn).toMatchObject({ result: "refused", refusal: "no_pane" });
    expect(turn.result === "refused" ? turn.reason : "").toContain("agy (pid 4242) runs in no pane of the tmux server -L work");
    // The auditor reads every session's events in the background.
    await until(() => (auditor.observed.length > 0 ? true : undefined), "the auditor to observe an event", {
      ms: 10_000,
      seen: () => auditor.observed.join(","),
    });
    await sessions.close();
    expect(discoveryClosed()).toBe(true);
    expect(sessions.hub.list()).toEqual([]);
  }, 30_000);

  it("scope a learned rule to --workspace when given, and to /proc's directory without a policy", async () => {
    const given = await localWorld({ workspace: "/given", policy: true });
    expect(given.sessions.ruleWorkspace(given.conversationId)).toBe("/given");
    const plain = await localWorld();
    expect(plain.sessions.ruleWorkspace(plain.conversationId)).toBe("/home/u/agy-dir");
  }, 30_000);

  it("over a remote source, list and attach what it offers and describe nothing of this machine", async () => {
    const attached: string[] = [];
    const remote = {
      list: async () => [{ conversationId: "c-remote", host: "host-b", title: "host-b" }],
      attach: (descriptor: { conversationId: string }): SupervisedSession => {
        attached.push(descriptor.conversationId);
        return {
          conversationId: descriptor.conversationId,
          events: () => ({ [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<never>>(() => undefined) }) }),
          respond: async () => ({ result: "not_found" }) as never,
          sendTurn: async () => ({ result: "failed", reason: "no" }) as never,
          interrupt: async () => ({ result: "idle" }) as never,
          close: async () => undefined,
        };
      },
    };
    const sessions = createServeSessions({ from: { remote }, workspace: "/w" });
    cleanups.push(() => sessions.close());
    await sessions.hub.refresh();
    expect(attached).toEqual(["c-remote"]);
    expect(sessions.hub.get("c-remote")?.title).toBe("host-b");
    expect(sessions.describe("c-remote")).toEqual({});
    expect(sessions.ruleWorkspace("c-remote")).toBe("/w");
  });
});
