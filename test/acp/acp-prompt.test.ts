/**
 * `agy-bridge acp` end to end: the SDK's own client on a real stdio pipe,
 * the simulator as agy in a private tmux server, found by discovery; and
 * the command's own arguments.
 */
import { afterEach, describe, expect, it } from "vitest";
import { runMain } from "../support/cli-io.js";
import { startAcpWorld, type AcpWorld } from "./support/acp-world.js";
import { join, prompt } from "./support/join.js";

let world: AcpWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe("agy-bridge acp", { timeout: 120_000 }, () => {
  it("joins the only attended session, types the prompt into agy's TUI, streams the answer and ends the turn", async () => {
    world = await startAcpWorld();
    const w = world;
    const sessionId = await join(w);
    const response = await prompt(w, sessionId, "Say hello in one short sentence.");
    expect(response.stopReason, w.stderr()).toBe("end_turn");
    const chunks = w.updates.filter((n) => n.update.sessionUpdate === "agent_message_chunk");
    expect(chunks.length).toBeGreaterThan(1);
    expect(w.text("agent_message_chunk")).toMatch(/hello/i);
    // The editor's own prompt is not echoed back to it.
    expect(w.text("user_message_chunk")).toBe("");
    expect(w.updates.every((n) => n.sessionId === sessionId)).toBe(true);
    await w.tmux.waitForScreen("agy", (s) => s.includes("> Say hello in one short sentence."), "the prompt in agy's transcript");
    // Nothing went wrong: the only lines are -L's note of other agy on this machine (other tests' simulators), once each.
    const lines = w
      .stderr()
      .split("\n")
      .filter((line) => line !== "");
    expect(lines.filter((line) => !/^agy-bridge acp: left out agy \(pid \d+\): it runs in no pane of the tmux server -L /.test(line))).toEqual([]);
    expect(new Set(lines).size).toBe(lines.length);
  });

  it("refuses bad arguments as usage errors, never repeating a value", async () => {
    const cases: Array<[string[], string]> = [
      [["--pane", "not a pane"], "--pane must be a pane id like %3"],
      [["-L", "a", "-S", "/tmp/b"], "give -L or -S, not both"],
      [["--workspace", "/w"], "--workspace goes with --policy"],
      [["--conversation", ""], "--conversation needs a non-empty value"],
      [["--url", "secret-not-a-url"], "--url does not parse as a URL"],
    ];
    for (const [argv, message] of cases) {
      const run = await runMain(["acp", ...argv]);
      expect([argv, run.code, run.stdout]).toEqual([argv, 2, ""]);
      expect(run.stderr).toContain(`agy-bridge acp: ${message}`);
      expect(run.stderr).not.toContain("secret-not-a-url");
    }
    const help = await runMain(["acp", "--help"]);
    expect([help.code, help.stdout]).toEqual([0, expect.stringContaining("Usage: agy-bridge acp")]);
  });

  it("fails to start with an unreadable policy, saying so on stderr", async () => {
    const run = await runMain(["acp", "--policy", "/nonexistent/policy.yaml"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("the policy file does not exist");
  });
});
