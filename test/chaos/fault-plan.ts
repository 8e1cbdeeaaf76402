/**
 * What a seed injects. Transport faults name the exchange they hit by its
 * method and a position in the conversation: the first exchange of that
 * method once the simulator holds `atStep` steps (a stream's response faults:
 * the stream open then, from the bytes that follow). How many polls a run
 * makes depends on timing; where the conversation is does not — so a seed
 * fires the same faults on every run, and a failing seed replays. agy-side
 * faults name the gate or turn of the script.
 */
import { createPrng } from "./prng.js";

export const STREAM = "StreamAgentStateUpdates";
export const UNARY = [
  "GetCascadeTrajectorySteps",
  "GetCascadeTrajectorySteps",
  "GetAllCascadeTrajectories",
  "HandleCascadeUserInteraction",
  "HandleCascadeUserInteraction",
  "CancelCascadeSteps",
] as const;

/**
 * The last step count at which each method is still called in every run, so
 * a fault armed at or before it always fires: measured on clean runs
 * (`CHAOS_TRACE=1 npm run chaos -- --seed 1` prints each request's method
 * and step count). Polls run to the end; the last answer goes to the file
 * gate; the cancel comes with the long job. A stream's response faults are
 * armed in the first half, so that enough bytes follow.
 */
export const LAST_STEP: Record<string, number> = {
  [STREAM]: 20,
  GetCascadeTrajectorySteps: 30,
  GetAllCascadeTrajectories: 30,
  HandleCascadeUserInteraction: 20,
  CancelCascadeSteps: 30,
};

/** The gates of the script, by what they ask (see chaos-script.ts). */
export const GATE_KEYS = ["pwd", "question", "git status", "git log", "rm -rf build", "file"] as const;
export type GateKey = (typeof GATE_KEYS)[number];

/** The turn of the script (chaos-script.ts TURNS) each gate belongs to. */
const GATE_TURN: Record<GateKey, number> = { pwd: 0, question: 1, "git status": 2, "git log": 2, "rm -rf build": 3, file: 4 };

export type Fault =
  /** The stream's connection torn down after `afterBytes` response bytes (mostly mid-frame). */
  | { kind: "drop"; method: typeof STREAM; atStep: number; afterBytes: number }
  /** Nothing forwarded in one direction of an exchange for `ms`, from byte `atByte` on. */
  | { kind: "stall"; method: string; atStep: number; dir: "request" | "response"; atByte: number; ms: number }
  /** The exchange's response written one byte per write: every split position of every frame in it. */
  | { kind: "split"; method: string; atStep: number }
  /** A unary call's connection closed: before the request reaches agy, after agy got it (the answer lost), or mid-response. */
  | { kind: "cut"; method: string; atStep: number; phase: "before" | "after_request" | "mid_response"; afterBytes: number }
  /** The exchange answered by the proxy with a 503 (plain text) or a 500 (a Connect error body); agy never sees it. */
  | { kind: "http_503" | "http_500"; method: string; atStep: number }
  /** agy restarts on new ports when the first `method` request arrives once the conversation holds `atStep` steps; discovery must find it again. */
  | { kind: "restart"; method: string; atStep: number }
  /** A person answers the gate in the TUI (the same verdict) while the supervisor's RPC answer is in flight. */
  | { kind: "tui_race"; gate: GateKey }
  /** The gate times out while the supervisor's answer is in flight; agy retries it at a higher index. */
  | { kind: "timeout_retry"; gate: GateKey }
  /** `/clear` typed in the TUI while turn `turn` runs; later turns go to the new conversation. */
  | { kind: "clear_mid_turn"; turn: number };

export type FaultKind = Fault["kind"];

/** Faults that change what agy does (and so the clean run's script too), as opposed to the wire. */
export const AGY_SIDE: ReadonlySet<FaultKind> = new Set(["tui_race", "timeout_retry", "clear_mid_turn"]);

/** Gates a person can answer in the TUI with the supervisor's verdict (a deny instruction cannot be typed there). */
const TUI_ANSWERABLE: readonly GateKey[] = ["pwd", "question", "git status", "git log", "file"];

export function isAgySide(fault: Fault): boolean {
  return AGY_SIDE.has(fault.kind);
}

/** The fault plan of a seed: 4–12 transport faults and up to two agy-side ones. */
export function planFor(seed: number, turns: number): Fault[] {
  const r = createPrng(seed);
  const faults: Fault[] = [];
  const unary = (): string => r.pick(UNARY);
  const stepOf = (method: string): number => r.int(0, LAST_STEP[method] ?? 0);
  // A stream request comes when the session (re)connects, which only the faults decide: the first one, at attach.
  const requestStep = (method: string): number => (method === STREAM ? 0 : stepOf(method));
  const count = r.int(4, 12);
  for (let i = 0; i < count; i++) {
    const kind = r.pick(["drop", "drop", "stall", "stall", "split", "cut", "cut", "http_503", "http_500", "restart"] as const);
    if (kind === "drop") faults.push({ kind, method: STREAM, atStep: stepOf(STREAM), afterBytes: r.int(1, 6000) });
    else if (kind === "stall") {
      const method = r.chance(0.4) ? STREAM : unary();
      const dir = r.chance(0.5) ? "request" : "response";
      faults.push({ kind, method, atStep: dir === "request" ? requestStep(method) : stepOf(method), dir, atByte: r.int(0, 400), ms: r.int(20, 400) });
    } else if (kind === "split") {
      const method = r.chance(0.5) ? STREAM : unary();
      faults.push({ kind, method, atStep: stepOf(method) });
    } else if (kind === "cut") {
      const method = unary();
      faults.push({ kind, method, atStep: stepOf(method), phase: r.pick(["before", "after_request", "mid_response"] as const), afterBytes: r.int(1, 300) });
    } else if (kind === "restart") {
      const method = r.pick(["GetCascadeTrajectorySteps", "GetAllCascadeTrajectories"] as const);
      // Not before the session attached (the first reads are at 0 steps).
      if (!faults.some((f) => f.kind === "restart")) faults.push({ kind, method, atStep: Math.max(3, stepOf(method)) });
    } else {
      const method = r.chance(0.2) ? STREAM : unary();
      faults.push({ kind, method, atStep: requestStep(method) });
    }
  }
  const agy = r.int(0, 2);
  const gates = new Set<GateKey>();
  for (let i = 0; i < agy; i++) {
    const kind = r.pick(["tui_race", "timeout_retry", "clear_mid_turn"] as const);
    if (kind === "clear_mid_turn") {
      if (!faults.some((f) => f.kind === "clear_mid_turn")) faults.push({ kind, turn: r.int(0, turns - 2) });
      continue;
    }
    const gate = r.pick(kind === "tui_race" ? TUI_ANSWERABLE : GATE_KEYS);
    if (gates.has(gate)) continue;
    gates.add(gate);
    faults.push({ kind, gate });
  }
  // After /clear the TUI shows the new conversation: whether a person could still answer a gate of the
  // turn that was cleared would depend on timing, so no race is planned on that turn.
  const clear = faults.find((f) => f.kind === "clear_mid_turn");
  return clear === undefined ? faults : faults.filter((f) => f.kind !== "tui_race" || GATE_TURN[f.gate] !== clear.turn);
}

/** A short, stable label for a fault (the table and the shrunk list). */
export function label(fault: Fault): string {
  switch (fault.kind) {
    case "drop":
      return `drop(stream@step ${fault.atStep} +${fault.afterBytes}B)`;
    case "stall":
      return `stall(${fault.method}@step ${fault.atStep} ${fault.dir}@${fault.atByte}B ${fault.ms}ms)`;
    case "split":
      return `split(${fault.method}@step ${fault.atStep})`;
    case "cut":
      return `cut(${fault.method}@step ${fault.atStep} ${fault.phase}${fault.phase === "mid_response" ? `@${fault.afterBytes}B` : ""})`;
    case "http_503":
    case "http_500":
      return `${fault.kind}(${fault.method}@step ${fault.atStep})`;
    case "restart":
      return `restart(${fault.method}@step ${fault.atStep})`;
    case "tui_race":
    case "timeout_retry":
      return `${fault.kind}(${fault.gate})`;
    case "clear_mid_turn":
      return `clear_mid_turn(turn ${fault.turn})`;
  }
}
