/**
 * `watch` says which agy it follows in its first status: the human line
 * ("following … ; agy 1.2 …") and, with --json, the `history_end` event's
 * `agyVersion` — against a real simulated agy (`sim --as-agy --agy-version
 * 1.2`), found by discovery (spike-notes §14 #2, #12).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMain } from "../support/cli-io.js";
import { formatEvent } from "../../src/cli/event-text.js";
import { until } from "../support/until.js";
import { startSimAsAgy, tempCache, type AgyProcess } from "../discovery/support/agy-process.js";

let cache: ReturnType<typeof tempCache>;
let agy: AgyProcess;

beforeAll(async () => {
  cache = tempCache();
  agy = await startSimAsAgy(cache.dir, "tok-watch-version", ["--agy-version", "1.2", "--speed", "0"]);
}, 60_000);

afterAll(async () => {
  await agy?.stop();
  cache?.remove();
});

// Unscoped discovery (watch finds the owner of the conversation among every agy on the machine) can be slow on a busy host.
describe("watch's first status names agy's version", { timeout: 60_000 }, () => {
  it("prints agy's version on the following line and on history_end with --json", async () => {
    const watch = startMain(["watch", "--conversation", agy.info.conversationId, "--json"]);
    try {
      const end = await until(
        () =>
          watch
            .stdout()
            .split("\n")
            .filter((l) => l !== "")
            .map((l) => JSON.parse(l) as { type: string; agyVersion?: unknown })
            .find((e) => e.type === "history_end"),
        "history_end on stdout",
        { ms: 30_000, seen: () => `stdout: ${watch.stdout()} stderr: ${watch.stderr()}` },
      );
      expect(end).toEqual({ type: "history_end", conversationId: agy.info.conversationId, agyVersion: "1.2" });
      await until(() => watch.stderr().includes("following"), "the following line", { ms: 30_000, seen: () => watch.stderr() });
      expect(watch.stderr()).toContain(`following ${agy.info.conversationId}`);
      expect(watch.stderr()).toContain("; agy 1.2 (agy-bridge's simulator); Ctrl-C to stop");
      expect(watch.stdout() + watch.stderr()).not.toContain("tok-watch-version");
    } finally {
      watch.abort();
      expect(await watch.code).toBe(0);
    }
  });

  it("prints a version change as one readable line", () => {
    expect(formatEvent({ type: "agy_version_changed", conversationId: "c", from: "1.2.9", to: "1.2.10", source: "process", pid: 42 })).toBe(
      "  [agy] version 1.2.9 → 1.2.10 (pid 42)",
    );
    expect(formatEvent({ type: "agy_version_changed", conversationId: "c", from: "1.2.9", to: null, source: null })).toBe("  [agy] version 1.2.9 → unknown");
  });
});
