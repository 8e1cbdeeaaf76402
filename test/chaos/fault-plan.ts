/**
 * What a seed injects. Transport faults name the exchange they hit by its
 * method and its ordinal among that method's requests in the run (the 3rd
 * `GetCascadeTrajectorySteps`), so a fault list replays without depending on
 * socket timing; agy-side faults name the gate or turn of the script.
 */
import { createPrng } from "./prng.js";

export const STREAM = "StreamAgentStateUpdates";
export const UNARY = ["GetCascadeTrajectorySteps", "GetCascadeTrajectorySteps", "GetAllCascadeTrajectories", "HandleCascadeUserInteraction", "HandleCascadeUserInteraction", "CancelCascadeSteps"] as const;

/** How many of each call a clean run makes (about): a fault's ordinal is drawn from 1..this. */
const CALLS: Record<string, number> = {
  [STREAM]: 3,
  GetCascadeTrajectorySteps: 14,
  GetAllCascadeTrajectories: 4,
  HandleCascadeUserInteraction: 6,
  CancelCascadeSteps: 1,
};

/** The gates of the script, by what they ask (see chaos-script.ts). */
export const GATE_KEYS = ["pwd", "question", "git status", "git log", "rm -rf build", "file"] as const;
export type GateKey = (typeof GATE_KEYS)[number];

/** The turn of the script (chaos-script.ts TURNS) each gate belongs to. */
const GATE_TURN: Record<GateKey, number> = { pwd: 0, question: 1, "git status": 2, "git log": 2, "rm -rf build": 3, file: 4 };

export type Fault =
  /** The stream's connection torn down after `afterBytes` response bytes (mostly mid-frame). */
  | { kind: "drop"; method: typeof STREAM; nth: number; afterBytes: number }
  /** Nothing forwarded in one direction of an exchange for `ms`, from byte `atByte` on. */
  | { kind: "stall"; method: string; nth: number; dir: "request" | "response"; atByte: number; ms: number }
  /** The exchange's response written one byte per write: every split position of every frame in it. */
  | { kind: "split"; method: string; nth: number }
  /** A unary call's connection closed: before the request reaches agy, after agy got it (the answer lost), or mid-response. */
  | { kind: "cut"; method: string; nth: number; phase: "before" | "after_request" | "mid_response"; afterBytes: number }
  /** The exchange answered by the proxy with a 503 (plain text) or a 500 (a Connect error body); agy never sees it. */
  | { kind: "http_503" | "http_500"; method: string; nth: number }
  /** agy restarts on new ports when the run's `atRequest`th request arrives; discovery must find it again. */
  | { kind: "restart"; atRequest: number }
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
  const nthOf = (method: string): number => r.int(1, CALLS[method] ?? 1);
  const count = r.int(4, 12);
  for (let i = 0; i < count; i++) {
    const kind = r.pick(["drop", "drop", "stall", "stall", "split", "cut", "cut", "http_503", "http_500", "restart"] as const);
    if (kind === "drop") faults.push({ kind, method: STREAM, nth: nthOf(STREAM), afterBytes: r.int(1, 6000) });
    else if (kind === "stall") {
      const method = r.chance(0.4) ? STREAM : unary();
      faults.push({ kind, method, nth: nthOf(method), dir: r.chance(0.5) ? "request" : "response", atByte: r.int(0, 400), ms: r.int(20, 400) });
    } else if (kind === "split") {
      const method = r.chance(0.5) ? STREAM : unary();
      faults.push({ kind, method, nth: nthOf(method) });
    } else if (kind === "cut") {
      const method = unary();
      faults.push({ kind, method, nth: nthOf(method), phase: r.pick(["before", "after_request", "mid_response"] as const), afterBytes: r.int(1, 300) });
    } else if (kind === "restart") {
      if (!faults.some((f) => f.kind === "restart")) faults.push({ kind, atRequest: r.int(3, 28) });
    } else {
      const method = r.chance(0.2) ? STREAM : unary();
      faults.push({ kind, method, nth: nthOf(method) });
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
      return `drop(stream#${fault.nth}@${fault.afterBytes}B)`;
    case "stall":
      return `stall(${fault.method}#${fault.nth} ${fault.dir}@${fault.atByte}B ${fault.ms}ms)`;
    case "split":
      return `split(${fault.method}#${fault.nth})`;
    case "cut":
      return `cut(${fault.method}#${fault.nth} ${fault.phase}${fault.phase === "mid_response" ? `@${fault.afterBytes}B` : ""})`;
    case "http_503":
    case "http_500":
      return `${fault.kind}(${fault.method}#${fault.nth})`;
    case "restart":
      return `restart(@request ${fault.atRequest})`;
    case "tui_race":
    case "timeout_retry":
      return `${fault.kind}(${fault.gate})`;
    case "clear_mid_turn":
      return `clear_mid_turn(turn ${fault.turn})`;
  }
}
