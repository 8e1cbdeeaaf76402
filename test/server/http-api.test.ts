import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { AgyBridgeError } from "../../src/errors.js";
import { createFailureLimiter } from "../../src/server/bearer-token.js";
import { startApiHarness, TEST_TOKEN, type ApiHarness } from "./support/api-harness.js";
import { createScriptedSession, permissionRequested, userMessage } from "./support/scripted-session.js";
import { openSse } from "./support/sse-client.js";
import { until } from "../support/until.js";

let harness: ApiHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function start(options: Parameters<typeof startApiHarness>[0] = {}, hubOptions: Parameters<typeof startApiHarness>[1] = {}): Promise<ApiHarness> {
  harness = await startApiHarness(options, hubOptions);
  return harness;
}

describe("authentication", () => {
  it("answers 401 problem details without a token and with a wrong one, and 200 with the right one", async () => {
    const h = await start();
    for (const token of [null, "wrong-token-wrong-token"]) {
      const res = await h.fetch("/v1/sessions", { token });
      expect(res.status).toBe(401);
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      const body = (await res.json()) as { status: number; detail: string };
      expect(body.status).toBe(401);
      expect(body.detail).toMatch(/Authorization: Bearer/);
      expect(JSON.stringify(body)).not.toContain(TEST_TOKEN);
    }
    const ok = await h.fetch("/v1/sessions");
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ sessions: [] });
  });

  it("requires the token on every /v1 route, the OpenAPI document included", async () => {
    const h = await start();
    h.addSession("conv-a");
    await h.hub.refresh();
    for (const [method, path] of [
      ["GET", "/v1/openapi.json"],
      ["GET", "/v1/sessions/conv-a/pending"],
      ["GET", "/v1/sessions/conv-a/events"],
      ["POST", "/v1/sessions/conv-a/interactions/int_1"],
      ["POST", "/v1/sessions/conv-a/turns"],
      ["POST", "/v1/sessions/conv-a/interrupt"],
    ] as const) {
      const res = await h.fetch(path, { method, token: null });
      expect(res.status, `${method} ${path}`).toBe(401);
    }
    expect(h.sessions.get("conv-a")?.answers).toEqual([]);
  });

  it("answers 429 to an address that keeps sending wrong tokens, but never locks the right token out", async () => {
    let now = 1_000_000;
    const h = await start({ limiter: createFailureLimiter({ maxFailures: 3, windowMs: 60_000, now: () => now }) });
    for (let i = 0; i < 3; i++) expect((await h.fetch("/v1/sessions", { token: "bad-token-bad-token" })).status).toBe(401);
    const blocked = await h.fetch("/v1/sessions", { token: "bad-token-bad-token" });
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get("retry-after")).toBe("60");
    expect((await h.fetch("/v1/sessions")).status).toBe(200);
    now += 61_000;
    expect((await h.fetch("/v1/sessions", { token: "bad-token-bad-token" })).status).toBe(401);
  });

  it("serves the page at / without a token and sends no CORS headers unless an origin is configured", async () => {
    const h = await start();
    const page = await h.fetch("/", { token: null });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    const cross = await h.fetch("/v1/sessions", { headers: { origin: "https://evil.example" } });
    expect(cross.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("allows exactly the configured CORS origin, with a preflight that needs no token", async () => {
    const h = await start({ cors: "https://bot.example" });
    const preflight = await h.fetch("/v1/sessions", { method: "OPTIONS", token: null, headers: { origin: "https://bot.example" } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-headers")).toContain("authorization");
    const ok = await h.fetch("/v1/sessions", { headers: { origin: "https://bot.example" } });
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://bot.example");
    const other = await h.fetch("/v1/sessions", { headers: { origin: "https://other.example" } });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("sessions and pending", () => {
  it("lists sessions with their status and pending count, and the pending interactions themselves", async () => {
    const h = await start();
    const session = h.addSession("conv-a");
    await h.hub.refresh();
    session.push({ type: "status", conversationId: "conv-a", status: "waiting", reason: "interaction_pending" });
    session.push(permissionRequested("conv-a", 6, "rm -rf build"));
    const sse = await openSse(`${h.url}/v1/sessions/conv-a/events`, { authorization: `Bearer ${TEST_TOKEN}` });
    await sse.until((c) => c.messages.length === 2, "two events");
    sse.close();
    const list = (await (await h.fetch("/v1/sessions")).json()) as { sessions: unknown[] };
    expect(list.sessions).toEqual([{ conversationId: "conv-a", pid: 4242, status: "waiting", pending: 1, waitingFor: "permission", title: "title of conv-a" }]);
    const pending = (await (await h.fetch("/v1/sessions/conv-a/pending")).json()) as { pending: { interactionId: string; request: { target: string } }[] };
    expect(pending.pending.map((p) => p.request.target)).toEqual(["rm -rf build"]);
  });

  it("passes a question's multiSelect through /pending exactly as the event stream has it", async () => {
    const h = await start();
    const session = h.addSession("conv-a");
    await h.hub.refresh();
    const questions = [
      {
        question: "Which?",
        options: [
          { id: "1", text: "a" },
          { id: "2", text: "b" },
        ],
        multiSelect: true,
      },
      { question: "One?", options: [{ id: "1", text: "c" }], multiSelect: false },
    ];
    session.push({
      type: "interaction_requested",
      conversationId: "conv-a",
      trajectoryId: "traj-1",
      stepIndex: 4,
      interactionId: "int_q",
      stepType: "ASK_USER_QUESTION",
      callId: "c",
      request: { kind: "question", questions },
    } as never);
    await until(async () => h.hub.get("conv-a")?.pending().length === 1, "the question to be pending", { ms: 10_000, everyMs: 20, errors: "throw" });
    const body = (await (await h.fetch("/v1/sessions/conv-a/pending")).json()) as { pending: { request: { questions: unknown[] } }[] };
    expect(body.pending[0]?.request.questions).toEqual(questions);
  });

  it("drops a session whose agy went away and ends its event streams", async () => {
    const h = await start();
    h.addSession("conv-a");
    await h.hub.refresh();
    const sse = await openSse(`${h.url}/v1/sessions/conv-a/events`, { authorization: `Bearer ${TEST_TOKEN}` });
    h.removeSession("conv-a");
    await h.hub.refresh();
    await sse.until((c) => c.ended, "the stream to end");
    expect(sse.comments).toContain("session ended");
    expect((await h.fetch("/v1/sessions/conv-a/pending")).status).toBe(404);
  });
  it("keeps a session a refresh missed while it is still retained, and its stream with it", async () => {
    let alive = true;
    const h = await start({}, { retain: () => alive });
    const session = h.addSession("conv-a");
    await h.hub.refresh();
    const sse = await openSse(`${h.url}/v1/sessions/conv-a/events`, { authorization: `Bearer ${TEST_TOKEN}` });
    h.removeSession("conv-a");
    await h.hub.refresh();
    session.push(userMessage("conv-a", "still here"));
    await sse.until((c) => c.messages.length === 1, "the event after the missed refresh");
    expect(sse.ended).toBe(false);
    alive = false;
    await h.hub.refresh();
    await sse.until((c) => c.ended, "the stream to end once the session is gone");
    sse.close();
  });

  it("continues a conversation's ids when it is attached again, so an id never names two events", async () => {
    const h = await start();
    const first = h.addSession("conv-a");
    await h.hub.refresh();
    first.push(userMessage("conv-a", "one"));
    first.push(userMessage("conv-a", "two"));
    const before = await openSse(`${h.url}/v1/sessions/conv-a/events`, { authorization: `Bearer ${TEST_TOKEN}` });
    await before.until((c) => c.messages.length === 2, "two events");
    before.close();
    h.removeSession("conv-a");
    await h.hub.refresh();
    const second = h.addSession("conv-a");
    await h.hub.refresh();
    second.push(userMessage("conv-a", "again"));
    const after = await openSse(`${h.url}/v1/sessions/conv-a/events`, { authorization: `Bearer ${TEST_TOKEN}`, "last-event-id": `${h.hub.epoch}-2` });
    await after.until((c) => c.messages.length === 1, "the event of the new attachment");
    after.close();
    expect(after.messages.map((m) => [m.id, JSON.parse(m.data).text])).toEqual([[`${h.hub.epoch}-3`, "again"]]);
  });

  it("lists sessions in a stable order", async () => {
    const h = await start();
    for (const id of ["conv-zzzz", "conv-a", "conv-bb"]) h.addSession(id);
    await h.hub.refresh();
    const ids = async () =>
      ((await (await h.fetch("/v1/sessions")).json()) as { sessions: { conversationId: string }[] }).sessions.map((s) => s.conversationId);
    const once = await ids();
    expect(once).toEqual(["conv-a", "conv-bb", "conv-zzzz"]);
    expect(await ids()).toEqual(once);
  });
});

describe("events over SSE", () => {
  it("sends the conversation so far, then live events, with increasing ids and the event type", async () => {
    const h = await start();
    const session = h.addSession("conv-a");
    await h.hub.refresh();
    session.push(userMessage("conv-a", "hello"));
    session.push(permissionRequested("conv-a", 6, "ls"));
    const sse = await openSse(`${h.url}/v1/sessions/conv-a/events`, { authorization: `Bearer ${TEST_TOKEN}` });
    expect(sse.status).toBe(200);
    expect(sse.headers["content-type"]).toMatch(/^text\/event-stream/);
    await sse.until((c) => c.messages.length === 2, "the backlog");
    session.push(userMessage("conv-a", "live"));
    await sse.until((c) => c.messages.length === 3, "the live event");
    sse.close();
    expect(sse.messages.map((m) => [m.id, m.event])).toEqual([
      [`${h.hub.epoch}-1`, "user_message"],
      [`${h.hub.epoch}-2`, "interaction_requested"],
      [`${h.hub.epoch}-3`, "user_message"],
    ]);
    expect(JSON.parse(sse.messages[2]?.data ?? "{}")).toMatchObject({ type: "user_message", text: "live" });
  });

  it("resumes after Last-Event-ID with nothing lost and nothing repeated", async () => {
    const h = await start();
    const session = h.addSession("conv-a");
    await h.hub.refresh();
    for (let i = 0; i < 5; i++) session.push(userMessage("conv-a", `m${i}`));
    const first = await openSse(`${h.url}/v1/sessions/conv-a/events`, { authorization: `Bearer ${TEST_TOKEN}` });
    await first.until((c) => c.messages.length === 5, "five events");
    first.close();
    const lastSeen = 3;
    for (let i = 5; i < 8; i++) session.push(userMessage("conv-a", `m${i}`));
    const resumed = await openSse(`${h.url}/v1/sessions/conv-a/events`, {
      authorization: `Bearer ${TEST_TOKEN}`,
      "last-event-id": `${h.hub.epoch}-${lastSeen}`,
    });
    await resumed.until((c) => c.messages.length === 5, "events 4 to 8");
    resumed.close();
    expect(resumed.messages.map((m) => m.seq)).toEqual([4, 5, 6, 7, 8]);
    expect(resumed.messages.map((m) => JSON.parse(m.data).text)).toEqual(["m3", "m4", "m5", "m6", "m7"]);
  });

  it("refuses a Last-Event-ID that is not an id", async () => {
    const h = await start();
    h.addSession("conv-a");
    await h.hub.refresh();
    const res = await h.fetch("/v1/sessions/conv-a/events", { headers: { "last-event-id": "abc" } });
    expect(res.status).toBe(400);
  });

  it("sends heartbeat comments while nothing happens", async () => {
    const h = await start({ heartbeatMs: 50 });
    h.addSession("conv-a");
    await h.hub.refresh();
    const sse = await openSse(`${h.url}/v1/sessions/conv-a/events`, { authorization: `Bearer ${TEST_TOKEN}` });
    await sse.until((c) => c.comments.filter((x) => x === "keep-alive").length >= 2, "two heartbeats");
    sse.close();
  });

  it("keeps serving a reading client while another stops reading, and the stalled one later gets everything", { timeout: 90_000 }, async () => {
    const h = await start();
    const session = h.addSession("conv-a");
    await h.hub.refresh();
    const port = Number(new URL(h.url).port);
    // A raw client that sends the request and then reads nothing for a while.
    const stalled = connect(port, "127.0.0.1");
    await new Promise<void>((resolve) => stalled.once("connect", resolve));
    stalled.pause();
    stalled.write(`GET /v1/sessions/conv-a/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TEST_TOKEN}\r\n\r\n`);
    const reader = await openSse(`${h.url}/v1/sessions/conv-a/events`, { authorization: `Bearer ${TEST_TOKEN}` });
    const big = "x".repeat(64 * 1024);
    const count = 300;
    for (let i = 0; i < count; i++) session.push(userMessage("conv-a", `${i}:${big}`));
    await reader.until((c) => c.messages.length === count, `${count} events at the reading client`, 30_000);
    reader.close();
    expect(reader.messages.map((m) => m.seq)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
    // Now the stalled client reads: every event arrives, in order, once.
    let text = "";
    const lastFrame = `id: ${h.hub.epoch}-${count}\n`;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`stalled client got ${text.length} bytes, not event ${count}`)), 30_000);
      stalled.setEncoding("utf8");
      stalled.on("data", (chunk: string) => {
        text += chunk;
        if (text.includes(lastFrame) && text.indexOf("\n\n", text.indexOf(lastFrame)) > 0) {
          clearTimeout(timer);
          resolve();
        }
      });
      stalled.resume();
    });
    stalled.destroy();
    const ids = [...text.matchAll(/^id: [a-z0-9]+-(\d+)$/gm)].map((m) => Number(m[1]));
    expect(ids).toEqual(Array.from({ length: count }, (_, i) => i + 1));
  });

  it("ends every stream with a final comment on shutdown", async () => {
    const h = await start();
    h.addSession("conv-a");
    await h.hub.refresh();
    const sse = await openSse(`${h.url}/v1/sessions/conv-a/events`, { authorization: `Bearer ${TEST_TOKEN}` });
    await h.api.close();
    await sse.until((c) => c.ended, "the stream to end");
    expect(sse.comments).toContain("server shutting down");
  });
});

describe("answering", () => {
  it("delivers an approval and answers 409 already_resolved for the same one again", async () => {
    const h = await start();
    const session = h.addSession("conv-a");
    await h.hub.refresh();
    const post = (body: unknown) => h.fetch("/v1/sessions/conv-a/interactions/int_6", { method: "POST", body: JSON.stringify(body) });
    const first = await post({ action: "approve" });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ result: "delivered", stepIndex: 6 });
    const second = await post({ action: "approve" });
    expect(second.status).toBe(409);
    expect(await second.json()).toMatchObject({ status: 409, result: "already_resolved" });
    expect(session.answers).toHaveLength(2);
  });

  it("delivers exactly once when the same interaction is posted twice at the same time", async () => {
    const h = await start();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const delivered = new Set<string>();
    const session = createScriptedSession("conv-a", {
      // Like agy: the first answer to reach the step is taken, a later one is not.
      respond: async (id) => {
        await gate;
        if (delivered.has(id)) return { result: "already_resolved", stepIndex: 6 };
        delivered.add(id);
        return { result: "delivered", stepIndex: 6 };
      },
    });
    h.addSession("conv-a", session);
    await h.hub.refresh();
    const post = () => h.fetch("/v1/sessions/conv-a/interactions/int_6", { method: "POST", body: JSON.stringify({ action: "approve" }) });
    const both = Promise.all([post(), post()]);
    await new Promise<void>((resolve) => {
      const check = () => (session.answers.length >= 1 ? resolve() : setImmediate(check));
      check();
    });
    release();
    const responses = await both;
    expect(responses.map((r) => r.status).sort()).toEqual([200, 409]);
    const bodies = (await Promise.all(responses.map((r) => r.json()))) as { result: string }[];
    expect(bodies.map((b) => b.result).sort()).toEqual(["already_resolved", "delivered"]);
    expect(delivered.size).toBe(1);
  });

  it("passes deny instructions and answers through, and answers 400 with the reason for a bad body", async () => {
    const h = await start();
    const session = h.addSession("conv-a");
    await h.hub.refresh();
    const post = (id: string, body: string) => h.fetch(`/v1/sessions/conv-a/interactions/${id}`, { method: "POST", body });
    expect((await post("int_1", JSON.stringify({ action: "deny", instruction: "use ls -la" }))).status).toBe(200);
    expect((await post("int_2", JSON.stringify({ action: "answer", optionIds: ["2"], writeIn: "both" }))).status).toBe(200);
    expect(session.answers).toEqual([
      { interactionId: "int_1", action: { action: "deny", instruction: "use ls -la" } },
      { interactionId: "int_2", action: { action: "answer", optionIds: ["2"], writeIn: "both" } },
    ]);
    const bad = await post("int_3", JSON.stringify({ action: "answer", optionIds: "2" }));
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { detail: string }).detail).toMatch(/optionIds/);
    expect((await post("int_3", "{not json")).status).toBe(400);
    expect((await post("int_3", JSON.stringify({ action: "maybe" }))).status).toBe(400);
    expect(session.answers).toHaveLength(2);
  });

  it("maps not_found to 404 and timed_out to 409, each with its result", async () => {
    const h = await start();
    h.addSession(
      "conv-a",
      createScriptedSession("conv-a", {
        respond: async (id) => (id === "int_gone" ? { result: "not_found" } : { result: "timed_out", stepIndex: 4 }),
      }),
    );
    await h.hub.refresh();
    const gone = await h.fetch("/v1/sessions/conv-a/interactions/int_gone", { method: "POST", body: '{"action":"approve"}' });
    expect(gone.status).toBe(404);
    expect(await gone.json()).toMatchObject({ result: "not_found" });
    const late = await h.fetch("/v1/sessions/conv-a/interactions/int_late", { method: "POST", body: '{"action":"approve"}' });
    expect(late.status).toBe(409);
    expect(await late.json()).toMatchObject({ result: "timed_out" });
  });

  it("says each result in the sentence the CLI and MCP say it in, naming the interaction and the step", async () => {
    const h = await start();
    const results: Record<string, object> = {
      int_done: { result: "already_resolved", stepIndex: 6 },
      int_late: { result: "timed_out", stepIndex: 4 },
      int_gone: { result: "not_found" },
    };
    h.addSession("conv-a", createScriptedSession("conv-a", { respond: async (id) => results[id] as never }));
    await h.hub.refresh();
    const detail = async (id: string) =>
      ((await (await h.fetch(`/v1/sessions/conv-a/interactions/${id}`, { method: "POST", body: '{"action":"approve"}' })).json()) as { detail: string }).detail;
    expect(await detail("int_done")).toBe("interaction int_done (step 6) was already answered, here, in agy's TUI or by another client; nothing was sent");
    expect(await detail("int_late")).toBe("agy timed interaction int_late (step 4) out and no retry of it is waiting; nothing was sent");
    expect(await detail("int_gone")).toBe("no interaction int_gone exists in conversation conv-a");
    // The same words, from the one table every door reads.
    const { describeAnswer } = await import("../../src/session/answer-text.js");
    expect(describeAnswer({ result: "already_resolved", stepIndex: 6 }, { interactionId: "int_done" })).toBe(await detail("int_done"));
  });

  it("refuses a body over the size limit with 413 before handing anything to the session", async () => {
    const h = await start();
    const session = h.addSession("conv-a");
    await h.hub.refresh();
    const res = await h.fetch("/v1/sessions/conv-a/turns", { method: "POST", body: JSON.stringify({ text: "y".repeat(3 * 1024 * 1024) }) });
    expect(res.status).toBe(413);
    expect(session.turns).toEqual([]);
  });

  it("types turns and interrupts through the session", async () => {
    const h = await start();
    const session = h.addSession("conv-a");
    await h.hub.refresh();
    const turn = await h.fetch("/v1/sessions/conv-a/turns", { method: "POST", body: JSON.stringify({ text: "run the tests" }) });
    expect(await turn.json()).toEqual({ result: "delivered", reason: "a new USER_INPUT step appeared" });
    expect(session.turns).toEqual(["run the tests"]);
    const stop = await h.fetch("/v1/sessions/conv-a/interrupt", { method: "POST" });
    expect(await stop.json()).toEqual({ result: "cancelled" });
    expect((await h.fetch("/v1/sessions/conv-b/interrupt", { method: "POST" })).status).toBe(404);
  });

  it("refuses with 422 an answer to a permission and an approval of a question, naming the body that fits, and sends nothing", async () => {
    const h = await start();
    const session = h.addSession("conv-a");
    await h.hub.refresh();
    session.push(permissionRequested("conv-a", 6, "pwd"));
    session.push({
      type: "interaction_requested",
      conversationId: "conv-a",
      trajectoryId: "traj-1",
      stepIndex: 9,
      interactionId: "int_q",
      stepType: "ASK_USER_QUESTION",
      callId: "agy_call_traj-1_9",
      request: { kind: "question", questions: [{ question: "Which?", options: [{ id: "1", text: "a" }], multiSelect: false }] },
    } as never);
    await until(async () => ((await (await h.fetch("/v1/sessions/conv-a/pending")).json()) as { pending: unknown[] }).pending.length === 2, "two pending", {
      ms: 10_000,
      everyMs: 20,
      errors: "throw",
    });
    const permissionId = (permissionRequested("conv-a", 6, "pwd") as { interactionId: string }).interactionId;
    const answer = await h.fetch(`/v1/sessions/conv-a/interactions/${permissionId}`, {
      method: "POST",
      body: JSON.stringify({ action: "answer", optionIds: ["1"] }),
    });
    expect(answer.status).toBe(422);
    const a = (await answer.json()) as { result: string; detail: string };
    expect(a.result).toBe("wrong_action");
    expect(a.detail).toContain(`POST /v1/sessions/conv-a/interactions/${permissionId} with {"action":"approve"} or {"action":"deny"}`);
    const approve = await h.fetch("/v1/sessions/conv-a/interactions/int_q", { method: "POST", body: JSON.stringify({ action: "approve" }) });
    expect(approve.status).toBe(422);
    expect(((await approve.json()) as { detail: string }).detail).toContain('{"action":"answer","optionIds":[…]}');
    expect(session.answers).toEqual([]);
  });

  it("refuses with 422 an instruction agy's answer cannot carry (approve, a question's deny), sends nothing, and still takes a permission's deny with one", async () => {
    const h = await start();
    const session = h.addSession("conv-a");
    await h.hub.refresh();
    session.push(permissionRequested("conv-a", 6, "pwd"));
    session.push({
      type: "interaction_requested",
      conversationId: "conv-a",
      trajectoryId: "traj-1",
      stepIndex: 9,
      interactionId: "int_q",
      stepType: "ASK_USER_QUESTION",
      callId: "agy_call_traj-1_9",
      request: { kind: "question", questions: [{ question: "Which?", options: [{ id: "1", text: "a" }], multiSelect: false }] },
    } as never);
    await until(async () => ((await (await h.fetch("/v1/sessions/conv-a/pending")).json()) as { pending: unknown[] }).pending.length === 2, "two pending", {
      ms: 10_000,
      everyMs: 20,
      errors: "throw",
    });
    const permissionId = (permissionRequested("conv-a", 6, "pwd") as { interactionId: string }).interactionId;
    const approve = await h.fetch(`/v1/sessions/conv-a/interactions/${permissionId}`, {
      method: "POST",
      body: JSON.stringify({ action: "approve", instruction: "and then run the tests" }),
    });
    expect(approve.status).toBe(422);
    const refused = (await approve.json()) as { result: string; detail: string };
    expect(refused.result).toBe("invalid_argument");
    expect(refused.detail).toContain("carries no instruction");
    const declineQuestion = await h.fetch("/v1/sessions/conv-a/interactions/int_q", {
      method: "POST",
      body: JSON.stringify({ action: "deny", instruction: "ask me later" }),
    });
    expect(declineQuestion.status).toBe(422);
    expect(session.answers).toEqual([]);
    const deny = await h.fetch(`/v1/sessions/conv-a/interactions/${permissionId}`, {
      method: "POST",
      body: JSON.stringify({ action: "deny", instruction: "not in this folder" }),
    });
    expect(deny.status).toBe(200);
    expect(session.answers).toHaveLength(1);
  });

  it("answers 422, not 502, when the session finds the answer does not fit the interaction", async () => {
    const h = await start();
    h.addSession(
      "conv-a",
      createScriptedSession("conv-a", {
        respond: async (id) => {
          throw new AgyBridgeError("invalid_argument", `Option 9 is not offered by interaction ${id}; choose from 1, 2.`);
        },
      }),
    );
    await h.hub.refresh();
    const res = await h.fetch("/v1/sessions/conv-a/interactions/int_x", { method: "POST", body: JSON.stringify({ action: "answer", optionIds: ["9"] }) });
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ result: "invalid_argument", detail: "Option 9 is not offered by interaction int_x; choose from 1, 2." });
  });

  it("refuses a turn with 409 naming the waiting interaction, or the missing pane, as the session reports", async () => {
    const h = await start();
    const refusals = [
      { result: "refused" as const, refusal: "interaction_pending" as const, interactionId: "int_6", reason: "interaction int_6 waits for an answer." },
      { result: "refused" as const, refusal: "no_pane" as const, reason: "agy runs in no pane of tmux's default server; start agy inside tmux." },
    ];
    const session = h.addSession("conv-a");
    session.sendTurn = async () => refusals.shift()!;
    await h.hub.refresh();
    const turn = () => h.fetch("/v1/sessions/conv-a/turns", { method: "POST", body: JSON.stringify({ text: "go" }) });
    const pending = await turn();
    expect(pending.status).toBe(409);
    expect(await pending.json()).toMatchObject({
      result: "interaction_pending",
      interactionId: "int_6",
      detail: expect.stringContaining("POST /v1/sessions/conv-a/interactions/int_6 answers it"),
    });
    const noPane = await turn();
    expect(noPane.status).toBe(409);
    expect(await noPane.json()).toMatchObject({ result: "no_pane", detail: expect.stringContaining("no pane") });
  });
});
