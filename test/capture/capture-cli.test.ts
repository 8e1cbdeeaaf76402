/**
 * The capture commands' edges, without tmux: `map DIR` on a directory that is
 * not a capture or holds a broken file, `sim --replay` on one that is none,
 * `capture` refusing a non-empty --out and a bad --duration, and a capture
 * with no pane (no screens) from an in-process simulator.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { startSimServer } from "../../src/sim/index.js";
import { runMain, startMain } from "../support/cli-io.js";
import { createAgyRpcClient } from "../../src/rpc/client.js";
import { until } from "../support/until.js";
import { mapDir } from "./support/capture-files.js";

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), "agyb-capture-cli-"));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe("capture, map DIR and sim --replay at their edges", () => {
  it("map refuses a directory that is not a capture, and names the broken file of one that is", async () => {
    const empty = scratch();
    const notCapture = await runMain(["map", empty]);
    expect(notCapture.code).toBe(1);
    expect(notCapture.stdout).toBe("");
    expect(notCapture.stderr).toContain("is a directory but not a capture");

    const broken = scratch();
    mkdirSync(join(broken, "stream"));
    writeFileSync(join(broken, "stream", "0001.ndjson"), '{"t":1,"frame":{"update":{"conversationId":"c"}}}\nnot json\n');
    const result = await runMain(["map", broken]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(join(broken, "stream/0001.ndjson"));
    expect(result.stderr).toContain("line 2 is not JSON");
  });

  it("sim --replay says why a directory cannot be replayed, and refuses --as-agy with it", async () => {
    const empty = scratch();
    const result = await runMain(["sim", "--replay", empty, "--headless"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`cannot replay ${empty}`);
    const usage = await runMain(["sim", "--replay", empty, "--as-agy"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--replay serves a capture");
  });

  it("capture refuses a bad --duration (exit 2) and an --out that already holds files (exit 1), writing nothing", async () => {
    const bad = await runMain(["capture", "--url", "http://127.0.0.1:9", "--conversation", "c", "--duration", "soon"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--duration wants a duration");
    const sim = await startSimServer({ speed: 0 });
    onTestFinished(() => sim.close());
    const out = scratch();
    writeFileSync(join(out, "keep.txt"), "mine");
    const full = await runMain(["capture", "--url", sim.plainUrl, "--conversation", sim.engine.activeConversationId, "--out", out, "--duration", "1s"]);
    expect(full.code).toBe(1);
    expect(full.stderr).toContain("is not empty");
    expect(readdirSync(out)).toEqual(["keep.txt"]);
  });

  it("records without a pane: no screens, the turn's frames and snapshots, and a clean end on --duration", async () => {
    const sim = await startSimServer({ speed: 0.2 });
    onTestFinished(() => sim.close());
    const id = sim.engine.activeConversationId;
    const out = join(scratch(), "cap");
    const run = startMain(["capture", "--url", sim.plainUrl, "--conversation", id, "--out", out, "--duration", "3s", "--json"]);
    await until(() => run.stderr().includes("recording") || run.stderr().includes("agy-bridge capture:"), "the capture to start", { ms: 20_000, everyMs: 50 });
    await until(() => (sim.openStreams(id) > 0 ? true : undefined), "the capture's stream", { ms: 20_000, everyMs: 50 });
    const client = createAgyRpcClient({ baseUrl: sim.plainUrl });
    onTestFinished(() => client.close());
    sim.engine.tuiPort().submitTurn("Say hello in one short sentence.");
    expect(await run.code, run.stderr()).toBe(0);
    expect(run.stderr()).toContain("(no pane: no screens)");
    const summary = JSON.parse(run.stdout()) as { screens: number; frames: number; ended: string };
    expect(summary).toMatchObject({ screens: 0, ended: "duration" });
    expect(readdirSync(join(out, "screens"))).toEqual([]);
    const kinds = (await mapDir(out)).map((e) => e.type);
    expect(kinds).toContain("user_message");
    expect(kinds).toContain("message");
  }, 30_000);
});
