/**
 * The CLI a person meets: `--version`, enum-like flags checked before
 * anything is sent, the answering commands pointing at the right one, JSON
 * results where `--json` was asked for, panes named with their tmux server,
 * times people read, and tool output and outcomes as words.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { permissionScope, PERMISSION_SCOPES } from "../../src/cli/approve-command.js";
import { formatEvent } from "../../src/cli/event-text.js";
import { createSessionsCommand } from "../../src/cli/sessions-command.js";
import type { DiscoveredServer } from "../../src/discovery/index.js";
import type { MapperEvent } from "../../src/mapper/index.js";
import { startSimServer } from "../../src/sim/index.js";
import { runCommand, runMain } from "../support/cli-io.js";
import { startLoopbackServer } from "../support/loopback-server.js";
import { until } from "../support/until.js";

const TOKEN = "5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d";
const VERSION = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

describe("agy-bridge --version", () => {
  it("prints the package's version on stdout for --version and -V, exit 0", async () => {
    for (const flag of ["--version", "-V"]) {
      const result = await runMain([flag]);
      expect(result).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: "" });
    }
  });
});

describe("approve --scope", () => {
  it("refuses an unknown scope with exit 2 and the valid values, before any request is sent", async () => {
    let requests = 0;
    const server = await startLoopbackServer({
      kind: "http1",
      handler: ({ res }) => {
        requests += 1;
        res.writeHead(500);
        res.end();
      },
    });
    try {
      const result = await runMain(["approve", "--url", server.url, "--conversation", "c0ffee00-0000-4000-8000-000000000000", "--scope", "bogus"]);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        "agy-bridge approve: --scope takes one of once, conversation, workspace, global, project (or the full name, e.g. PERMISSION_SCOPE_ONCE); run `agy-bridge approve --help`\n",
      );
      expect(requests).toBe(0);
    } finally {
      await server.close();
    }
  });

  it("takes a scope by its last word in any case, or by agy's full name", () => {
    expect(permissionScope("conversation")).toBe("PERMISSION_SCOPE_CONVERSATION");
    expect(permissionScope("Workspace")).toBe("PERMISSION_SCOPE_WORKSPACE");
    for (const scope of PERMISSION_SCOPES) expect(permissionScope(scope)).toBe(scope);
    expect(() => permissionScope("PERMISSION_SCOPE_FOREVER")).toThrow(/--scope takes one of/);
  });
});

describe("approve and answer when the other kind waits", () => {
  it("approve --json with only a question pending prints a JSON result and points to answer; answer delivers it", async () => {
    const sim = await startSimServer({ speed: 0.05, csrfToken: TOKEN });
    try {
      const conn = ["--url", sim.tlsUrl, "--csrf-token", TOKEN, "--conversation", sim.engine.activeConversationId];
      const conv = sim.engine.conversation(sim.engine.activeConversationId);
      sim.engine.tuiPort().submitTurn("Help me start a project");
      const step = await until(() => conv?.waitingIndices()[0], "the question", { ms: 10_000, everyMs: 20 });
      const approve = await runMain(["approve", ...conn, "--json"]);
      expect(approve.code).toBe(1);
      const result = JSON.parse(approve.stdout) as { result: string; pending: Array<{ interactionId: string; kind: string; stepIndex: number }> };
      expect(result).toMatchObject({ result: "none_pending", pending: [{ kind: "question", stepIndex: step }] });
      expect(approve.stderr).toContain("no permission is pending in this conversation; a question waits, ");
      expect(approve.stderr).toContain("answer it with `agy-bridge answer --option ID` or decline it with `agy-bridge deny`");
      const answer = await runMain(["answer", ...conn, "--option", "1", "--json"]);
      expect(JSON.parse(answer.stdout)).toMatchObject({ result: "delivered", interactionId: result.pending[0]?.interactionId });
      const none = await runMain(["approve", ...conn, "--json"]);
      expect(JSON.parse(none.stdout)).toEqual({ result: "none_pending", pending: [] });
      expect(none.stderr).toBe("agy-bridge approve: no permission is pending in this conversation\n");
    } finally {
      await sim.close();
    }
  });
});

describe("sessions", () => {
  const server: DiscoveredServer = {
    pid: 4321,
    executable: "/usr/local/bin/agy",
    url: "https://127.0.0.1:40001",
    listeners: [],
    csrfTokenPresent: true,
    conversations: [{ conversationId: "2399249c-0000-4000-8000-000000000000", waitingSteps: [], lastUserInputTime: "2026-03-01T08:00:00.987654321Z" }],
    tmuxPane: "%3",
  };
  const discover = async () => ({ servers: [server], steps: [], parents: new Map<number, number>() });

  it("names the pane with the tmux server it was matched on, so it can be passed to --pane as shown", async () => {
    const named = await runCommand(createSessionsCommand({ discover }), ["-L", "work"]);
    expect(named.stdout).toMatch(/ {2}%3 -L work {2}/);
    const byPath = await runCommand(createSessionsCommand({ discover }), ["-S", "/tmp/tmux-1000/work"]);
    expect(byPath.stdout).toMatch(/ {2}%3 -S \/tmp\/tmux-1000\/work {2}/);
    const plain = await runCommand(createSessionsCommand({ discover }), []);
    expect(plain.stdout).toMatch(/ {2}%3 {2}/);
    expect(JSON.parse((await runCommand(createSessionsCommand({ discover }), ["--json", "-L", "work"])).stdout)[0].tmuxPane).toBe("%3");
  });

  it("prints the last input as UTC to the second and how long ago", async () => {
    const cases: Array<[string, string]> = [
      ["2026-03-01T08:00:30Z", "(just now)"],
      ["2026-03-01T08:42:00Z", "(41 min ago)"],
      ["2026-03-01T11:00:00Z", "(2 h ago)"],
      ["2026-03-03T08:00:00Z", "(1 day ago)"],
    ];
    for (const [now, ago] of cases) {
      const result = await runCommand(createSessionsCommand({ discover, now: () => Date.parse(now) }), []);
      expect(result.stdout).toContain(`2026-03-01 08:00:00Z ${ago}`);
    }
  });
});

describe("watch's lines", () => {
  const step = { conversationId: "c", trajectoryId: "t", stepIndex: 7 } as const;

  it("prints JSON tool output pretty, line by line, and says how many lines were left out", () => {
    const output = JSON.stringify({ files: Array.from({ length: 20 }, (_, i) => `src/file-${i}.ts`) });
    const text = formatEvent({ type: "function_call_output", ...step, callId: "k", name: "list_directory", output, isError: false, stepStatus: "DONE" });
    const lines = (text ?? "").split("\n");
    expect(lines.slice(0, 4)).toEqual(["  tool output (list_directory):", "    {", '      "files": [', '        "src/file-0.ts",']);
    expect(lines).toHaveLength(14);
    expect(lines.at(-1)).toBe("    … 12 more lines (--json has all of it)");
  });

  it("prints pty output as plain lines and a call's arguments as key=value", () => {
    const output = formatEvent({
      type: "function_call_output",
      ...step,
      callId: "k",
      name: "run_command",
      output: "one\r\ntwo\r\n",
      isError: false,
      stepStatus: "DONE",
    });
    expect(output).toBe("  tool output (run_command):\n    one\n    two");
    const call = formatEvent({ type: "function_call", ...step, callId: "k", name: "run_command", arguments: '{"CommandLine":"pwd","WaitMsBeforeAsync":1500}' });
    expect(call).toBe("  tool call run_command CommandLine=pwd WaitMsBeforeAsync=1500");
  });

  it("shows a policy's answer that did not get through, and nothing more for one that did (its decision had its own line)", () => {
    const delivered = (result: "delivered" | "failed" | "already_resolved", reason?: string) =>
      formatEvent({
        type: "policy_delivered",
        ...step,
        interactionId: "int_1",
        decision: "deny",
        rule: "no-delete",
        decidedBy: "policy:no-delete",
        result,
        ...(reason === undefined ? {} : { reason }),
      });
    expect(delivered("delivered")).toBeUndefined();
    expect(delivered("failed", "delivering it failed: unavailable")).toBe(
      "  [policy] step 7: the deny of policy:no-delete was not delivered (failed): delivering it failed: unavailable",
    );
    expect(delivered("already_resolved", "int_1 was already answered (step 7)")).toBe(
      "  [policy] step 7: the deny of policy:no-delete was not delivered (already resolved): int_1 was already answered (step 7)",
    );
  });

  it("says approved, denied, declined, timed out or cancelled for a resolved prompt, and declined for a refused call", () => {
    const resolved = (outcome: string, kind: "permission" | "question") =>
      formatEvent({ type: "interaction_resolved", ...step, interactionId: "int_1", kind, outcome, stepStatus: "DONE" } as MapperEvent);
    expect(resolved("approved", "permission")).toBe("  [resolved] step 7: approved");
    expect(resolved("denied", "permission")).toBe("  [resolved] step 7: denied");
    expect(resolved("denied", "question")).toBe("  [resolved] step 7: declined");
    expect(resolved("answered", "question")).toBe("  [resolved] step 7: answered");
    expect(resolved("timed_out", "question")).toBe("  [resolved] step 7: timed out");
    expect(resolved("cancelled", "permission")).toBe("  [resolved] step 7: cancelled");
    const declined = formatEvent({
      type: "function_call_output",
      ...step,
      callId: "k",
      name: "run_command",
      output: "",
      isError: true,
      declined: true,
      stepStatus: "CANCELED",
    } as MapperEvent);
    expect(declined).toBe("  tool declined (run_command): (empty)");
  });
});
