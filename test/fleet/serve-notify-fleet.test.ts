/**
 * Notifications of `serve --redis`: the dispatcher tells a person about what
 * was open when the history was read, and about later requests, only after
 * the session's `history_end` — which the relay does not publish, so a fleet
 * session's log records where its history ends and the dispatcher is told
 * there. A request open on host B before serve started is noticed once; one
 * that arrives later is noticed too. Real Redis on a private port, a relay
 * and a simulated agy, a real `serve --redis` process, a webhook receiver on
 * loopback.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startServeProcess } from "../server/support/serve-process.js";
import { startRecordingServer, type Recorded } from "../notify/support/recording-server.js";
import { startRelayWorld } from "./support/relay-world.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

interface Hook {
  type: string;
  conversationId: string;
  interactionId: string;
  request: { target?: string };
}
const hookOf = (r: Recorded) => JSON.parse(r.body.toString("utf8")) as Hook;

describe("serve --redis notifications", { timeout: 120_000 }, () => {
  it("notices a request open before serve started once, after its history, and a later one live", async () => {
    const w = await startRelayWorld();
    cleanups.push(() => w.close());
    await w.startRelay();
    const dir = await mkdtemp(join(tmpdir(), "agyb-fleet-notify-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const hook = await startRecordingServer(() => ({ status: 204 }));
    cleanups.push(() => hook.close());
    await writeFile(join(dir, "secret"), "fleet-notify-secret\n");
    const ours = (requests: Recorded[]) => requests.map(hookOf).filter((h) => h.conversationId === w.conversationId);

    // Open on host B before serve starts: part of the history serve reads.
    w.sim.engine.tuiPort().submitTurn("Run pwd");
    const open = await w.waitForEvent((e) => e["type"] === "interaction_requested", "the pwd request in the stream");
    const openId = (JSON.parse(open.fields["event"]!) as { interactionId: string }).interactionId;

    const serve = await startServeProcess({
      configHome: dir,
      args: ["--redis", w.redis.url, "--refresh-ms", "200", "--notify-webhook", `${hook.url}/agy`, "--notify-webhook-secret-file", join(dir, "secret")],
    });
    cleanups.push(() => serve.stop());
    await hook.until((r) => ours(r).some((h) => h.type === "interaction.pending" && h.interactionId === openId), "the notice of the request open at start");
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${serve.url}${path}`, { ...init, headers: { authorization: `Bearer ${serve.token}`, "content-type": "application/json" } });
    const answered = await api(`/v1/sessions/${w.conversationId}/interactions/${openId}`, { method: "POST", body: JSON.stringify({ action: "approve" }) });
    expect(answered.status).toBe(200);
    await hook.until(
      (r) => ours(r).some((h) => h.type === "interaction.resolved" && h.interactionId === openId),
      "the resolution of the request open at start",
    );

    // A request that arrives live.
    await w.waitForEvent((e) => e["type"] === "status" && e["reason"] === "turn_completed", "the end of the pwd turn");
    w.sim.engine.tuiPort().submitTurn("Run pwd");
    const live = await w.waitForEvent(
      (e) => e["type"] === "interaction_requested" && (e["interactionId"] as string) !== openId,
      "the second pwd request in the stream",
    );
    const liveId = (JSON.parse(live.fields["event"]!) as { interactionId: string }).interactionId;
    await hook.until((r) => ours(r).some((h) => h.type === "interaction.pending" && h.interactionId === liveId), "the notice of the live request");
    expect(
      ours(hook.requests)
        .filter((h) => h.type === "interaction.pending")
        .map((h) => h.interactionId),
    ).toEqual([openId, liveId]);
  });
});
