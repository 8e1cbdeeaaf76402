/**
 * `serve`'s session list says which agy each session runs, as the session
 * read it off the process (spike-notes §14 #2, #12): the simulator running
 * as agy in a real tmux pane, found by discovery, listed by GET /v1/sessions.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startServeWorld, type ServeWorld } from "./support/serve-world.js";
import { until } from "../support/until.js";

let world: ServeWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe("agy's version in serve's session list", { timeout: 120_000 }, () => {
  it("lists agyVersion and simulator for the simulated agy it found", async () => {
    world = await startServeWorld();
    const w = world;
    const listed = await until(
      async () => {
        const body = (await (await w.api("/v1/sessions")).json()) as { sessions: Array<Record<string, unknown>> };
        return body.sessions.find((s) => s["conversationId"] === w.conversationId);
      },
      "the session in GET /v1/sessions",
      { ms: 30_000, everyMs: 100, seen: () => w.stderr() },
    );
    // `sim --as-agy` plays agy 1.0.10 unless told otherwise, and says so in its children's environment.
    expect(listed).toMatchObject({ conversationId: w.conversationId, agyVersion: "1.0.10", simulator: true });
  });
});
