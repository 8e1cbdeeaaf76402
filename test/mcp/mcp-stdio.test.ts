/**
 * `agy-bridge mcp` over stdio, end to end: a real subprocess driven by the
 * MCP SDK's own client, against the simulator running as agy in a private
 * tmux server.
 */
import { readFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { startMcpWorld, structured, textOf, type McpWorld } from "./support/mcp-world.js";

let world: McpWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

interface Logged {
  cursor: string;
  event: { type: string; interactionId?: string; text?: string; outcome?: string; decidedBy?: string; name?: string };
}

interface Pending {
  interactionId: string;
  request: { kind: string; target?: string };
}

describe("agy-bridge mcp over stdio", { timeout: 120_000 }, () => {
  it("lets an agent list, send a turn, wait for the gate, approve it, wait for idle and read it all once", async () => {
    world = await startMcpWorld({ transport: "stdio", clientName: "claude-test" });
    const w = world;
    const { sessions } = structured<{ sessions: Array<{ conversationId: string; default: boolean }> }>(await w.call("list_sessions"));
    const ours = sessions.find((s) => s.default);
    expect(ours, JSON.stringify(sessions)).toBeDefined();
    const conversationId = ours!.conversationId;

    const turn = structured<{ result: string; cursor: string }>(await w.call("send_turn", { text: "Run pwd" }));
    expect(turn.result).toBe("delivered");
    const gate = structured<{ outcome: string; pending: Pending[] }>(await w.call("wait_for", { until: "pending_interaction", timeoutMs: 30_000 }));
    expect(gate.outcome).toBe("pending_interaction");
    expect(gate.pending).toHaveLength(1);
    expect(gate.pending[0]!.request).toMatchObject({ kind: "permission", target: "pwd" });
    const interactionId = gate.pending[0]!.interactionId;

    const approved = structured(await w.call("approve", { conversationId, interactionId }));
    expect(approved).toMatchObject({ result: "delivered", decidedBy: "mcp:claude-test", interactionId, conversationId });
    const idle = structured<{ outcome: string; status: string }>(await w.call("wait_for", { until: "idle", since: turn.cursor, timeoutMs: 30_000 }));
    expect(idle).toMatchObject({ outcome: "idle", status: "idle" });

    const read = structured<{ events: Logged[]; cursor: string; more: boolean }>(await w.call("read_events", { since: turn.cursor }));
    expect(read.more).toBe(false);
    const types = read.events.map((e) => e.event.type);
    const count = (test: (e: Logged["event"]) => boolean) => read.events.filter((e) => test(e.event)).length;
    expect(
      count((e) => e.type === "user_message" && e.text === "Run pwd"),
      types.join(" "),
    ).toBe(1);
    expect(count((e) => e.type === "interaction_requested" && e.interactionId === interactionId)).toBe(1);
    expect(read.events.filter((e) => e.event.type === "interaction_resolved").map((e) => e.event)).toEqual([
      expect.objectContaining({ interactionId, outcome: "approved", decidedBy: "mcp:claude-test" }),
    ]);
    expect(count((e) => e.type === "function_call_output" && e.name === "run_command")).toBe(1);
    expect(types.at(-1)).toBe("status");
    // Cursors count up by one: nothing skipped, nothing twice.
    const cursors = read.events.map((e) => Number(e.cursor));
    expect(cursors).toEqual(cursors.map((_, i) => Number(turn.cursor) + 1 + i));
    expect(read.cursor).toBe(String(cursors.at(-1)));

    // Paging with limit gives the same events.
    const pages: Logged[] = [];
    let since = turn.cursor;
    for (let i = 0; i < 100; i++) {
      const page = structured<{ events: Logged[]; cursor: string; more: boolean }>(await w.call("read_events", { since, limit: 4 }));
      pages.push(...page.events);
      since = page.cursor;
      if (!page.more) break;
    }
    expect(pages).toEqual(read.events);

    const again = await w.call("approve", { interactionId });
    expect(again.isError).toBe(true);
    expect(textOf(again)).toMatch(/^Interaction int_[0-9a-f]+ \(step \d+\) was already answered/);

    const transcript = await w.client.readResource({ uri: `agy://sessions/${conversationId}/transcript` });
    const text = transcript.contents.map((c) => ("text" in c ? c.text : "")).join("");
    expect(text).toContain("user: Run pwd");
    expect(text).toContain(`${interactionId} approved by mcp:claude-test`);

    const records = (await readFile(w.auditFile, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records).toContainEqual(
      expect.objectContaining({
        conversationId,
        interactionId,
        decision: "approve",
        decidedBy: "mcp:claude-test",
        delivery: "delivered",
        request: { commandLine: "pwd" },
      }),
    );
    // Other agy sessions on the machine may come and go (their problems are said on stderr); none is a crash.
    expect(w.stderr()).not.toMatch(/\n\s+at /);
  });

  it("answers bad input, unknown conversations and unknown interactions with tool errors that say what to do, and keeps serving", async () => {
    world = await startMcpWorld({ transport: "stdio" });
    const w = world;
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ["approve", {}, /interactionId must be a string like int_/],
      ["approve", { interactionId: "nope" }, /interactionId must look like int_/],
      ["approve", { interactionId: "int_0123456789abcdef" }, /^No interaction int_0123456789abcdef exists in conversation /],
      ["deny", { interactionId: "int_0123456789abcdef", instruction: 5 }, /instruction must be a string/],
      ["answer", { interactionId: "int_0123456789abcdef" }, /answer needs options \(labels or ids\) or writeIn/],
      ["wait_for", { until: "soon" }, /until must be "idle", "pending_interaction" or "event"/],
      ["wait_for", { until: "event" }, /until "event" needs an eventType/],
      ["wait_for", { until: "event", eventType: "nothing" }, /eventType must be one of user_message, /],
      ["wait_for", { until: "idle", timeoutMs: -1 }, /timeoutMs must not be negative/],
      ["wait_for", { until: "idle", timeoutMs: 10_000_000 }, /timeoutMs must be at most 600000/],
      ["read_events", { since: "abc" }, /since must be a cursor/],
      ["read_events", { since: "999999" }, /since 999999 is past the end of conversation/],
      ["read_events", { limit: 0 }, /limit must be at least 1/],
      ["read_events", { conversationId: "no-such-conversation" }, /No agy session in reach has conversation "no-such-conversation"; call list_sessions/],
      ["send_turn", { text: "" }, /text must not be empty/],
      ["send_turn", { text: "/clear" }, /slash command; agents may not send those/],
      ["list_sessions", { extra: 1 }, /list_sessions takes no argument "extra"/],
      ["approve", { interaction_id: "int_00" }, /approve takes no argument "interaction_id"; its arguments are conversationId, interactionId, instruction/],
    ];
    for (const [tool, args, expected] of cases) {
      const result = await w.call(tool, args);
      expect([tool, args, result.isError]).toEqual([tool, args, true]);
      expect(result.structuredContent).toBeUndefined();
      expect(textOf(result), `${tool} ${JSON.stringify(args)}`).toMatch(expected);
    }
    // Still serving: nothing above crashed it.
    const after = structured<{ sessions: unknown[] }>(await w.call("list_sessions"));
    expect(after.sessions.length).toBeGreaterThan(0);
    const quiet = structured<{ outcome: string }>(await w.call("wait_for", { until: "pending_interaction", timeoutMs: 200 }));
    expect(quiet.outcome).toBe("timed_out");
    // Other agy sessions on the machine may come and go (their problems are said on stderr); none is a crash.
    expect(w.stderr()).not.toMatch(/\n\s+at /);
  });

  it("answers a question by its option's label, and refuses a label the question does not offer", async () => {
    world = await startMcpWorld({ transport: "stdio", clientName: "asker" });
    const w = world;
    const turn = structured<{ cursor: string }>(await w.call("send_turn", { text: "Help me start a project" }));
    const gate = structured<{ pending: Array<{ interactionId: string; request: { kind: string } }> }>(
      await w.call("wait_for", { until: "pending_interaction", timeoutMs: 30_000 }),
    );
    const interactionId = gate.pending[0]!.interactionId;
    expect(gate.pending[0]!.request.kind).toBe("question");

    const wrong = await w.call("answer", { interactionId, options: ["A spaceship"] });
    expect(wrong.isError).toBe(true);
    expect(textOf(wrong)).toMatch(
      /^"A spaceship" is not an option of this question; choose by id or label among 1 \("A web application"\), 2 \("A command-line tool"\)/,
    );
    const approveQuestion = await w.call("approve", { interactionId });
    expect(approveQuestion.isError).toBe(true);
    expect(textOf(approveQuestion)).toBe(`Interaction ${interactionId} is a question; answer it with answer (options or writeIn), or decline it with deny.`);

    expect(structured(await w.call("answer", { interactionId, options: ["a command-line tool"] }))).toMatchObject({
      result: "delivered",
      decidedBy: "mcp:asker",
    });
    const said = structured<{ event: { text: string } }>(
      await w.call("wait_for", { until: "event", eventType: "message", since: turn.cursor, timeoutMs: 30_000 }),
    );
    expect(said.event.text).toContain("A command-line tool");
    const read = structured<{ events: Array<{ event: { type: string; outcome?: string; decidedBy?: string } }> }>(
      await w.call("read_events", { since: turn.cursor }),
    );
    expect(read.events.filter((e) => e.event.type === "interaction_resolved").map((e) => e.event)).toEqual([
      expect.objectContaining({ outcome: "answered", decidedBy: "mcp:asker" }),
    ]);
  });

  it("reads agy's dialog on the screen, interrupts a turn parked on it by denying it as the agent's own decision, and says idle when nothing runs", async () => {
    world = await startMcpWorld({ transport: "stdio", clientName: "stopper" });
    const w = world;
    expect(structured(await w.call("interrupt"))).toMatchObject({ result: "idle" });
    const turn = structured<{ cursor: string }>(await w.call("send_turn", { text: "Run pwd" }));
    const gate = structured<{ pending: Array<{ interactionId: string; stepIndex: number }> }>(
      await w.call("wait_for", { until: "pending_interaction", timeoutMs: 30_000 }),
    );
    // The TUI draws the dialog a moment after agy parks the gate: read the screen until it shows (bounded).
    let screen: { state: string; prompt: { kind: string } | null } = { state: "unknown", prompt: null };
    for (const deadline = Date.now() + 15_000; screen.state !== "prompt" && Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      screen = structured<{ screen: typeof screen }>(await w.call("screen")).screen;
    }
    expect(screen).toMatchObject({ state: "prompt", prompt: { kind: "command" } });
    const stopped = structured(await w.call("interrupt"));
    expect(stopped).toMatchObject({ result: "denied", stepIndices: [gate.pending[0]!.stepIndex] });
    const resolved = structured<{ event: { outcome: string; decidedBy?: string } }>(
      await w.call("wait_for", { until: "event", eventType: "interaction_resolved", since: turn.cursor, timeoutMs: 30_000 }),
    );
    expect(resolved.event).toMatchObject({ outcome: "denied", decidedBy: "mcp:stopper" });
    const records = (await readFile(w.auditFile, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records).toContainEqual(
      expect.objectContaining({ interactionId: gate.pending[0]!.interactionId, decision: "deny", decidedBy: "mcp:stopper", delivery: "delivered" }),
    );
  });

  it("returns at once when the condition already holds and reports progress while it waits", async () => {
    world = await startMcpWorld({ transport: "stdio" });
    const w = world;
    // Nothing ran yet: the conversation is idle now.
    const idle = structured<{ outcome: string; waitedMs: number }>(await w.call("wait_for", { until: "idle", timeoutMs: 600_000 }));
    expect(idle.outcome).toBe("idle");
    const progress: number[] = [];
    const none = structured<{ outcome: string }>(
      await w.call("wait_for", { until: "event", eventType: "message", timeoutMs: 2500 }, { onprogress: (p) => progress.push(p.progress) }),
    );
    expect(none.outcome).toBe("timed_out");
    // One notification every 2 s: the first one comes before the 2.5 s bound.
    expect(progress.length).toBeGreaterThanOrEqual(1);
  });
});
