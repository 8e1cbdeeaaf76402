/**
 * `agy-bridge serve` end to end, with the simulator as agy: resuming across a
 * restart of serve, and the refusals a bot acts on.
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

const post = (w: ServeWorld, path: string, body: unknown) => w.api(`/v1/sessions/${w.conversationId}${path}`, { method: "POST", body: JSON.stringify(body) });

describe("agy-bridge serve across a restart", { timeout: 180_000 }, () => {
  it("gives a bot that resumes after a restart every event from the start, the approval that came meanwhile included", async () => {
    world = await startServeWorld();
    const w = world;
    const first = await openSse(`${w.url}/v1/sessions/${w.conversationId}/events`, { authorization: `Bearer ${w.token}` });
    expect((await (await post(w, "/turns", { text: "Run pwd" })).json()) as unknown, w.stderr()).toMatchObject({ result: "delivered" });
    const [approval] = await until(
      async () => {
        const p = await pendingOf(w);
        return p.length > 0 ? p : undefined;
      },
      "the first approval",
      { ms: 30_000, everyMs: 100 },
    );
    expect((await post(w, `/interactions/${approval!.interactionId}`, { action: "approve" })).status).toBe(200);
    await first.until((c) => c.messages.some((m) => m.event === "function_call_output"), "the command's output", 30_000);
    await until(async () => ((await pendingOf(w)).length === 0 ? true : undefined), "nothing pending", { ms: 30_000, everyMs: 100 });
    first.close();
    const lastSeen = first.messages.at(-1)!;

    // While the bot is away a second approval arrives, and serve restarts.
    expect((await (await post(w, "/turns", { text: "Delete the build directory" })).json()) as unknown, w.stderr()).toMatchObject({ result: "delivered" });
    await until(async () => ((await pendingOf(w)).length > 0 ? true : undefined), "the second approval", { ms: 30_000, everyMs: 100 });
    await w.restartServe();
    const [second] = await until(
      async () => {
        const p = await pendingOf(w);
        return p.length > 0 ? p : undefined;
      },
      "the second approval after the restart",
      { ms: 30_000, everyMs: 100 },
    );

    const resumed = await openSse(`${w.url}/v1/sessions/${w.conversationId}/events`, { authorization: `Bearer ${w.token}`, "last-event-id": lastSeen.id! });
    expect(resumed.status).toBe(200);
    await resumed.until(
      (c) => c.messages.some((m) => m.event === "interaction_requested" && JSON.parse(m.data).interactionId === second!.interactionId),
      "the approval that arrived during the restart",
      30_000,
    );
    resumed.close();
    expect(resumed.messages[0]?.epoch).not.toBe(lastSeen.epoch);
    expect(resumed.messages[0]?.seq).toBe(1);
    // From the start: the first turn and its approval, which the bot had already seen, come again.
    const replayed = resumed.messages.map((m) => JSON.parse(m.data) as { type: string; text?: string; interactionId?: string });
    expect(replayed.some((e) => e.type === "user_message" && e.text === "Run pwd")).toBe(true);
    expect(replayed.some((e) => e.type === "interaction_requested" && e.interactionId === approval!.interactionId)).toBe(true);

    // An id of the new run beyond its newest event was never sent: 400, not silence.
    const bogus = await w.api(`/v1/sessions/${w.conversationId}/events`, { headers: { "last-event-id": `${resumed.messages[0]!.epoch}-99999` } });
    expect(bogus.status).toBe(400);
  });

  it("refuses a turn while a step waits with 409 naming it, and an answer to a permission with 422", async () => {
    world = await startServeWorld();
    const w = world;
    await post(w, "/turns", { text: "Run pwd" });
    const [waiting] = await until(
      async () => {
        const p = await pendingOf(w);
        return p.length > 0 ? p : undefined;
      },
      "a pending permission",
      { ms: 30_000, everyMs: 100 },
    );
    const turn = await post(w, "/turns", { text: "and then ls" });
    expect(turn.status, w.stderr()).toBe(409);
    expect(await turn.json()).toMatchObject({ result: "interaction_pending", interactionId: waiting!.interactionId });
    const wrong = await post(w, `/interactions/${waiting!.interactionId}`, { action: "answer", optionIds: ["1"] });
    expect(wrong.status).toBe(422);
    expect(((await wrong.json()) as { detail: string }).detail).toContain('{"action":"approve"} or {"action":"deny"}');
    expect((await pendingOf(w)).map((p) => p.interactionId)).toEqual([waiting!.interactionId]);
  });

  it("refuses a turn with 409 naming the missing pane when agy runs in no pane of the tmux server serve looks at", async () => {
    // Without -L serve offers every agy and looks for panes on tmux's default server; ours runs on a private one.
    world = await startServeWorld({ serveArgs: () => ["--refresh-ms", "300"] });
    const w = world;
    const turn = await post(w, "/turns", { text: "Run pwd" });
    expect(turn.status, w.stderr()).toBe(409);
    const body = (await turn.json()) as { result: string; detail: string };
    expect(body.result).toBe("no_pane");
    expect(body.detail).toMatch(/runs in no pane of tmux's default server, so serve cannot type a turn into its TUI; .*restart serve with -L NAME/);
  });
});
