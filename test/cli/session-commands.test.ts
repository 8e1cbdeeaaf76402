import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { singlePending } from "../../src/cli/session-connect.js";
import { MapperEventSchema, type MapperEvent } from "../../src/mapper/index.js";
import { createAgyRpcClient } from "../../src/rpc/index.js";
import { startSimServer, type SimServer, type SimServerOptions } from "../../src/sim/index.js";
import { runMain, startMain } from "../support/cli-io.js";
import { firstLine } from "../support/first-line.js";
import { until } from "../support/until.js";

const TOKEN = "c5f1e0d2b3a4968778695a4b3c2d1e0f";
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

function events(stdout: string): MapperEvent[] {
  return stdout
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => MapperEventSchema.parse(JSON.parse(l)));
}

async function withSim<T>(body: (sim: SimServer, conn: string[]) => Promise<T>): Promise<T>;
async function withSim<T>(options: SimServerOptions, body: (sim: SimServer, conn: string[]) => Promise<T>): Promise<T>;
async function withSim<T>(
  first: SimServerOptions | ((sim: SimServer, conn: string[]) => Promise<T>),
  second?: (sim: SimServer, conn: string[]) => Promise<T>,
): Promise<T> {
  const options = typeof first === "function" ? {} : first;
  const body = typeof first === "function" ? first : second!;
  const sim = await startSimServer({ speed: 0.05, csrfToken: TOKEN, ...options });
  try {
    return await body(sim, ["--url", sim.tlsUrl, "--csrf-token", TOKEN, "--conversation", sim.engine.activeConversationId]);
  } finally {
    await sim.close();
  }
}

describe("agy-bridge watch / approve / deny / answer / interrupt", () => {
  it("watches a turn as NDJSON until it ends while approve answers its gate, never printing the token", async () => {
    await withSim(async (sim, conn) => {
      const watch = startMain(["watch", ...conn, "--json", "--until-idle"]);
      await until(() => (watch.stderr().includes("following") ? true : undefined), "watch to attach", { ms: 10_000, everyMs: 20 });
      sim.engine.tuiPort().submitTurn("Run pwd");
      await until(() => (watch.stdout().includes("interaction_requested") ? true : undefined), "the gate in watch's output", { ms: 10_000, everyMs: 20 });
      const approve = await runMain(["approve", ...conn, "--json"]);
      expect(approve.code).toBe(0);
      const result = JSON.parse(approve.stdout) as { result: string; interactionId: string; stepIndex: number };
      expect(result.result).toBe("delivered");
      expect(await watch.code).toBe(0);
      const seen = events(watch.stdout());
      const requested = seen.find((e) => e.type === "interaction_requested");
      expect(requested).toMatchObject({ interactionId: result.interactionId, stepIndex: result.stepIndex });
      expect(seen.some((e) => e.type === "interaction_resolved" && e.interactionId === result.interactionId)).toBe(true);
      expect(seen.at(-1)).toMatchObject({ type: "status", status: "idle" });
      const again = await runMain(["approve", ...conn, "--interaction", result.interactionId, "--json"]);
      expect(again.code).toBe(1);
      expect(JSON.parse(again.stdout)).toMatchObject({ result: "already_resolved" });
      for (const text of [watch.stdout(), watch.stderr(), approve.stdout, approve.stderr, again.stderr]) expect(text).not.toContain(TOKEN);
    });
  });

  it("denies with an instruction and answers a question with an option and with a write-in", async () => {
    await withSim(async (sim, conn) => {
      const conv = sim.engine.conversation(sim.engine.activeConversationId)!;
      const waitGate = () => until(() => conv.waitingIndices()[0], "a waiting step", { ms: 10_000, everyMs: 20 });
      sim.engine.tuiPort().submitTurn("Delete the build directory");
      const gate = await waitGate();
      const deny = await runMain(["deny", ...conn, "--instruction", "Keep it.", "--json"]);
      expect(deny.code).toBe(0);
      expect(JSON.parse(deny.stdout)).toMatchObject({ result: "delivered", stepIndex: gate });
      await until(() => (conv.running ? undefined : true), "the denied turn's end", { ms: 10_000, everyMs: 20 });

      sim.engine.tuiPort().submitTurn("Help me start a project");
      const question = await waitGate();
      const none = await runMain(["approve", ...conn]);
      expect(none.code).toBe(1);
      expect(none.stderr).toMatch(/no permission is pending/);
      const answer = await runMain(["answer", ...conn, "--option", "2", "--json"]);
      expect(answer.code).toBe(0);
      expect(JSON.parse(answer.stdout)).toMatchObject({ result: "delivered", stepIndex: question });
      const echoed = (conv.steps[question] as { completedInteractions?: Array<{ response: Record<string, unknown> }> }).completedInteractions;
      expect(JSON.stringify(echoed?.[0]?.response)).toContain('"selectedOptionIds":["2"]');
      await until(() => (conv.running ? undefined : true), "the answered turn's end", { ms: 10_000, everyMs: 20 });

      sim.engine.tuiPort().submitTurn("Help me start a project");
      const second = await waitGate();
      const writeIn = await runMain(["answer", ...conn, "--write-in", "Something else entirely"]);
      expect(writeIn.code).toBe(0);
      expect(writeIn.stderr).toContain(`delivered to step ${second}`);
      const step = conv.steps[second] as { completedInteractions?: Array<{ response: Record<string, unknown> }> };
      expect(JSON.stringify(step.completedInteractions?.[0]?.response)).toContain('"writeInResponse":"Something else entirely"');
    });
  });

  it("refuses --via other than rpc or tui as a usage error, sending nothing", async () => {
    for (const argv of [["approve"], ["deny"], ["answer", "--option", "1"]]) {
      const run = await runMain([...argv, "--url", "http://127.0.0.1:9", "--conversation", "c", "--via", "keys"]);
      expect([argv[0], run.code, run.stderr]).toEqual([argv[0], 2, `agy-bridge ${argv[0]}: --via takes rpc or tui; run \`agy-bridge ${argv[0]} --help\`\n`]);
    }
  });

  it("interrupts a running turn and reports an idle conversation", async () => {
    // A turn that runs until it is interrupted: no race with how fast the CLI attaches.
    const held = {
      description: "An answer that holds the turn open until it is interrupted.",
      match: { text: "Hold the turn open" },
      steps: [
        { kind: "planner", text: "Working on it." },
        { kind: "delay", ms: 600_000 },
      ],
    };
    await withSim({ scenarios: [held as never] }, async (sim, conn) => {
      const conv = sim.engine.conversation(sim.engine.activeConversationId)!;
      expect(JSON.parse((await runMain(["interrupt", ...conn, "--json"])).stdout)).toEqual({ result: "idle" });
      sim.engine.tuiPort().submitTurn("Hold the turn open");
      await until(() => (conv.running ? true : undefined), "the turn to run", { ms: 10_000, everyMs: 20 });
      const interrupted = await runMain(["interrupt", ...conn, "--json"]);
      expect(interrupted.code).toBe(0);
      expect(JSON.parse(interrupted.stdout)).toEqual({ result: "cancelled" });
      await until(() => (conv.running ? undefined : true), "the turn to stop", { ms: 10_000, everyMs: 20 });
    });
  });

  it("stops watching on SIGINT with exit 0", async () => {
    await withSim(async (_sim, conn) => {
      const watch = startMain(["watch", ...conn]);
      await until(() => (watch.stderr().includes("following") ? true : undefined), "watch to attach", { ms: 10_000, everyMs: 20 });
      watch.abort();
      expect(await watch.code).toBe(0);
      expect(watch.stdout()).toBe("");
    });
  });

  it("answers usage errors with exit 2 and --help with exit 0", async () => {
    expect((await runMain(["answer", "--url", "http://127.0.0.1:9"])).code).toBe(2);
    expect((await runMain(["watch", "--mode", "sideways"])).code).toBe(2);
    expect((await runMain(["approve", "--interaction="])).code).toBe(2);
    for (const name of ["watch", "approve", "deny", "answer", "interrupt"]) {
      const help = await runMain([name, "--help"]);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`Usage: agy-bridge ${name}`);
    }
  });

  it("fails with one sentence when the server cannot be reached", async () => {
    const r = await runMain(["approve", "--url", "http://127.0.0.1:9", "--conversation", "x", "--interaction", "int_1"]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/^agy-bridge approve: /);
  });

  it("names the choices when several interactions of one kind wait", () => {
    const pending = [
      { interactionId: "int_a", kind: "permission" as const, stepIndex: 3, trajectoryId: "t", stepType: "RUN_COMMAND", summary: "ls" },
      { interactionId: "int_b", kind: "permission" as const, stepIndex: 9, trajectoryId: "t", stepType: "RUN_COMMAND", summary: "pwd" },
      { interactionId: "int_c", kind: "question" as const, stepIndex: 12, trajectoryId: "t", stepType: "ASK_QUESTION", summary: "Which?" },
    ];
    expect(singlePending(pending, ["question"], "question")).toBe(pending[2]);
    const several = singlePending(pending, ["permission"], "permission");
    expect(several).toBe("2 permissions are pending; choose one with --interaction: int_a (step 3: ls), int_b (step 9: pwd)");
  });

  it("watches a simulator running as a separate process", async () => {
    const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "src/cli/bin.ts", "sim", "--headless", "--speed", "0.05", "--csrf_token", TOKEN], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const line = await firstLine(child.stdout!, "the simulator", 20_000);
      const info = JSON.parse(line) as { conversationId: string; plainUrl: string };
      const conn = ["--url", info.plainUrl, "--csrf-token", TOKEN, "--conversation", info.conversationId];
      const watch = startMain(["watch", ...conn, "--json", "--until-idle"]);
      await until(() => (watch.stderr().includes("following") ? true : undefined), "watch to attach", { ms: 10_000, everyMs: 20 });
      const client = createAgyRpcClient({ baseUrl: info.plainUrl, csrfToken: TOKEN });
      try {
        await client.sendUserCascadeMessage({
          conversationId: info.conversationId,
          text: "Say hello in one short sentence.",
          planModel: "MODEL_PLACEHOLDER_M20",
        });
      } finally {
        await client.close();
      }
      expect(await watch.code).toBe(0);
      const seen = events(watch.stdout());
      expect(
        seen.find((e) => e.type === "message"),
        watch.stdout(),
      ).toMatchObject({ failed: false });
    } finally {
      child.kill("SIGTERM");
    }
  }, 40_000);
});
