/**
 * `agy-bridge sim` (real engine, language server and TUI) in a real tmux pane
 * on a private socket, with a small RPC client: what the agy 1.2 tests drive.
 * Each call to {@link startSimPane} is its own simulator in its own session.
 */
import { resolve } from "node:path";
import { onTestFinished } from "vitest";
import type { PrivateTmux } from "../../support/tmux-server.js";
import { until } from "../../support/until.js";

export const ROOT = resolve(import.meta.dirname, "../../..");
const BIN = resolve(ROOT, "src/cli/bin.ts");
const SERVICE = "exa.language_server_pb.LanguageServerService";
export const COLUMNS = 120;
export const RULE = "─".repeat(COLUMNS);

export interface WireStep {
  type?: string;
  status?: string;
  userInput?: { userResponse?: string };
  runCommand?: { commandLine?: string; exitCode?: number };
  askQuestion?: { questions?: { question: string; selectedOptionIds?: string[] }[] };
  completedInteractions?: { response?: Record<string, unknown> }[];
}

export interface SimPane {
  target: string;
  conversationId: string;
  trajectoryId: string;
  rpc<T>(method: string, body: object): Promise<T>;
  steps(): Promise<WireStep[]>;
  runStatus(): Promise<string | undefined>;
  screen(): Promise<string>;
  waitFor(predicate: (screen: string) => boolean, what: string): Promise<string>;
  keys(...keys: string[]): Promise<void>;
  /** Types a turn as a driver does: bracketed paste, then a separate Enter. */
  typeTurn(text: string): Promise<void>;
  /** The index of the first WAITING step, once there is one. */
  waitingStep(): Promise<number>;
  /** Waits until step `index` satisfies `ok`; returns it. */
  stepUntil(index: number, ok: (step: WireStep) => boolean, what: string): Promise<WireStep>;
}

let count = 0;

export async function startSimPane(tmux: PrivateTmux, flags: string[], options: { env?: Record<string, string>; speed?: string } = {}): Promise<SimPane> {
  count += 1;
  const target = `s12-${count}`;
  const argv = [process.execPath, "--import", "tsx", BIN, "sim", "--speed", options.speed ?? "0", ...flags];
  await tmux.newSession(target, argv, { cwd: ROOT, columns: COLUMNS, rows: 60, ...(options.env !== undefined ? { env: options.env } : {}) });
  onTestFinished(() =>
    tmux.run(["kill-session", "-t", target]).then(
      () => undefined,
      () => undefined,
    ),
  );
  const ready = await tmux.waitForScreen(target, (s) => s.includes("? for shortcuts") && /http:\/\/127\.0\.0\.1:\d+/.test(s), "the idle TUI", 30_000);
  const plainUrl = (/http:\/\/127\.0\.0\.1:\d+/.exec(ready) as RegExpExecArray)[0];
  const rpc = async <T>(method: string, body: object): Promise<T> => {
    const res = await fetch(`${plainUrl}/${SERVICE}/${method}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${method} → HTTP ${res.status}: ${text}`);
    return JSON.parse(text) as T;
  };
  const summaries = await rpc<{ trajectorySummaries?: Record<string, { trajectoryId: string; status?: string }> }>("GetAllCascadeTrajectories", {});
  const [conversationId, summary] = Object.entries(summaries.trajectorySummaries ?? {})[0] as [string, { trajectoryId: string }];
  const steps = async (): Promise<WireStep[]> => (await rpc<{ steps?: WireStep[] }>("GetCascadeTrajectorySteps", { cascadeId: conversationId })).steps ?? [];
  const screen = (): Promise<string> => tmux.capture(target);
  const waitFor = (predicate: (s: string) => boolean, what: string): Promise<string> => tmux.waitForScreen(target, predicate, what, 15_000);
  return {
    target,
    conversationId,
    trajectoryId: summary.trajectoryId,
    rpc,
    steps,
    async runStatus() {
      const all = await rpc<{ trajectorySummaries?: Record<string, { status?: string }> }>("GetAllCascadeTrajectories", {});
      return all.trajectorySummaries?.[conversationId]?.status;
    },
    screen,
    waitFor,
    keys: (...keys) => tmux.sendKeys(target, ...keys),
    async typeTurn(text) {
      await tmux.paste(target, text);
      await waitFor(
        (s) =>
          composer(s)
            .join("\n")
            .includes(text.split("\n")[0] ?? text),
        `the draft "${text}"`,
      );
      await tmux.sendKeys(target, "Enter");
      await waitFor(
        (s) =>
          !composer(s)
            .join("\n")
            .includes(text.split("\n")[0] ?? text),
        "the draft leaving the composer",
      );
    },
    async waitingStep() {
      let last: WireStep[] = [];
      return until(
        async () => {
          last = await steps();
          const index = last.findIndex((s) => s.status === "CORTEX_STEP_STATUS_WAITING");
          return index >= 0 ? index : undefined;
        },
        "a WAITING step",
        { seen: () => JSON.stringify(last.map((s) => [s.type, s.status])) },
      );
    },
    async stepUntil(index, ok, what) {
      let last: WireStep | undefined;
      return until(
        async () => {
          last = (await steps())[index];
          return last !== undefined && ok(last) ? last : undefined;
        },
        what,
        { seen: () => JSON.stringify(last) },
      );
    },
  };
}

/** agy's input box: the lines between the last two full-width rules ([] when no composer is drawn). */
export function composer(screen: string): string[] {
  const lines = screen.split("\n");
  const rules = lines.flatMap((line, i) => (line === RULE ? [i] : []));
  const [a, b] = rules.slice(-2);
  return a === undefined || b === undefined ? [] : lines.slice(a + 1, b);
}

/** The screen's rows without the blank rows under a top-anchored screen. */
export function rows(screen: string): string[] {
  const lines = screen.split("\n");
  while (lines.length > 0 && lines[lines.length - 1]?.trim() === "") lines.pop();
  return lines;
}
