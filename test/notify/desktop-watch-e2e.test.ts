/**
 * `agy-bridge watch --notify-desktop` end to end: the simulator as agy's
 * language server on loopback, watch as a real process (through tsx, as
 * bin.ts runs) on a private `dbus-daemon` session bus with a stand-in
 * notification server. A waiting permission becomes an alert with the
 * command and Approve / Deny; a press answers agy over RPC exactly once; an
 * answer given elsewhere withdraws the alert.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MapperEventSchema, type MapperEvent } from "../../src/mapper/index.js";
import { startSimServer, type SimServer } from "../../src/sim/index.js";
import { runMain } from "../support/cli-io.js";
import { until } from "../support/until.js";
import { startNotificationsStandIn, startPrivateBus, type NotificationsStandIn, type PrivateBus } from "./support/dbus-session.js";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = resolve(ROOT, "src/cli/bin.ts");

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

interface WatchProcess {
  events(): MapperEvent[];
  stderr(): string;
}

function startWatch(sim: SimServer, conversationId: string, busAddress: string, extra: string[] = []): WatchProcess {
  const env: NodeJS.ProcessEnv = { ...process.env, DBUS_SESSION_BUS_ADDRESS: busAddress };
  delete env["TMUX"];
  const child = spawn(
    process.execPath,
    ["--import", "tsx", BIN, "watch", "--url", sim.plainUrl, "--conversation", conversationId, "--json", "--notify-desktop", ...extra],
    { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
  child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  cleanup.push(async () => {
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  });
  return {
    events: () =>
      stdout
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => MapperEventSchema.parse(JSON.parse(l))),
    stderr: () => stderr,
  };
}

async function world(options: { capabilities?: string[]; watchArgs?: string[] } = {}) {
  const bus: PrivateBus = await startPrivateBus();
  cleanup.push(() => bus.close());
  const server: NotificationsStandIn = await startNotificationsStandIn(bus.address, options);
  cleanup.push(() => server.close());
  // 1.2 names the workspace in GetConversationMetadata (1.0.10 does not).
  const sim = await startSimServer({ speed: 0.05, agyVersion: "1.2" });
  cleanup.push(() => sim.close());
  const conversationId = sim.engine.activeConversationId;
  const conv = sim.engine.conversation(conversationId)!;
  // Every answer that reaches the simulated agy over RPC.
  const deliveries: unknown[] = [];
  const deliver = conv.deliver.bind(conv);
  conv.deliver = (index, interaction) => {
    deliveries.push(interaction);
    return deliver(index, interaction);
  };
  const watch = startWatch(sim, conversationId, bus.address, options.watchArgs);
  await until(() => watch.events().some((e) => e.type === "history_end"), "watch to attach", { ms: 60_000, everyMs: 50, seen: watch.stderr });
  return { bus, server, sim, conversationId, conv, deliveries, watch };
}

const resolvedOf = (watch: WatchProcess) =>
  watch.events().filter((e): e is Extract<MapperEvent, { type: "interaction_resolved" }> => e.type === "interaction_resolved");

describe("watch --notify-desktop", { timeout: 120_000 }, () => {
  it("alerts a waiting command with Approve / Deny, and a press approves it over RPC exactly once", async () => {
    const w = await world();
    expect(w.watch.stderr()).toContain("agy-bridge watch: desktop alerts go to stand-in (with Approve / Deny)");
    w.sim.engine.tuiPort().submitTurn("Run pwd");
    const shown = await w.server.untilNotified((n) => n.body.includes("pwd"), "the alert for pwd", 60_000);
    expect(shown.summary).toBe(`agy ${w.conversationId.slice(0, 8)} in project: permission`);
    expect(shown.actions).toEqual(["approve", "Approve", "deny", "Deny"]);
    // Two presses (a double click, a server that repeats itself): one answer.
    w.server.invoke(shown.id, "approve");
    w.server.invoke(shown.id, "approve");
    await until(() => resolvedOf(w.watch).length === 1, "the approval", { ms: 30_000, seen: w.watch.stderr });
    expect(resolvedOf(w.watch)[0]).toMatchObject({ outcome: "approved", decidedBy: "desktop" });
    // The resolution withdraws the alert; by then both presses were read.
    await until(() => w.server.closed.includes(shown.id), "the alert withdrawn", { ms: 30_000, seen: () => JSON.stringify(w.server.calls) });
    await w.conv.whenIdle();
    expect(w.deliveries).toHaveLength(1);
    expect(w.deliveries[0]).toMatchObject({ permission: { allow: true } });
  });

  it("never alerts a request the policy decided, and alerts the one it left to a person", async () => {
    const dir = await mkdtemp(join(tmpdir(), "agyb-desktop-policy-"));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const policy = join(dir, "policy.yaml");
    await writeFile(policy, 'version: 1\ndefault: ask\nrules:\n  - id: read-only\n    kind: command\n    commands: ["pwd"]\n    action: approve\n');
    const w = await world({ watchArgs: ["--policy", policy, "--audit-file", join(dir, "audit.jsonl")] });
    w.sim.engine.tuiPort().submitTurn("Run pwd");
    await until(() => resolvedOf(w.watch).length === 1, "the policy's approval", { ms: 30_000, seen: w.watch.stderr });
    expect(resolvedOf(w.watch)[0]).toMatchObject({ decidedBy: "policy:read-only" });
    await w.conv.whenIdle();
    w.sim.engine.tuiPort().submitTurn("Delete the build directory");
    const asked = await w.server.untilNotified(() => true, "the alert for the ask", 60_000);
    expect(asked.body).toContain("rm -rf build");
    // The approved request came first and was never shown.
    expect(w.server.notified.map((n) => n.body.split("\n")[0])).toEqual(["rm -rf build"]);
  });

  it("withdraws the alert when the request is answered with agy-bridge approve", async () => {
    const w = await world();
    w.sim.engine.tuiPort().submitTurn("Run pwd");
    const shown = await w.server.untilNotified((n) => n.body.includes("pwd"), "the alert for pwd", 60_000);
    const approve = await runMain(["approve", "--url", w.sim.plainUrl, "--conversation", w.conversationId, "--json"]);
    expect(approve.code, approve.stderr).toBe(0);
    await until(() => w.server.closed.includes(shown.id), "CloseNotification for the alert", {
      ms: 30_000,
      seen: () => `${JSON.stringify(w.server.calls)}; watch: ${w.watch.stderr()}`,
    });
    expect(w.server.closed).toEqual([shown.id]);
    expect(resolvedOf(w.watch)[0]).toMatchObject({ outcome: "approved" });
  });

  it("offers no buttons when the notification server has no actions, and says how to answer", async () => {
    const w = await world({ capabilities: ["body"] });
    expect(w.watch.stderr()).toContain("desktop alerts go to stand-in (without buttons: answer in agy's TUI or with approve / deny)");
    w.sim.engine.tuiPort().submitTurn("Run pwd");
    const shown = await w.server.untilNotified((n) => n.body.includes("pwd"), "the alert for pwd", 60_000);
    expect(shown.actions).toEqual([]);
    expect(shown.body).toBe(`pwd\nRunning pwd command\n\nApprove or deny it in agy's TUI or with: agy-bridge approve --conversation ${w.conversationId}`);
  });
});

describe("watch --notify-desktop where there can be no alerts", { timeout: 60_000 }, () => {
  it("exits 2 with what to set when there is no session bus address", async () => {
    const result = await runMain(["watch", "--url", "http://127.0.0.1:9", "--notify-desktop"], { env: {} });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      "agy-bridge watch: --notify-desktop needs your desktop session's bus, and DBUS_SESSION_BUS_ADDRESS is not set: run it from a terminal of your desktop session, or set it (usually unix:path=/run/user/$(id -u)/bus)\n",
    );
  });

  it("exits 1 before attaching when no notification server is on the bus", async () => {
    const bus = await startPrivateBus();
    cleanup.push(() => bus.close());
    const result = await runMain(["watch", "--url", "http://127.0.0.1:9", "--notify-desktop"], { env: { DBUS_SESSION_BUS_ADDRESS: bus.address } });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^agy-bridge watch: no notification server is on the session bus \(nothing owns org\.freedesktop\.Notifications\)/);
  });
});
