/**
 * Choosing one server (spike-notes §2.6, §2.7): the owner of the
 * conversation, the agy in the pane, or the only one; otherwise a typed error
 * that lists pids and ports and never a token. Also the conversation list
 * read from GetAllCascadeTrajectories (§3.11).
 */
import { describe, expect, it } from "vitest";
import { conversationsOf } from "../../src/discovery/conversations.js";
import { DiscoveryError } from "../../src/discovery/discovery-error.js";
import { selectServer } from "../../src/discovery/select-server.js";
import type { DiscoveredServer } from "../../src/discovery/types.js";

function server(pid: number, conversations: string[], options: { token?: string } = {}): DiscoveredServer {
  const s: DiscoveredServer = {
    pid,
    executable: "/usr/local/bin/agy",
    listeners: [{ port: pid * 10, host: "127.0.0.1", transport: "tls", heartbeatOk: true, source: "fd", trust: "own", tokenSent: true }],
    csrfTokenPresent: options.token !== undefined,
    conversations: conversations.map((conversationId) => ({ conversationId, waitingSteps: [] })),
  };
  s.url = `https://127.0.0.1:${pid * 10}`;
  if (options.token !== undefined) s.csrfToken = options.token;
  return s;
}

function thrown(fn: () => unknown): DiscoveryError {
  try {
    fn();
  } catch (error) {
    if (error instanceof DiscoveryError) return error;
    throw error;
  }
  throw new Error("expected a DiscoveryError");
}

describe("selectServer", () => {
  it("binds the server that owns the conversation, with its token", () => {
    const binding = selectServer([server(1, ["a"], { token: "tok-1" }), server(2, ["b"], { token: "tok-2" })], { conversationId: "b" });
    expect(binding).toMatchObject({ url: "https://127.0.0.1:20", pid: 2, csrfToken: "tok-2", conversationId: "b" });
    expect(binding.how).toContain("owns conversation b");
  });

  it("counts a GetConversationMetadata echo as ownership", () => {
    expect(selectServer([server(1, []), server(2, [])], { conversationId: "z", metadataOwners: [1] }).pid).toBe(1);
  });

  it("refuses when two servers claim one conversation, listing both without tokens", () => {
    const error = thrown(() => selectServer([server(1, ["a"], { token: "secret-a" }), server(2, ["a"], { token: "secret-b" })], { conversationId: "a" }));
    expect(error.reason).toBe("conflict");
    expect(error.candidates.map((c) => c.pid)).toEqual([1, 2]);
    expect(error.message).toContain("pid 1");
    expect(error.message).toContain("pid 2");
    expect(JSON.stringify(error.candidates) + error.message).not.toMatch(/secret/);
  });

  it("says the conversation is hosted nowhere when no server owns it", () => {
    const error = thrown(() => selectServer([server(1, ["a"])], { conversationId: "nope" }));
    expect(error.reason).toBe("not_found");
    expect(error.message).toContain("nope");
  });

  it("takes the only usable server and its first root conversation", () => {
    const only = server(1, ["a"]);
    const deaf = server(2, []);
    delete deaf.url;
    const binding = selectServer([deaf, only], {});
    expect(binding).toMatchObject({ pid: 1, conversationId: "a" });
    expect(binding.how).toContain("only");
  });

  it("lists every candidate when several servers fit and nothing picks one", () => {
    const error = thrown(() => selectServer([server(1, []), server(2, [])], {}));
    expect(error.reason).toBe("ambiguous");
    expect(error.candidates).toEqual([
      { pid: 1, ports: [10], url: "https://127.0.0.1:10" },
      { pid: 2, ports: [20], url: "https://127.0.0.1:20" },
    ]);
  });

  it("says nothing runs when there is no server at all", () => {
    const error = thrown(() => selectServer([], {}));
    expect(error.reason).toBe("no_server");
    expect(error.message).toContain("no agy process is running");
  });

  it("narrows to the agy in the pane and refuses a pane without one", () => {
    expect(selectServer([server(1, ["a"]), server(2, ["b"])], { paneLabel: "%3", paneAgyPid: 2 }).pid).toBe(2);
    const error = thrown(() => selectServer([server(1, ["a"])], { paneLabel: "%3" }));
    expect(error.reason).toBe("not_found");
    expect(error.message).toContain("%3");
  });
});

describe("conversationsOf", () => {
  it("reads status, step count, last input, waiting steps (absent index = 0) and sub-agent parents, most recent first", () => {
    const conversations = conversationsOf({
      trajectorySummaries: {
        old: {
          status: "CASCADE_RUN_STATUS_IDLE",
          stepCount: "4",
          lastUserInputTime: "2026-01-01T00:00:00Z",
          trajectoryMetadata: { rootConversationId: "old" },
        },
        "new": {
          status: "CASCADE_RUN_STATUS_RUNNING",
          stepCount: 9,
          lastUserInputTime: "2026-02-01T00:00:00Z",
          waitingSteps: [{ stepIndex: 8 }, {}],
        },
        child: { trajectoryMetadata: { rootConversationId: "new" }, createdTime: "2025-01-01T00:00:00Z" },
      },
    });
    expect(conversations).toEqual([
      { conversationId: "new", status: "CASCADE_RUN_STATUS_RUNNING", stepCount: 9, lastUserInputTime: "2026-02-01T00:00:00Z", waitingSteps: [0, 8] },
      { conversationId: "old", status: "CASCADE_RUN_STATUS_IDLE", stepCount: 4, lastUserInputTime: "2026-01-01T00:00:00Z", waitingSteps: [] },
      { conversationId: "child", stepCount: 0, waitingSteps: [], parentConversationId: "new" },
    ]);
  });
});
