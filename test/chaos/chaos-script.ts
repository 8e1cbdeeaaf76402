/**
 * The session every chaos run plays: turns with tool calls, permission gates
 * (allowed and denied, a silent one, a file permission), a question, a
 * sub-agent, and an interrupt of a running command — and the verdict the
 * supervisor gives each gate, decided by what the gate asks, so the
 * simulator's record shows whether each answer reached the step it was for.
 */
import type { EventOf } from "../../src/mapper/index.js";
import type { Scenario } from "../../src/sim/index.js";
import { asObject, asString } from "../../src/protocol/json.js";
import type { GateKey } from "./fault-plan.js";

export interface ScriptTurn {
  text: string;
  /** Interrupt the turn once its command runs. */
  interrupt?: boolean;
}

export const TURNS: readonly ScriptTurn[] = [
  { text: "Run pwd" },
  { text: "Help me start a project" },
  { text: "Show git status and recent commits" },
  { text: "Delete the build directory" },
  { text: "Read my shell profile" },
  { text: "Research the test setup with a subagent" },
  { text: "Run the long job", interrupt: true },
];

/** A command that runs until it is interrupted (20 s at the runs' speed, far past any fault's span). */
export const LONG_JOB: Scenario = {
  name: "chaos-long-job",
  description: "A command that runs until the supervisor interrupts it.",
  match: { text: "Run the long job" },
  steps: [{ kind: "command", commandLine: "sleep 600", gate: false, runMs: 400_000, toolAction: "Running the long job", toolSummary: "Long job" }],
} as Scenario;

export const DENY_INSTRUCTION = "leave the build directory alone";

/** The supervisor's verdict for a gate. */
export type Verdict = { kind: "approve" } | { kind: "deny"; instruction: string } | { kind: "answer"; optionIds: string[] };

/** Which gate of the script a request is, from what it asks. */
export function gateKeyOfRequest(request: EventOf<"interaction_requested">["request"]): GateKey | undefined {
  if (request.kind === "question") return "question";
  if (request.kind !== "permission") return undefined;
  if (request.variant === "filePermission") return "file";
  if (request.target === "pwd") return "pwd";
  if (request.target === "git status") return "git status";
  if (request.target.startsWith("git log")) return "git log";
  if (request.target === "rm -rf build") return "rm -rf build";
  return undefined;
}

/** Which gate of the script a simulator step is (its `requestedInteraction`). */
export function gateKeyOfStep(step: unknown): GateKey | undefined {
  const requested = asObject(asObject(step)?.["requestedInteraction"]);
  if (requested === undefined) return undefined;
  if (requested["askQuestion"] !== undefined) return "question";
  if (requested["filePermission"] !== undefined) return "file";
  const target = asString(asObject(asObject(requested["permission"])?.["resource"])?.["target"]) ?? "";
  if (target === "pwd") return "pwd";
  if (target === "git status") return "git status";
  if (target.startsWith("git log")) return "git log";
  if (target === "rm -rf build") return "rm -rf build";
  return undefined;
}

export function verdictFor(key: GateKey): Verdict {
  if (key === "question") return { kind: "answer", optionIds: ["2"] };
  if (key === "rm -rf build") return { kind: "deny", instruction: DENY_INSTRUCTION };
  return { kind: "approve" };
}

/**
 * Whether the echo agy recorded on a step (`completedInteractions[0].response`)
 * is the verdict meant for that step's gate.
 */
export function echoMatches(key: GateKey, response: unknown): boolean {
  const r = asObject(response);
  if (r === undefined) return false;
  if (key === "question") {
    const first = asObject((asObject(r["askQuestion"])?.["responses"] as unknown[] | undefined)?.[0]);
    return JSON.stringify(first?.["selectedOptionIds"]) === JSON.stringify(["2"]);
  }
  if (key === "file") return asObject(r["filePermission"])?.["allow"] === true;
  const permission = asObject(r["permission"]);
  if (key === "rm -rf build") return permission !== undefined && permission["allow"] === undefined && permission["userDenyInstruction"] === DENY_INSTRUCTION;
  return permission?.["allow"] === true;
}

/** What a person types in the TUI for the same verdict (a deny instruction cannot be typed there). */
export function tuiAnswerFor(key: GateKey): { kind: "permission"; allow: boolean } | { kind: "question"; selectedOptionIds: string[] } {
  const verdict = verdictFor(key);
  if (verdict.kind === "answer") return { kind: "question", selectedOptionIds: verdict.optionIds };
  return { kind: "permission", allow: verdict.kind === "approve" };
}
