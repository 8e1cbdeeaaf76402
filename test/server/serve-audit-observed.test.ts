/**
 * `agy-bridge serve`'s audit attribution: an answer another client gave over
 * RPC is logged as `observed` — serve saw the step settle, not who settled it
 * (agy's step records the answer, not its author) — never as `tui`; and an
 * answer serve delivered itself says who gave it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { readAuditLog } from "../../src/audit/index.js";
import { AgySession } from "../../src/session/index.js";
import { join } from "node:path";
import { startServeWorld, type ServeWorld } from "./support/serve-world.js";
import { until } from "../support/until.js";

let world: ServeWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

interface Pending {
  interactionId: string;
}

async function onePending(w: ServeWorld, what: string): Promise<Pending> {
  return until(
    async () => {
      const list = ((await (await w.api(`/v1/sessions/${w.conversationId}/pending`)).json()) as { pending: Pending[] }).pending;
      return list.length === 1 ? list[0] : undefined;
    },
    what,
    { ms: 30_000, everyMs: 100, seen: () => w.stderr().slice(-2000) },
  );
}

describe("agy-bridge serve's audit log", { timeout: 120_000 }, () => {
  it("records another client's RPC answer as observed, and its own bot's answer as http:default", async () => {
    world = await startServeWorld();
    const w = world;
    const audit = join(w.stateDir, "agy-bridge", "audit.jsonl");
    const turn = async (text: string) => {
      const answer = await w.api(`/v1/sessions/${w.conversationId}/turns`, { method: "POST", body: JSON.stringify({ text }) });
      expect(await answer.json(), w.stderr()).toMatchObject({ result: "delivered" });
    };

    await turn("Run pwd");
    const first = await onePending(w, "the pwd request, open in serve");
    // Another process answers over agy's RPC, as `agy-bridge approve` or another bot would.
    const other = await AgySession.attach({ conversationId: w.conversationId, follow: false });
    try {
      expect((await other.approve(first.interactionId)).result).toBe("delivered");
    } finally {
      await other.close();
    }
    await until(
      async () => (await readAuditLog(audit)).records.some((r) => r.interactionId === first.interactionId),
      "serve to record the answer it saw given elsewhere",
      { ms: 30_000, everyMs: 100, seen: () => w.stderr().slice(-2000) },
    );
    await until(
      async () => ((await (await w.api(`/v1/sessions/${w.conversationId}/pending`)).json()) as { pending: Pending[] }).pending.length === 0,
      "no request left open",
      {
        ms: 30_000,
        everyMs: 100,
      },
    );

    await turn("Delete the build directory");
    const second = await onePending(w, "the rm request, open in serve");
    const deny = await w.api(`/v1/sessions/${w.conversationId}/interactions/${second.interactionId}`, {
      method: "POST",
      body: JSON.stringify({ action: "deny" }),
    });
    expect(await deny.json()).toMatchObject({ result: "delivered" });

    const records = await until(
      async () => {
        // serve follows every agy on the machine: other tests' conversations may be logged too.
        const ours = (await readAuditLog(audit)).records.filter((r) => r.conversationId === w.conversationId);
        return ours.length >= 2 ? ours : undefined;
      },
      "two audit records",
      { ms: 30_000, everyMs: 100 },
    );
    expect(records.map((r) => [r.interactionId, r.decision, r.decidedBy, r.delivery, r.request.commandLine])).toEqual([
      [first.interactionId, "approve", "observed", "observed", "pwd"],
      [second.interactionId, "deny", "http:default", "delivered", "rm -rf build"],
    ]);
  });
});
