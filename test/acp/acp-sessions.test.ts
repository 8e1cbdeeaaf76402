/**
 * Which attended session an editor joins (`_meta`, cwd against agy's
 * workspace, the only one, else an error listing the candidates), and the
 * policy answering before the editor is asked.
 */
import { writeFileSync } from "node:fs";
import { join as joinPath } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RequestError } from "@agentclientprotocol/sdk";
import { startAcpWorld, type AcpWorld } from "./support/acp-world.js";
import { initialize, prompt } from "./support/join.js";

let world: AcpWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

async function failure(promise: Promise<unknown>): Promise<RequestError> {
  try {
    await promise;
  } catch (error) {
    return error as RequestError;
  }
  throw new Error("the request succeeded");
}

describe("choosing the session", { timeout: 120_000 }, () => {
  it("lists both attended sessions, refuses to guess between them, and joins by workspace or by _meta", async () => {
    // agy 1.1 names its workspace (/home/sim/project); agy 1.0.10 names none.
    world = await startAcpWorld({ simArgs: ["--agy-version", "1.1"], secondSimArgs: [] });
    const w = world;
    await initialize(w);
    const { sessions } = await w.connection.agent.request("session/list", {});
    expect(sessions).toHaveLength(2);
    const withWorkspace = sessions.find((s) => s.cwd === "/home/sim/project");
    const other = sessions.find((s) => s !== withWorkspace);
    expect(withWorkspace).toBeDefined();
    expect(other?._meta).toMatchObject({ agyBridge: { workspaceKnown: false } });

    const refused = await failure(w.connection.agent.request("session/new", { cwd: "/somewhere/else", mcpServers: [] }));
    expect(refused.code).toBe(-32602);
    expect(refused.message).toContain("2 attended agy sessions could be meant");
    expect(refused.message).toContain(withWorkspace!.sessionId);
    expect(refused.message).toContain(other!.sessionId);

    const byCwd = await w.connection.agent.request("session/new", { cwd: "/home/sim/project/src", mcpServers: [] });
    expect(byCwd.sessionId).toBe(withWorkspace!.sessionId);
    const byMeta = await w.connection.agent.request("session/new", {
      cwd: "/somewhere/else",
      mcpServers: [],
      _meta: { agyBridge: { conversationId: other!.sessionId } },
    });
    expect(byMeta.sessionId).toBe(other!.sessionId);
    // Each prompt goes to its own agy.
    expect((await prompt(w, byMeta.sessionId, "Say hello in one short sentence.")).stopReason).toBe("end_turn");
    await w.tmux.waitForScreen("agy2", (s) => s.includes("> Say hello in one short sentence."), "the prompt in the second agy");
    expect(await w.tmux.capture("agy")).not.toContain("Say hello");
  });

  it("answers a prompt for a session never joined, and a load of a conversation no agy has, with JSON-RPC errors saying what to do", async () => {
    world = await startAcpWorld();
    const w = world;
    await initialize(w);
    const error = await failure(prompt(w, "no-such-session", "hello"));
    expect(error.code).toBe(-32002);
    expect(error.message).toMatch(/join it with session\/new or session\/load/);
    const load = await failure(w.connection.agent.request("session/load", { sessionId: "no-such-conversation", cwd: "/", mcpServers: [] }));
    expect(load.code).toBe(-32002);
    expect(load.message).toContain("agy-bridge cannot join conversation no-such-conversation");
  });
});

describe("--policy", { timeout: 120_000 }, () => {
  it("answers what the policy decides; only ask reaches the editor", async () => {
    world = await startAcpWorld({
      acpArgs: (dir) => {
        const file = joinPath(dir, "policy.yaml");
        writeFileSync(file, "version: 1\ndefault: ask\nrules:\n  - id: pwd-is-fine\n    kind: command\n    commands: [pwd]\n    action: approve\n");
        return ["--policy", file];
      },
    });
    const w = world;
    await initialize(w);
    const { sessionId } = await w.connection.agent.request("session/new", { cwd: "/nowhere", mcpServers: [] });
    expect((await prompt(w, sessionId, "Run pwd")).stopReason, w.stderr()).toBe("end_turn");
    expect(w.permissionRequests).toEqual([]);
    expect(w.text("agent_message_chunk")).toContain("/home/sim/project");
    w.answerPermissions(() => ({ outcome: { outcome: "selected", optionId: "deny" } }));
    expect((await prompt(w, sessionId, "Delete the build directory")).stopReason).toBe("end_turn");
    expect(w.permissionRequests).toHaveLength(1);
    await expect
      .poll(async () => (await w.auditLog()).map((r) => [r["decidedBy"], r["decision"]]), { timeout: 10_000 })
      .toEqual([
        ["policy:pwd-is-fine", "approve"],
        ["policy:default", "ask"],
        ["acp:acp-test", "deny"],
      ]);
  });
});
