import { afterEach, describe, expect, it } from "vitest";
import { createFleetClient, type PublishedEvent } from "../../src/fleet/index.js";
import { startRelayWorld, type RelayWorld } from "./support/relay-world.js";
import { until } from "../support/until.js";

let world: RelayWorld | undefined;
const aborts: AbortController[] = [];
afterEach(async () => {
  for (const a of aborts.splice(0)) a.abort();
  await world?.close();
  world = undefined;
});

describe("the fleet client (a bot's side of the streams)", () => {
  it("lists the fleet, follows a conversation live, answers its gate and resumes after an entry id", async () => {
    world = await startRelayWorld();
    const w = world;
    await w.startRelay();
    const client = createFleetClient({ redis: w.redis.client(), blockMs: 100 });
    const fleet = await until(async () => {
      const list = await client.sessions();
      return list.length === 1 ? list : undefined;
    }, "the session in the index");
    expect(fleet[0]).toMatchObject({ host: w.host, conversationId: w.conversationId, state: "idle" });

    const stop = new AbortController();
    aborts.push(stop);
    const seen: PublishedEvent[] = [];
    const following = (async () => {
      for await (const entry of client.events(w.host, w.conversationId, { signal: stop.signal })) seen.push(entry);
    })();
    w.sim.engine.tuiPort().submitTurn("Run pwd");
    const gate = await until(() => seen.find((e) => e.event.type === "interaction_requested"), "the gate, live", {
      ms: 15_000,
      seen: () => seen.map((e) => e.key).join(", "),
    });
    const interactionId = (gate.event as { interactionId: string }).interactionId;
    const outcome = await client.command(w.host, { type: "approve", conversationId: w.conversationId, interactionId, principal: "bot" });
    expect(outcome.result).toMatchObject({ result: "delivered", interactionId });
    await until(() => seen.find((e) => e.event.type === "function_call_output"), "the output, live");
    stop.abort();
    await following;

    // A reader that stopped at the gate resumes after it: nothing before it again.
    const again = new AbortController();
    aborts.push(again);
    const resumed: PublishedEvent[] = [];
    const reading = (async () => {
      for await (const entry of client.events(w.host, w.conversationId, { after: gate.id, signal: again.signal })) resumed.push(entry);
    })();
    await until(() => resumed.find((e) => e.event.type === "function_call_output"), "the output after resuming");
    again.abort();
    await reading;
    const index = seen.findIndex((e) => e.id === gate.id);
    expect(resumed.map((e) => e.id).slice(0, seen.length - index - 1)).toEqual(seen.slice(index + 1).map((e) => e.id));
  });

  it("with the default 30 s wait, an idle reader stops as soon as its signal fires and takes a live entry at once", async () => {
    world = await startRelayWorld();
    const w = world;
    await w.startRelay();
    const client = createFleetClient({ redis: w.redis.client() });
    await until(async () => ((await client.sessions()).length === 1 ? true : undefined), "the session in the index");
    const stop = new AbortController();
    aborts.push(stop);
    const seen: PublishedEvent[] = [];
    const following = (async () => {
      for await (const entry of client.events(w.host, w.conversationId, { signal: stop.signal })) seen.push(entry);
    })();
    // Redis says when a client sits in a blocking XREAD of this stream.
    const admin = w.redis.client();
    const blockedReader = async () => {
      const list = String(await admin.client("LIST"));
      return list.split("\n").some((line) => / flags=b /.test(line) && / cmd=xread /.test(line)) ? true : undefined;
    };
    await until(blockedReader, "the reader to block in XREAD");
    // Live: an entry ends the wait, it does not wait for the 30 s to pass.
    w.sim.engine.tuiPort().submitTurn("Say hello in one short sentence.");
    await until(() => seen.find((e) => e.event.type === "message"), "the answer, live", { ms: 15_000, seen: () => seen.map((e) => e.key).join(", ") });
    // Idle again, in the middle of a 30 s wait: the abort ends it.
    await until(blockedReader, "the reader to block again");
    const stopped = performance.now();
    stop.abort();
    await following;
    // Well under the 30 s the wait would otherwise last (a bound for a loaded machine, not a timing).
    expect(performance.now() - stopped).toBeLessThan(15_000);
  });

  it("says no relay answered a command for a host nobody runs, and that the command stays queued", async () => {
    world = await startRelayWorld();
    const client = createFleetClient({ redis: world.redis.client(), blockMs: 50 });
    await expect(client.command("nobody-home", { type: "interrupt", conversationId: "c", principal: "bot" }, { timeoutMs: 300 })).rejects.toThrow(
      /no relay of host nobody-home answered command .* within 300 ms; is `agy-bridge relay --host nobody-home` running\?/,
    );
  });
});
