/**
 * `agy-bridge serve` end to end: the simulator running as agy in a real tmux
 * pane, found by discovery; a bot drives it with plain HTTP.
 */
import { afterEach, describe, expect, it } from "vitest";
import { openSse } from "./support/sse-client.js";
import { startServeWorld, type ServeWorld } from "./support/serve-world.js";
import { until } from "../support/until.js";

let world: ServeWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

interface Pending {
  interactionId: string;
  request: { kind: string; target?: string };
}

async function pendingOf(w: ServeWorld): Promise<Pending[]> {
  return ((await (await w.api(`/v1/sessions/${w.conversationId}/pending`)).json()) as { pending: Pending[] }).pending;
}

describe("agy-bridge serve", { timeout: 120_000 }, () => {
  it("lets a bot type a turn, see the approval, approve it, and see it resolved — three requests", async () => {
    world = await startServeWorld();
    const w = world;
    const events = await openSse(`${w.url}/v1/sessions/${w.conversationId}/events`, { authorization: `Bearer ${w.token}` });
    const turn = await w.api(`/v1/sessions/${w.conversationId}/turns`, { method: "POST", body: JSON.stringify({ text: "Run pwd" }) });
    expect(await turn.json(), w.stderr()).toMatchObject({ result: "delivered" });
    await events.until((c) => c.messages.some((m) => m.event === "interaction_requested"), "the permission request", 30_000);
    const [pending] = await pendingOf(w);
    expect(pending?.request).toMatchObject({ kind: "permission", target: "pwd" });
    const approve = await w.api(`/v1/sessions/${w.conversationId}/interactions/${pending!.interactionId}`, {
      method: "POST",
      body: JSON.stringify({ action: "approve" }),
    });
    expect(approve.status).toBe(200);
    expect(await approve.json()).toMatchObject({ result: "delivered" });
    await events.until((c) => c.messages.some((m) => m.event === "interaction_resolved"), "the interaction to resolve", 30_000);
    await events.until((c) => c.messages.some((m) => m.event === "function_call_output"), "the command's output", 30_000);
    events.close();
    expect(await pendingOf(w)).toEqual([]);
    const again = await w.api(`/v1/sessions/${w.conversationId}/interactions/${pending!.interactionId}`, {
      method: "POST",
      body: JSON.stringify({ action: "approve" }),
    });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ result: "already_resolved" });
    const ids = events.messages.map((m) => m.seq);
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    expect(new Set(events.messages.map((m) => m.epoch)).size).toBe(1);
    expect(w.stderr()).not.toContain(w.token);
  });

  it("delivers exactly one of two concurrent approvals, and a resumed stream loses and repeats nothing", async () => {
    world = await startServeWorld();
    const w = world;
    const first = await openSse(`${w.url}/v1/sessions/${w.conversationId}/events`, { authorization: `Bearer ${w.token}` });
    await w.api(`/v1/sessions/${w.conversationId}/turns`, { method: "POST", body: JSON.stringify({ text: "Delete the build directory" }) });
    const pending = await until(async () => (await pendingOf(w))[0], "a pending permission", { ms: 30_000, everyMs: 100 });
    await first.until((c) => c.messages.some((m) => m.event === "interaction_requested"), "the request on the stream", 30_000);
    first.close();
    const last = first.messages.at(-1);
    const lastSeen = last?.seq ?? 0;
    const post = () =>
      w.api(`/v1/sessions/${w.conversationId}/interactions/${pending.interactionId}`, {
        method: "POST",
        body: JSON.stringify({ action: "deny", instruction: "keep the build" }),
      });
    const statuses = (await Promise.all([post(), post()])).map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409]);
    const resumed = await openSse(`${w.url}/v1/sessions/${w.conversationId}/events`, { authorization: `Bearer ${w.token}`, "last-event-id": last?.id ?? "" });
    await resumed.until((c) => c.messages.some((m) => m.event === "interaction_resolved"), "the resolution after resuming", 30_000);
    resumed.close();
    const full = await openSse(`${w.url}/v1/sessions/${w.conversationId}/events`, { authorization: `Bearer ${w.token}` });
    const total = resumed.messages.at(-1)?.seq ?? 0;
    await full.until((c) => (c.messages.at(-1)?.seq ?? 0) >= total, "the full history", 30_000);
    full.close();
    const seen = [...first.messages, ...resumed.messages].map((m) => m.id);
    expect(seen).toEqual(full.messages.slice(0, seen.length).map((m) => m.id));
    expect(new Set(seen).size).toBe(seen.length);
    expect(resumed.messages[0]?.seq).toBe(lastSeen + 1);
  });
});
