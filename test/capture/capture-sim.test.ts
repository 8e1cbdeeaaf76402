/**
 * `agy-bridge capture` against the simulator playing agy in a real tmux pane
 * (each test its own simulator, tmux session and directory): the 1.0.10
 * persona over TLS without a token, the 1.2 persona found by discovery with
 * both listeners and a token; a raw recording and its redaction map to the
 * same events and read to the same screens; and the round trip capture →
 * `sim --replay` → capture again gives the same events and screen models.
 */
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { createCaptureSink } from "../../src/capture/capture-sink.js";
import { createRedactor, type Redactor } from "../../src/capture/redaction/redactor.js";
import { recordCapture } from "../../src/capture/recorder.js";
import { createAgyRpcClient } from "../../src/rpc/client.js";
import { readScreen } from "../../src/tmux/screen-model.js";
import { createTmuxDriver } from "../../src/tmux/tmux-driver.js";
import { startMain } from "../support/cli-io.js";
import { createPrivateTmux, type PrivateTmux } from "../support/tmux-server.js";
import { eventKinds, filesOf, mapDir, redactCopy, screensOf } from "./support/capture-files.js";
import { PANE, startSimPane, type SimPane } from "./support/sim-world.js";
import { until } from "../support/until.js";

const ROOT = resolve(import.meta.dirname, "../..");
let tmux: PrivateTmux;
let sessions = 0;

beforeAll(() => {
  tmux = createPrivateTmux();
});

afterAll(async () => {
  await tmux.kill();
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), "agyb-capture-"));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function session(prefix: string): string {
  sessions += 1;
  const name = `${prefix}${sessions}`;
  onTestFinished(() =>
    tmux.run(["kill-session", "-t", name]).then(
      () => undefined,
      () => undefined,
    ),
  );
  return name;
}

/**
 * Types `Run pwd` and approves its gate in the TUI (Enter on the highlighted
 * `1. Yes`) once the capture in `dir` has recorded the dialog, as a person
 * takes a moment to read it.
 */
async function playGatedTurn(sim: SimPane, dir: string): Promise<void> {
  await sim.typeTurn("Run pwd");
  await tmux.waitForScreen(sim.target, (s) => s.includes("  4. No"), "the command dialog", 20_000);
  await until(
    () => existsSync(join(dir, "screens")) && readdirSync(join(dir, "screens")).some((n) => n.endsWith("-prompt.txt")),
    "the capture to record the dialog",
    { ms: 20_000, everyMs: 50 },
  );
  await tmux.sendKeys(sim.target, "Enter");
}

function captureArgs(dir: string, sim: { target: string }, extra: readonly string[]): string[] {
  return ["capture", "--pane", `=${sim.target}`, "-L", tmux.socketName, "--out", dir, "--until-idle", "--duration", "60s", "--json", ...extra];
}

describe("agy-bridge capture", () => {
  it("records a gated turn of the 1.0.10 persona over TLS without a token: frames, snapshots, summaries, screens, the answer and meta.json", async () => {
    const sim = await startSimPane(tmux, session("p"), ["--speed", "0.5", "--agy-version", "1.0.10"]);
    const id = await sim.conversationId();
    const dir = join(scratch(), "cap");
    const run = startMain(captureArgs(dir, sim, ["--url", sim.tlsUrl, "--conversation", id]));
    await until(() => run.stderr().includes("recording") || run.stderr().includes("agy-bridge capture:"), "the capture to start", { ms: 20_000, everyMs: 50 });
    await playGatedTurn(sim, dir);
    expect(await run.code, run.stderr()).toBe(0);
    const summary = JSON.parse(run.stdout()) as Record<string, unknown>;
    expect(summary).toMatchObject({ dir, answers: 1, ended: "idle" });
    expect(summary.frames as number).toBeGreaterThan(2);
    expect(summary.snapshots as number).toBeGreaterThan(1);
    expect(summary.summaries as number).toBeGreaterThan(1);

    const meta = JSON.parse(readFileSync(join(dir, "meta.json"), "utf8")) as Record<string, unknown>;
    expect(Object.keys(meta).sort()).toEqual(["agyBridgeVersion", "agyVersion", "capturedAt", "conversationId", "listeners", "platform"]);
    expect(meta).toMatchObject({ agyVersion: null, listeners: [{ role: "rpc", transport: "tls", port: Number(new URL(sim.tlsUrl).port) }] });
    expect(meta.conversationId).toMatch(/^00000000-0000-4000-8000-[0-9a-f]{12}$/);
    expect(new Date(meta.capturedAt as string).toISOString()).toBe(meta.capturedAt);

    const screens = screensOf(dir);
    for (const screen of screens) expect((screen.shape as { state: string }).state, screen.name).toBe(screen.state);
    const states = screens.map((s) => s.state);
    expect(states).toContain("prompt");
    expect(states[states.length - 1]).toBe("ready");

    const answers = readFileSync(join(dir, "answers.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatchObject({ kind: "permission", outcome: "approved" });

    const events = await mapDir(dir);
    expect(eventKinds(events).filter((k) => !k.startsWith("message_delta") && !k.startsWith("status"))).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^user_message/),
        expect.stringMatching(/^interaction_requested@/),
        expect.stringMatching(/^interaction_resolved@/),
        expect.stringMatching(/^function_call_output@/),
        expect.stringMatching(/^message@/),
      ]),
    );
    expect(events.find((e) => e.type === "interaction_resolved")).toMatchObject({ outcome: "approved" });
    expect(new Set(events.map((e) => e.conversationId))).toEqual(new Set([meta.conversationId]));

    const all = [...filesOf(dir).values()].join("\n");
    for (const secret of [id, "/home/sim/project", "pwd", "The current directory"]) expect(all, secret).not.toContain(secret);
  }, 120_000);

  it("finds the 1.2 persona by its pane through discovery, sees both listeners, and writes its CSRF token nowhere", async () => {
    const token = `tok-${randomUUID()}`;
    const cache = scratch();
    const sim = await startSimPane(tmux, session("q"), ["--as-agy", "--agy-version", "1.2", "--speed", "0.5", "--csrf_token", token], {
      token,
      env: { AGY_BRIDGE_CACHE_DIR: cache },
    });
    const id = await sim.conversationId();
    const dir = join(scratch(), "cap");
    const run = startMain(captureArgs(dir, sim, ["--conversation", id]));
    await until(() => run.stderr().includes("recording") || run.stderr().includes("agy-bridge capture:"), "the capture to start", { ms: 40_000, everyMs: 50 });
    expect(run.stderr()).toContain("recording");
    await playGatedTurn(sim, dir);
    expect(await run.code, run.stderr()).toBe(0);
    const meta = JSON.parse(readFileSync(join(dir, "meta.json"), "utf8")) as {
      agyVersion: string | null;
      listeners: Array<{ role: string; transport: string; port: number }>;
    };
    // The version agy names for its children: `sim --as-agy --agy-version 1.2` says cli-1.2 (spike-notes §14 #12).
    expect(meta.agyVersion).toBe("1.2");
    expect(meta.listeners.map((l) => `${l.role}/${l.transport}`).sort()).toEqual(["rpc/plain", "rpc/tls"]);
    const files = filesOf(dir);
    const frames = [...files.entries()]
      .filter(([path]) => path.startsWith("stream/"))
      .map(([, text]) => text)
      .join("\n");
    // Persona 1.2 sends the run status inside mainTrajectoryUpdate too (spike-notes §10.5).
    expect(frames).toMatch(/"mainTrajectoryUpdate":\{"stepsUpdate":\{[^]*?\},"status":"CASCADE_RUN_STATUS_RUNNING"/);
    const all = [...files.values()].join("\n");
    expect(all + run.stdout() + run.stderr()).not.toContain(token);
    expect(all).not.toContain(id);
  }, 120_000);

  it("maps a raw recording and its redaction to the same events in the same order, and reads their screens to the same models", async () => {
    const sim = await startSimPane(tmux, session("r"), ["--speed", "0.5"]);
    const id = await sim.conversationId();
    const base = scratch();
    const identity: Redactor = { json: (v) => v, screen: (s) => s, text: (s) => s, id: (s) => s };
    const client = createAgyRpcClient({ baseUrl: sim.plainUrl });
    onTestFinished(() => client.close());
    const driver = createTmuxDriver({ socket: { name: tmux.socketName } });
    const controller = new AbortController();
    const recording = recordCapture({
      client,
      conversationId: id,
      capturePane: () => driver.capturePane(`=${sim.target}`),
      sink: createCaptureSink(join(base, "raw")),
      redactor: identity,
      clock: {
        now: () => Date.now(),
        sleep: (ms, signal) =>
          new Promise((r) => {
            const t = setTimeout(r, ms);
            signal.addEventListener(
              "abort",
              () => {
                clearTimeout(t);
                r(undefined);
              },
              { once: true },
            );
          }),
      },
      untilIdle: true,
      durationMs: 60_000,
      signal: controller.signal,
      meta: { agyVersion: null, platform: "test", agyBridgeVersion: "test", listeners: [] },
    });
    await until(() => existsSync(join(base, "raw", "screens")) && filesOf(join(base, "raw", "screens")).size > 0, "the first screen", {
      ms: 20_000,
      everyMs: 50,
    });
    await playGatedTurn(sim, join(base, "raw"));
    expect((await recording).ended).toBe("idle");
    redactCopy(join(base, "raw"), join(base, "redacted"), createRedactor({ home: "/home/sim", users: ["sim"] }));

    const raw = await mapDir(join(base, "raw"));
    const redacted = await mapDir(join(base, "redacted"));
    expect(eventKinds(raw)).toContain("function_call_output@" + String(raw.find((e) => e.type === "function_call_output")?.stepIndex));
    expect(eventKinds(redacted).join("\n")).toEqual(eventKinds(raw).join("\n"));
    const rawScreens = screensOf(join(base, "raw"));
    expect(rawScreens.length).toBeGreaterThan(2);
    expect(screensOf(join(base, "redacted"))).toEqual(rawScreens);
    const redactedText = [...filesOf(join(base, "redacted")).values()].join("\n");
    expect(redactedText).not.toContain(id);
    expect(redactedText).not.toContain("/home/sim/project");
  }, 120_000);

  it("replays a capture with `sim --replay` so that capturing the replay gives the same events and screen models", async () => {
    const sim = await startSimPane(tmux, session("s"), ["--speed", "0.5"]);
    const id = await sim.conversationId();
    const base = scratch();
    const first = startMain(captureArgs(join(base, "first"), sim, ["--url", sim.plainUrl, "--conversation", id]));
    await until(() => first.stderr().includes("recording") || first.stderr().includes("agy-bridge capture:"), "the first capture to start", {
      ms: 20_000,
      everyMs: 50,
    });
    await playGatedTurn(sim, join(base, "first"));
    expect(await first.code, first.stderr()).toBe(0);
    const meta = JSON.parse(readFileSync(join(base, "first", "meta.json"), "utf8")) as { conversationId: string };

    const replay = session("t");
    const infoFile = join(base, "replay-stderr.txt");
    await tmux.newSession(
      replay,
      [
        process.execPath,
        "--import",
        "tsx",
        join(ROOT, "test/capture/support/replay-entry.ts"),
        infoFile,
        "sim",
        "--replay",
        join(base, "first"),
        "--speed",
        "5",
      ],
      { cwd: ROOT, ...PANE },
    );
    const plainUrl = await until(
      () => (existsSync(infoFile) ? /http:\/\/127\.0\.0\.1:\d+/.exec(readFileSync(infoFile, "utf8"))?.[0] : undefined),
      "the replay's URLs",
      { ms: 30_000, everyMs: 50 },
    );
    const second = startMain(captureArgs(join(base, "second"), { target: replay }, ["--url", plainUrl, "--conversation", meta.conversationId]));
    expect(await second.code, second.stderr()).toBe(0);
    expect(JSON.parse(second.stdout())).toMatchObject({ ended: "idle" });

    const firstEvents = eventKinds(await mapDir(join(base, "first")));
    expect(firstEvents.some((k) => k.startsWith("interaction_resolved@"))).toBe(true);
    expect(eventKinds(await mapDir(join(base, "second")))).toEqual(firstEvents);
    const models = (dir: string) =>
      screensOf(dir)
        .map((s) => s.shape)
        .filter((shape, i, all) => i === 0 || JSON.stringify(shape) !== JSON.stringify(all[i - 1]));
    const names = (dir: string) =>
      screensOf(dir)
        .map((s) => s.name)
        .join(" ");
    expect(models(join(base, "second")), `${names(join(base, "first"))} | ${names(join(base, "second"))}`).toEqual(models(join(base, "first")));
    expect(readScreen(readFileSync(join(base, "second", "screens", screensOf(join(base, "second")).at(-1)!.name), "utf8")).state).toBe("ready");
  }, 150_000);
});
