import { afterEach, describe, expect, it } from "vitest";
import { startApiHarness, TEST_TOKEN, type ApiHarness } from "./support/api-harness.js";
import { createScriptedSession, permissionRequested, userMessage, type ScriptedSession } from "./support/scripted-session.js";
import { openSse } from "./support/sse-client.js";

const harnesses: ApiHarness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close();
});

async function start(): Promise<ApiHarness> {
  const h = await startApiHarness();
  harnesses.push(h);
  return h;
}

/** What agy holds for the conversation, replayed to every attachment like a real session replays the snapshot. */
function conversation(events: Parameters<ScriptedSession["push"]>[0][]): ScriptedSession {
  const session = createScriptedSession("conv-a");
  for (const event of events) session.push(event);
  return session;
}

const auth = { authorization: `Bearer ${TEST_TOKEN}` };

describe("event ids", () => {
  it("are <epoch>-<seq>, with an epoch of its own for each run", async () => {
    const first = await start();
    const second = await start();
    expect(first.hub.epoch).toMatch(/^[a-z0-9]{1,32}$/);
    expect(second.hub.epoch).not.toBe(first.hub.epoch);
    first.addSession("conv-a", conversation([userMessage("conv-a", "one")]));
    await first.hub.refresh();
    const sse = await openSse(`${first.url}/v1/sessions/conv-a/events`, auth);
    await sse.until((c) => c.messages.length === 1, "the first event");
    sse.close();
    expect(sse.messages[0]?.id).toBe(`${first.hub.epoch}-1`);
  });

  it("refuses with 400 an id of this run beyond its newest event, saying what the newest is", async () => {
    const h = await start();
    h.addSession("conv-a", conversation([userMessage("conv-a", "one"), userMessage("conv-a", "two")]));
    await h.hub.refresh();
    const sse = await openSse(`${h.url}/v1/sessions/conv-a/events`, auth);
    await sse.until((c) => c.messages.length === 2, "two events");
    sse.close();
    const res = await h.fetch("/v1/sessions/conv-a/events", { headers: { "last-event-id": `${h.hub.epoch}-99999` } });
    expect(res.status).toBe(400);
    const detail = ((await res.json()) as { detail: string }).detail;
    expect(detail).toContain("never sent by this server");
    expect(detail).toContain(`${h.hub.epoch}-2`);
    expect((await h.fetch("/v1/sessions/conv-a/events", { headers: { "last-event-id": "not an id" } })).status).toBe(400);
  });

  it("replays from the start for an id of an earlier run, so an approval that came during a restart is seen", async () => {
    const before = [userMessage("conv-a", "Run pwd"), permissionRequested("conv-a", 3, "pwd")];
    const first = await start();
    const agy = conversation(before);
    first.addSession("conv-a", agy);
    await first.hub.refresh();
    const bot = await openSse(`${first.url}/v1/sessions/conv-a/events`, auth);
    await bot.until((c) => c.messages.length === 2, "the first run's events");
    bot.close();
    const lastSeen = bot.messages.at(-1)?.id ?? "";
    await first.close();
    harnesses.splice(harnesses.indexOf(first), 1);

    // While serve was down, a new approval arrived; the next run reads the conversation afresh.
    const restarted = await start();
    restarted.addSession("conv-a", conversation([...before, permissionRequested("conv-a", 7, "rm -rf build")]));
    await restarted.hub.refresh();
    const resumed = await openSse(`${restarted.url}/v1/sessions/conv-a/events`, { ...auth, "last-event-id": lastSeen });
    expect(resumed.status).toBe(200);
    await resumed.until((c) => c.messages.length === 3, "everything the new run holds");
    resumed.close();
    expect(resumed.messages.map((m) => m.id)).toEqual([1, 2, 3].map((n) => `${restarted.hub.epoch}-${n}`));
    expect(resumed.messages.map((m) => JSON.parse(m.data).request?.target ?? JSON.parse(m.data).text)).toEqual(["Run pwd", "pwd", "rm -rf build"]);
  });

  it("treats a bare number (an id from before epochs) as an earlier run's", async () => {
    const h = await start();
    h.addSession("conv-a", conversation([userMessage("conv-a", "one"), userMessage("conv-a", "two")]));
    await h.hub.refresh();
    const resumed = await openSse(`${h.url}/v1/sessions/conv-a/events`, { ...auth, "last-event-id": "84" });
    await resumed.until((c) => c.messages.length === 2, "the whole conversation");
    resumed.close();
    expect(resumed.messages.map((m) => m.seq)).toEqual([1, 2]);
  });
});
