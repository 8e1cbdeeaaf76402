import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AgyBridgeError } from "../../src/errors.js";
import { loadScenarios, matchScenario, parseScenario } from "../../src/sim/engine/scenarios.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function dirWith(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "agy-sim-scenarios-"));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}

describe("scenario files", () => {
  it("loads every shipped scenario, named after its file, covering each script kind", async () => {
    const scenarios = await loadScenarios();
    const names = scenarios.map((s) => s.name);
    for (const name of [
      "plain-text-answer",
      "permission-allow-runs-command",
      "permission-deny-declines",
      "chained-gates",
      "single-select-question",
      "multi-select-question",
      "error-turn",
      "generic-tool",
      "default-echo",
      "error-message-step",
      "file-permission-gate",
      "file-edit-gate",
      "file-create-gate",
      "file-create-outside-gate",
      "subagent-task",
    ]) {
      expect(names).toContain(name);
    }
    const kinds = new Set(scenarios.flatMap((s) => s.steps.map((step) => step.kind)));
    expect([...kinds].sort()).toEqual([
      "checkpoint",
      "command",
      "createFile",
      "editFile",
      "error",
      "errorMessage",
      "generic",
      "listDirectory",
      "planner",
      "question",
      "subagent",
      "viewFile",
    ]);
    const multi = scenarios.find((s) => s.name === "multi-select-question");
    expect(multi?.steps[0]).toMatchObject({ kind: "question", questions: [{ multiSelect: true }] });
    const chained = scenarios.find((s) => s.name === "chained-gates");
    const commands = chained?.steps.filter((s) => s.kind === "command") ?? [];
    // The chain's second gate parks silently by default (spike-notes §5.2).
    expect(commands.map((s) => s.silentGate === true)).toEqual([false, true]);
  });

  it("matches exact text first, then a regex, then the default scenario", async () => {
    const scenarios = await loadScenarios();
    expect(matchScenario(scenarios, "Run pwd")?.name).toBe("permission-allow-runs-command");
    expect(matchScenario(scenarios, "  Run pwd \n")?.name).toBe("permission-allow-runs-command");
    expect(matchScenario(scenarios, "Write a long essay on tides")?.name).toBe("long-answer");
    expect(matchScenario(scenarios, "Run pwd please")?.name).toBe("default-echo");
  });

  it("names the file and the JSON path of a bad step", async () => {
    const dir = await dirWith({
      "broken-scenario.json": JSON.stringify({ match: { text: "x" }, steps: [{ kind: "command", commandLine: 42 }] }),
    });
    const error = await loadScenarios(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgyBridgeError);
    expect((error as AgyBridgeError).code).toBe("invalid_argument");
    expect((error as Error).message).toContain("broken-scenario.json");
    expect((error as Error).message).toContain("steps.0.commandLine");
  });

  it("rejects unknown fields, unknown kinds, bad JSON and a bad regex", async () => {
    expect(() => parseScenario({ match: { text: "x" }, steps: [{ kind: "dance" }] }, "a.json")).toThrow(/a\.json.*steps\.0/);
    expect(() => parseScenario({ match: { text: "x" }, steps: [{ kind: "planner", text: "t", colour: 1 }] }, "b.json")).toThrow(/b\.json/);
    expect(() => parseScenario({ match: { regex: "(" }, steps: [{ kind: "planner", text: "t" }] }, "c.json")).toThrow(/c\.json is invalid: match\.regex/);
    const nested = { kind: "subagent", typeName: "a", role: "r", prompt: "p", steps: [{ kind: "planner", text: "t" }] };
    expect(() => parseScenario({ match: { text: "x" }, steps: [{ ...nested, steps: [nested] }] }, "d.json")).toThrow(/d\.json is invalid: steps\.0\.steps\.0/);
    expect(parseScenario({ match: { text: "x" }, steps: [nested] }, "e.json").steps[0]?.kind).toBe("subagent");
    const dir = await dirWith({ "not-json.json": "{ nope" });
    await expect(loadScenarios(dir)).rejects.toThrow(/not-json\.json is not JSON/);
  });

  it("loads a custom directory in file-name order and ignores non-JSON files", async () => {
    const step = { kind: "planner", text: "ok" };
    const dir = await dirWith({
      "b-second.json": JSON.stringify({ match: { text: "b" }, steps: [step] }),
      "a-first.json": JSON.stringify({ match: { default: true }, steps: [step] }),
      "notes.txt": "not a scenario",
    });
    expect((await loadScenarios(dir)).map((s) => s.name)).toEqual(["a-first", "b-second"]);
  });
});
