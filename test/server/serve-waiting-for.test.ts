/**
 * `serve`'s session list says what a waiting session waits for: the
 * simulator running as agy in a real tmux pane, asked through serve to run a
 * command; GET /v1/sessions says `permission` until it is approved.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startServeWorld, type ServeWorld } from "./support/serve-world.js";
import { until } from "../support/until.js";

let world: ServeWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe("waitingFor in serve's session list", { timeout: 120_000 }, () => {
  it("lists permission while agy asks to run a command, and nothing once it is approved", async () => {
    world = await startServeWorld();
    const w = world;
    const ours = async () => {
      const body = (await (await w.api("/v1/sessions")).json()) as { sessions: Array<Record<string, unknown>> };
      return body.sessions.find((s) => s["conversationId"] === w.conversationId);
    };
    await until(ours, "the session in GET /v1/sessions", { ms: 30_000, everyMs: 100, seen: () => w.stderr() });
    const turn = await w.api(`/v1/sessions/${w.conversationId}/turns`, { method: "POST", body: JSON.stringify({ text: "Run pwd" }) });
    expect(await turn.json(), w.stderr()).toMatchObject({ result: "delivered" });

    const waiting = await until(
      async () => {
        const s = await ours();
        return s?.["status"] === "waiting" ? s : undefined;
      },
      "the session to be waiting",
      { ms: 30_000, everyMs: 100, seen: () => w.stderr() },
    );
    expect(waiting).toMatchObject({ status: "waiting", pending: 1, waitingFor: "permission" });

    const pending = (await (await w.api(`/v1/sessions/${w.conversationId}/pending`)).json()) as { pending: Array<{ interactionId: string }> };
    const answer = await w.api(`/v1/sessions/${w.conversationId}/interactions/${pending.pending[0]!.interactionId}`, {
      method: "POST",
      body: JSON.stringify({ action: "approve" }),
    });
    expect(await answer.json(), w.stderr()).toMatchObject({ result: "delivered" });
    const after = await until(
      async () => {
        const s = await ours();
        return s !== undefined && s["status"] !== "waiting" ? s : undefined;
      },
      "the session to stop waiting",
      { ms: 30_000, everyMs: 100, seen: () => w.stderr() },
    );
    expect(Object.hasOwn(after, "waitingFor")).toBe(false);
  });
});
