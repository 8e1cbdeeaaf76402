/**
 * Nothing from agy's side reaches a terminal raw: a model's text, a command
 * it wants to run, tool output and a server's error message may carry ESC
 * sequences (CSI, OSC 0 title, OSC 8 link, OSC 52 clipboard), C1 controls,
 * BEL and BS. Every human output path shows them as visible escapes; `--json`
 * keeps them exact. Hostile text comes from the simulator and from raw
 * loopback servers speaking agy's wire.
 */
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createDemoOutput } from "../../src/cli/demo-output.js";
import { createDoctorCommand } from "../../src/cli/doctor-command.js";
import { createSessionsCommand } from "../../src/cli/sessions-command.js";
import { main } from "../../src/cli/main.js";
import { LINE_REDRAW, TERMINAL_STYLE, terminalText } from "../../src/cli/terminal-text.js";
import { discoverServers } from "../../src/discovery/index.js";
import { RpcError } from "../../src/errors.js";
import { createAgyRpcClient } from "../../src/rpc/index.js";
import { MapperEventSchema, type MapperEvent } from "../../src/mapper/index.js";
import { parseScenario, startSimServer, type SimServer } from "../../src/sim/index.js";
import { captureIo, runCommand, runMain, startMain } from "../support/cli-io.js";
import { startLoopbackServer, type LoopbackServer } from "../support/loopback-server.js";
import { createFakeProc } from "../discovery/support/fake-proc.js";
import { until } from "../support/until.js";

const TOKEN = "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b";
/** Title, clipboard and link OSCs, a CSI that hides text, C1 CSI, BEL, BS and CR. */
const HOSTILE =
  "ok\x1b]0;pwned\x07 \x1b]52;c;ZXZpbA==\x07 \x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\ \x1b[8mhidden\x1b[0m \x9b31m c1 \x08\x08 bell\x07 cr\r";

/** Any character a terminal would act on (but tab and line feed). */
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/u;

function hostileScenario() {
  return parseScenario(
    {
      description: "hostile text everywhere a model can put it",
      match: { text: "Be hostile" },
      steps: [
        { kind: "command", commandLine: `echo ${HOSTILE}`, output: `line one ${HOSTILE}\nline two\n` },
        { kind: "planner", text: `The answer ${HOSTILE}` },
      ],
    },
    "hostile.json",
  );
}

async function withHostileSim<T>(body: (sim: SimServer, conn: string[]) => Promise<T>): Promise<T> {
  const sim = await startSimServer({ speed: 0.05, csrfToken: TOKEN, scenarios: [hostileScenario()] });
  try {
    return await body(sim, ["--url", sim.tlsUrl, "--csrf-token", TOKEN, "--conversation", sim.engine.activeConversationId]);
  } finally {
    await sim.close();
  }
}

/** A raw agy-like server: Heartbeat answers, every other method fails with `message` as a Connect error. */
function startFailingAgy(message: string): Promise<LoopbackServer> {
  return startLoopbackServer({
    kind: "http1",
    handler: ({ request, res }) => {
      if (request.rpc === "Heartbeat") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end("{}");
        return;
      }
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ code: "internal", message }));
    },
  });
}

describe("terminal text", () => {
  it("shows every control character as a visible escape and keeps tab, and line feeds only when asked", () => {
    expect(terminalText("a\x1b[2Jb\x07c\x08d\x9be\u202ef\x7fg\th\ni\rj")).toBe("a\\x1b[2Jb\\x07c\\x08d\\x9be\\u202ef\\x7fg\th\\ni\\x0dj");
    expect(terminalText("one\ntwo", { keepNewlines: true })).toBe("one\ntwo");
    expect(terminalText(HOSTILE)).not.toMatch(RAW_CONTROL);
  });
});

describe("an RPC error's sentence", () => {
  it("shows a server's control characters as escapes while serverMessage keeps them exactly", async () => {
    const server = await startFailingAgy(`broke ${HOSTILE}`);
    const client = createAgyRpcClient({ baseUrl: server.url });
    try {
      const error = await client.getAllCascadeTrajectories({}, { timeoutMs: 5_000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RpcError);
      expect((error as RpcError).message).not.toMatch(RAW_CONTROL);
      expect((error as RpcError).message).toContain("broke ok\\x1b]0;pwned\\x07");
      expect((error as RpcError).serverMessage).toBe(`broke ${HOSTILE}`);
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe("human output never passes agy's control characters through", () => {
  it("watch shows the hostile answer, command and tool output escaped, while --json keeps the exact text", async () => {
    await withHostileSim(async (sim, conn) => {
      const human = startMain(["watch", ...conn, "--until-idle"]);
      const json = startMain(["watch", ...conn, "--until-idle", "--json"]);
      await until(() => (human.stderr().includes("following") && json.stderr().includes("following") ? true : undefined), "both watches to attach", {
        ms: 10_000,
        everyMs: 20,
      });
      sim.engine.tuiPort().submitTurn("Be hostile");
      await until(() => (json.stdout().includes("interaction_requested") ? true : undefined), "the hostile gate", { ms: 10_000, everyMs: 20 });
      const approve = await runMain(["approve", ...conn]);
      expect(approve.code).toBe(0);
      expect([await human.code, await json.code]).toEqual([0, 0]);

      const shown = human.stderr();
      expect(shown).not.toMatch(RAW_CONTROL);
      expect(shown).toContain("\\x1b]52;c;ZXZpbA==\\x07");
      expect(shown).toContain("\\x9b31m");
      expect(shown).toMatch(/\[approval needed\] step \d+: command echo ok\\x1b\]0;pwned\\x07/);
      expect(shown).toContain("    line one ok\\x1b]0;pwned");
      expect(shown).toContain("    line two");

      const events = json
        .stdout()
        .trim()
        .split("\n")
        .map((line) => MapperEventSchema.parse(JSON.parse(line)) as MapperEvent);
      const message = events.find((e) => e.type === "message");
      expect(message).toMatchObject({ text: `The answer ${HOSTILE}` });
      const output = events.find((e) => e.type === "function_call_output");
      expect(output).toMatchObject({ output: `line one ${HOSTILE}\nline two\n` });
    });
  });

  it("watch on a terminal keeps its own colours and spinner while agy's escapes stay visible text", async () => {
    await withHostileSim(async (sim, conn) => {
      let shown = "";
      const stderr = Object.assign(
        new Writable({
          write(chunk, _encoding, done) {
            shown += String(chunk);
            done();
          },
        }),
        { isTTY: true },
      );
      const { io } = captureIo(["watch", ...conn, "--until-idle"]);
      const code = main({ ...io, stderr });
      await until(() => (shown.includes("following") ? true : undefined), "watch to attach", { ms: 10_000, everyMs: 20 });
      sim.engine.tuiPort().submitTurn("Be hostile");
      await until(() => (shown.includes("[approval needed]") ? true : undefined), "the hostile gate", { ms: 10_000, everyMs: 20 });
      expect((await runMain(["approve", ...conn])).code).toBe(0);
      expect(await code).toBe(0);
      expect(shown).toContain(`${TERMINAL_STYLE.gate}  [approval needed]`);
      expect(shown).toContain(LINE_REDRAW.clear);
      // With our own sequences taken out, nothing a terminal acts on is left.
      let rest = shown;
      for (const own of [...Object.values(LINE_REDRAW), ...Object.values(TERMINAL_STYLE)]) rest = rest.split(own).join("");
      expect(rest).not.toMatch(RAW_CONTROL);
      expect(rest).toContain("\\x1b]52;c;ZXZpbA==\\x07");
    });
  });

  it("answer, finding no question, names the waiting permission's hostile command escaped on one line and points to approve", async () => {
    const scenario = parseScenario(
      {
        description: "one gate whose command is hostile and spans lines",
        match: { text: "Be hostile" },
        steps: [{ kind: "command", commandLine: `rm -rf /\n agy-bridge approve: delivered ${HOSTILE}` }],
      },
      "hostile-gate.json",
    );
    const sim = await startSimServer({ speed: 0.05, csrfToken: TOKEN, scenarios: [scenario] });
    try {
      const conn = ["--url", sim.tlsUrl, "--csrf-token", TOKEN, "--conversation", sim.engine.activeConversationId];
      const conv = sim.engine.conversation(sim.engine.activeConversationId);
      sim.engine.tuiPort().submitTurn("Be hostile");
      await until(() => conv?.waitingIndices()[0], "the hostile gate", { ms: 10_000, everyMs: 20 });
      // `answer` finds no question and names the waiting permission: agy's command, escaped, on one line.
      const answer = await runMain(["answer", ...conn, "--option", "1"]);
      expect(answer.code).toBe(1);
      expect(answer.stderr).not.toMatch(RAW_CONTROL);
      expect(answer.stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(answer.stderr).toContain("rm -rf /\\n agy-bridge approve: delivered ok\\x1b]0;pwned\\x07");
      expect(answer.stderr).toContain("allow it with `agy-bridge approve`");
    } finally {
      await sim.close();
    }
  });

  it("prints a server's hostile error message escaped on every session command's error path", async () => {
    const server = await startFailingAgy(`trajectory broke ${HOSTILE}`);
    try {
      const conn = ["--url", server.url, "--conversation", "c0ffee00-0000-4000-8000-000000000000"];
      for (const argv of [
        ["watch", ...conn],
        ["approve", ...conn],
        ["deny", ...conn],
        ["answer", ...conn, "--option", "1"],
        ["interrupt", ...conn],
      ]) {
        const result = await runMain(argv);
        expect({ command: argv[0], code: result.code }).toEqual({ command: argv[0], code: 1 });
        expect(result.stderr).not.toMatch(RAW_CONTROL);
        expect(result.stderr).toContain("\\x1b]52;c;ZXZpbA==\\x07");
      }
    } finally {
      await server.close();
    }
  });

  it("the demo's printer escapes a hostile answer, tool output, reason and screen", () => {
    let out = "";
    const stdout = new Writable({
      write(chunk, _encoding, done) {
        out += String(chunk);
        done();
      },
    });
    const printer = createDemoOutput({ json: false, stdout, stderr: stdout });
    const base = { conversationId: "c", trajectoryId: "t", stepIndex: 3 } as const;
    printer.event({ type: "message_delta", ...base, messageId: "m", index: 0, text: `streamed ${HOSTILE}\nnext`, final: true, replace: false } as MapperEvent);
    printer.event({ type: "function_call_output", ...base, callId: "k", name: "run_command", output: HOSTILE, isError: false, stepStatus: "DONE" });
    printer.record({ demo: "turn", turn: 1, text: "t", result: "delivered", reason: HOSTILE });
    printer.record({ demo: "screen", pane: "%0", lines: [HOSTILE] });
    printer.note(HOSTILE);
    expect(out).not.toMatch(RAW_CONTROL);
    expect(out).toContain("streamed ok\\x1b]0;pwned\\x07");
    expect(out).toContain("\n    next");
  });

  it("doctor and sessions escape what a hostile server says about its conversations", async () => {
    const hostileId = `conv\x1b]0;title\x07`;
    const server = await startLoopbackServer({
      kind: "http1",
      handler: ({ request, res }) => {
        res.writeHead(200, { "content-type": "application/json" });
        if (request.rpc === "GetAllCascadeTrajectories") {
          res.end(
            JSON.stringify({
              trajectorySummaries: {
                [hostileId]: { status: `CASCADE_RUN_STATUS_IDLE\x1b[8m`, stepCount: 3, lastUserInputTime: "2026-01-07T10:11:12.123456789Z" },
              },
            }),
          );
        } else res.end("{}");
      },
    });
    const port = Number(new URL(server.url).port);
    const exe = "/opt/fake\x1b[2J/bin/agy";
    const fake = createFakeProc([{ pid: 6161, exe, argv: [exe], fds: ["8801"] }], [{ port, inode: "8801" }]);
    try {
      const discover = () => discoverServers({ procRoot: fake.root, pids: [6161], tmuxServers: [], logPath: false });
      const doctor = await runCommand(createDoctorCommand({ discover, nodeVersion: "v20.0.0" }), []);
      expect(doctor.code).toBe(0);
      expect(doctor.stdout).not.toMatch(RAW_CONTROL);
      expect(doctor.stdout).toContain("/opt/fake\\x1b[2J/bin/agy");
      const sessions = await runCommand(createSessionsCommand({ discover, now: () => Date.parse("2026-01-07T10:16:13Z") }), []);
      expect(sessions.code).toBe(0);
      expect(sessions.stdout).not.toMatch(RAW_CONTROL);
      expect(sessions.stdout).toContain("conv\\x1b]0;title\\x07");
      expect(sessions.stdout).toContain("2026-01-07 10:11:12Z (5 min ago)");
      const json = await runCommand(createSessionsCommand({ discover }), ["--json"]);
      expect((JSON.parse(json.stdout) as Array<{ conversations: Array<{ conversationId: string }> }>)[0]?.conversations[0]?.conversationId).toBe(hostileId);
    } finally {
      fake.remove();
      await server.close();
    }
  });

  it("escapes what a command writes to stderr without thinking of it (map naming a hostile file path)", async () => {
    const result = await runMain(["map", "/nonexistent/\x1b]0;pwned\x07.json"]);
    expect(result.code).toBe(1);
    expect(result.stderr).not.toMatch(RAW_CONTROL);
    expect(result.stderr).toContain("/nonexistent/\\x1b]0;pwned\\x07.json");
  });

  it("shows an unknown command's name escaped", async () => {
    const result = await runMain(["\x1b]52;c;ZXZpbA==\x07"]);
    expect(result.code).toBe(2);
    expect(result.stderr).not.toMatch(RAW_CONTROL);
    expect(result.stderr).toContain('unknown command "\\x1b]52;c;ZXZpbA==\\x07"');
  });
});
