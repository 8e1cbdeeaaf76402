/**
 * `agy-bridge serve --redis` as a real process, fed entries nobody should
 * have written: an `agy:events:*` stream holding a `null` event, an
 * `interaction_requested` without its `request`, text that is not JSON and
 * an entry without an event field, between valid ones. Each bad entry is
 * skipped with one `invalid_entry` diagnostic carrying its own entry id; the
 * conversation stays listed and every valid entry after it is served.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startServeProcess } from "../server/support/serve-process.js";
import { openSse } from "../server/support/sse-client.js";
import { startRedis } from "./support/redis-process.js";
import { until } from "../support/until.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

const HOST = "host-m";
const CONVERSATION = "c0ffee00-0000-4000-8000-000000000001";
const STREAM = `agy:events:${HOST}:${CONVERSATION}`;

describe("agy-bridge serve --redis with malformed stream entries", { timeout: 120_000 }, () => {
  it("rejects only each bad entry with a diagnostic saying why, and keeps the conversation and every later entry", async () => {
    const redis = await startRedis();
    cleanups.push(() => redis.stop());
    const writer = redis.client();
    await writer.xadd(
      "agy:sessions",
      "*",
      "type",
      "session.attached",
      "host",
      HOST,
      "conversationId",
      CONVERSATION,
      "state",
      "idle",
      "time",
      new Date().toISOString(),
    );
    const add = (fields: string[]) => writer.xadd(STREAM, "*", ...fields) as Promise<string>;
    const event = (value: unknown) => [
      "key",
      `k-${Math.random()}`,
      "type",
      String((value as { type?: string } | null)?.type ?? "x"),
      "event",
      JSON.stringify(value),
    ];
    const first = await add(event({ type: "user_message", conversationId: CONVERSATION, trajectoryId: "t1", stepIndex: 0, text: "before" }));
    const bad = [
      await add(event(null)),
      await add(
        event({
          type: "interaction_requested",
          conversationId: CONVERSATION,
          trajectoryId: "t1",
          stepIndex: 1,
          interactionId: "int_forged",
          stepType: "RUN_COMMAND",
          callId: "call_1",
        }),
      ),
      await add(["key", "k-text", "type", "message", "event", "{not json"]),
      await add(["key", "k-none", "type", "message"]),
    ];

    const dir = await mkdtemp(join(tmpdir(), "agyb-serve-malformed-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const serve = await startServeProcess({ configHome: dir, args: ["--redis", redis.url, "--refresh-ms", "200"] });
    cleanups.push(() => serve.stop());
    const authorization = `Bearer ${serve.token}`;
    const call = async (path: string) => (await fetch(`${serve.url}${path}`, { headers: { authorization } })).json() as Promise<Record<string, unknown>>;
    await until(
      async () => ((await call("/v1/sessions")).sessions as { conversationId: string }[]).find((s) => s.conversationId === CONVERSATION),
      "the fleet session on serve",
      { ms: 30_000 },
    );

    const sse = await openSse(`${serve.url}/v1/sessions/${CONVERSATION}/events`, { authorization });
    cleanups.push(async () => sse.close());
    // An entry written after serve began reading: live entries are checked as history ones are.
    const lateBad = await add(event({ type: "message", conversationId: CONVERSATION }));
    const after = await add(event({ type: "user_message", conversationId: CONVERSATION, trajectoryId: "t1", stepIndex: 2, text: "after" }));
    await sse.until((c) => c.messages.some((m) => m.id === after), "the valid entry after the bad ones", 30_000);

    const withIds = sse.messages
      .filter((m) => m.id !== undefined)
      .map((m) => ({ id: m.id, event: m.event, data: JSON.parse(m.data) as { type: string; code?: string; message?: string; text?: string } }));
    expect(withIds.map((m) => m.id)).toEqual([first, ...bad, lateBad, after]);
    expect(withIds[0]!.data).toMatchObject({ type: "user_message", text: "before" });
    expect(withIds.at(-1)!.data).toMatchObject({ type: "user_message", text: "after" });
    const diagnostics = withIds.slice(1, -1).map((m) => m.data);
    for (const [i, d] of diagnostics.entries()) {
      expect(d).toMatchObject({ type: "diagnostic", conversationId: CONVERSATION, code: "invalid_entry" });
      expect(d.message).toContain(`Entry ${[...bad, lateBad][i]} of ${STREAM} was skipped`);
    }
    expect(diagnostics.map((d) => /skipped: (.*?)\. Only/.exec(d.message!)?.[1])).toEqual([
      "its event field is null, not an event object",
      expect.stringMatching(/^its "interaction_requested" event does not match the event schema \(.* at request\)$/),
      "its event field is not JSON",
      "it has no event field",
      expect.stringMatching(/^its "message" event does not match the event schema/),
    ]);
    // The forged request is not offered to anyone to answer, and serve is still well.
    expect((await call(`/v1/sessions/${CONVERSATION}/pending`)).pending).toEqual([]);
    expect(((await call("/v1/sessions")).sessions as { conversationId: string }[]).map((s) => s.conversationId)).toContain(CONVERSATION);
    expect(serve.exited(), serve.stderr()).toBeUndefined();
  });
});
