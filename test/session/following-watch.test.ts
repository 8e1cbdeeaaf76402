import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { MapperEventSchema, type MapperEvent } from "../../src/mapper/index.js";
import { startSimServer, type SimServer } from "../../src/sim/index.js";
import { startMain, type StartedCli } from "../support/cli-io.js";
import { firstLine } from "../support/first-line.js";
import { until } from "../support/until.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The exit code, or a failure saying what the command printed when it does not exit in time. */
async function exitOf(run: StartedCli, what: string, ms = 15_000): Promise<number> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not exit within ${ms} ms; stderr: ${run.stderr()} stdout: ${run.stdout()}`)), ms);
  });
  try {
    return await Promise.race([run.code, late]);
  } finally {
    clearTimeout(timer);
  }
}

function events(stdout: string): MapperEvent[] {
  return stdout
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => MapperEventSchema.parse(JSON.parse(l)));
}

/** A simulator whose conversation has one finished turn. */
async function simWithATurn(): Promise<SimServer> {
  const sim = await startSimServer({ speed: 0.05 });
  sim.engine.tuiPort().submitTurn("Say hello in one short sentence.");
  await sim.engine.conversation(sim.engine.activeConversationId)!.whenIdle();
  return sim;
}

describe("agy-bridge watch: history, live and the end of agy", () => {
  it("exits 1 with one sentence when the agy it watches is killed", async () => {
    const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "src/cli/bin.ts", "sim", "--headless", "--speed", "0.05"], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const info = JSON.parse(await firstLine(child.stdout!, "the simulator", 20_000)) as { conversationId: string; plainUrl: string };
      const watch = startMain(["watch", "--url", info.plainUrl, "--conversation", info.conversationId]);
      await until(() => watch.stderr().includes("following"), "watch to attach", { everyMs: 20, seen: watch.stderr });
      child.kill("SIGKILL");
      expect(await exitOf(watch, "watch after its agy was killed")).toBe(1);
      const last = watch.stderr().trim().split("\n").at(-1)!;
      expect(last).toBe(
        `agy-bridge watch: agy's language server at ${info.plainUrl} is gone (it stopped answering; agy has probably exited): start agy and run watch again`,
      );
    } finally {
      child.kill("SIGKILL");
    }
  }, 40_000);

  it("starts from now with --until-idle: a turn that ended before is not the end it waits for", async () => {
    const sim = await simWithATurn();
    try {
      const watch = startMain(["watch", "--url", sim.plainUrl, "--conversation", sim.engine.activeConversationId, "--json", "--until-idle"]);
      await until(() => watch.stdout().includes("history_end"), "history_end", { everyMs: 20, seen: watch.stdout });
      sim.engine.tuiPort().submitTurn("Write a long essay about tmux");
      expect(await exitOf(watch, "watch --until-idle")).toBe(0);
      const seen = events(watch.stdout());
      expect(seen[0]).toMatchObject({ type: "history_end" });
      expect(seen.filter((e) => e.type === "user_message").map((e) => (e as { text: string }).text)).toEqual(["Write a long essay about tmux"]);
      expect(seen.at(-1)).toMatchObject({ type: "status", status: "idle", reason: "turn_completed" });
    } finally {
      await sim.close();
    }
  });

  it("prints the history first with --until-idle --from-start, and still waits for a live turn's end", async () => {
    const sim = await simWithATurn();
    try {
      const watch = startMain(["watch", "--url", sim.plainUrl, "--conversation", sim.engine.activeConversationId, "--json", "--until-idle", "--from-start"]);
      await until(() => watch.stdout().includes("history_end"), "history_end", { everyMs: 20, seen: watch.stdout });
      sim.engine.tuiPort().submitTurn("Write a long essay about tmux");
      expect(await exitOf(watch, "watch --until-idle --from-start")).toBe(0);
      const seen = events(watch.stdout());
      const boundary = seen.findIndex((e) => e.type === "history_end");
      const texts = (list: MapperEvent[]) => list.filter((e) => e.type === "user_message").map((e) => (e as { text: string }).text);
      expect(texts(seen.slice(0, boundary))).toEqual(["Say hello in one short sentence."]);
      expect(seen.slice(0, boundary).some((e) => e.type === "status" && e.status === "idle")).toBe(true);
      expect(texts(seen.slice(boundary + 1))).toEqual(["Write a long essay about tmux"]);
      expect(seen.at(-1)).toMatchObject({ type: "status", status: "idle" });
    } finally {
      await sim.close();
    }
  });

  it("prints the line that marks the live part after the history", async () => {
    const sim = await simWithATurn();
    try {
      const watch = startMain(["watch", "--url", sim.plainUrl, "--conversation", sim.engine.activeConversationId]);
      await until(() => watch.stderr().includes("following"), "the following line", { everyMs: 20, seen: watch.stderr });
      watch.abort();
      expect(await exitOf(watch, "watch after Ctrl-C")).toBe(0);
      const lines = watch.stderr().split("\n");
      const following = lines.findIndex((l) => l.startsWith("agy-bridge watch: following "));
      const user = lines.findIndex((l) => l.includes("> user: Say hello in one short sentence."));
      expect(user).toBeGreaterThanOrEqual(0);
      expect(following).toBeGreaterThan(user);
    } finally {
      await sim.close();
    }
  });
});
