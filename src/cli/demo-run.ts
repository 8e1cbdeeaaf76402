/**
 * The demo, end to end through the real parts: the simulated agy in a private
 * tmux server, found by discovery from its pane, followed by an `AgySession`,
 * turns typed into its TUI by the tmux driver, gates answered over RPC (and
 * the TUI's own prompt closed with keys), the screen shown, everything it
 * started ended.
 */
import { setMaxListeners } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { AgyBridgeError } from "../errors.js";
import { DiscoveryError, findServer, type PaneRef, type ServerBinding } from "../discovery/index.js";
import type { MapperEvent } from "../mapper/index.js";
import { AgySession, type AgySessionApi, type AnswerResult, type TurnDriver } from "../session/index.js";
import type { CliIo } from "./command.js";
import { createDemoOutput, type DemoOutput } from "./demo-output.js";
import { currentSelf, startDemoWorld, type DemoSelf, type DemoWorld } from "./demo-world.js";
import { terminalText } from "./terminal-text.js";

export interface DemoOptions {
  json: boolean;
  turns: string[];
  /** Bound on each turn, and on finding the simulator. */
  timeoutMs: number;
  /** `agy-bridge sim --speed`: scenario delays are multiplied by it. */
  speed: number;
}

export interface DemoDeps {
  /** How to start this CLI in the pane; default this process's node, flags and script. */
  self?: () => DemoSelf;
  /**
   * Calls `onSignal` on SIGINT, SIGTERM and SIGHUP until the returned function
   * is called; default this process's signals.
   */
  trapSignals?: (onSignal: () => void) => () => void;
}

/**
 * The run holds the process's stop signals itself: a terminal's Ctrl-C reaches
 * both `tsx` and this process, and tsx relays it once more, so the second
 * SIGINT would otherwise end the process mid-cleanup and leave the simulator
 * running. Each signal only asks the run to stop; cleanup is bounded.
 */
function trapProcessSignals(onSignal: () => void): () => void {
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  for (const signal of signals) process.on(signal, onSignal);
  return () => {
    for (const signal of signals) process.off(signal, onSignal);
  };
}

/** What the event consumer has seen so far, for the turn loop to wait on. */
interface Progress {
  turnsEnded: number;
  turnsFailed: number;
  /** Answers in flight (the turn is not over until they are). */
  answering: Set<Promise<void>>;
  /** Prompt keys the session pressed (after its RPC answers), not yet reported. */
  keysPressed: { pane: string; keys: string }[];
  failure?: AgyBridgeError;
  wake(): void;
}

/** Runs the demo; returns the exit code (0 done, 1 a step failed, 130 interrupted). */
export async function runDemo(io: CliIo, options: DemoOptions, deps: DemoDeps = {}): Promise<number> {
  const startedAt = Date.now();
  const out = createDemoOutput({ json: options.json, stdout: io.stdout, stderr: io.stderr });
  const stop = new AbortController();
  // Every reader, probe and tmux command of the run listens on it.
  setMaxListeners(100, stop.signal);
  const onAbort = () => stop.abort(new AgyBridgeError("aborted", "the demo was interrupted"));
  if (io.signal.aborted) onAbort();
  io.signal.addEventListener("abort", onAbort, { once: true });
  let interrupted = false;
  const releaseSignals = (deps.trapSignals ?? trapProcessSignals)(() => {
    interrupted = true;
    onAbort();
  });

  let world: DemoWorld | undefined;
  let session: AgySessionApi | undefined;
  let consumer: Promise<void> | undefined;
  let failure: AgyBridgeError | undefined;
  try {
    const self = (deps.self ?? currentSelf)();
    world = await startDemoWorld({ self, simArgs: ["--speed", String(options.speed)] });
    out.record({
      demo: "tmux",
      socketName: world.socketName,
      socketPath: world.socketPath,
      pane: world.target,
      panePid: world.panePid,
      command: "agy-bridge sim --as-agy",
    });
    const pane: PaneRef = { target: world.target, socketName: world.socketName };
    const binding = await locate(world, pane, options.timeoutMs, stop.signal);
    await world.noteProcesses();

    const progress: Progress = { turnsEnded: 0, turnsFailed: 0, answering: new Set(), keysPressed: [], wake: () => undefined };
    let first: ServerBinding | undefined = binding;
    session = await AgySession.attach({
      pane,
      ...(binding.conversationId === undefined ? {} : { conversationId: binding.conversationId }),
      turnDriver: paneDriver(world, progress.keysPressed),
      // The first binding is the one just found; a re-location (server restarted) asks discovery again.
      locate: async (query) => {
        const found = first ?? (await findServer(query, { signal: stop.signal }));
        first = undefined;
        return found;
      },
      signal: stop.signal,
    });
    out.record({
      demo: "discovered",
      how: binding.how,
      url: binding.url,
      ...(binding.pid === undefined ? {} : { pid: binding.pid }),
      conversationId: session.conversationId,
      csrfTokenPresent: binding.csrfToken !== undefined,
    });

    const live = session;
    consumer = (async () => {
      for await (const event of live.events({ signal: stop.signal })) {
        out.event(event);
        react(live, event, progress, out);
        progress.wake();
      }
    })().catch((error: unknown) => {
      if (!stop.signal.aborted) progress.failure ??= AgyBridgeError.from(error);
      progress.wake();
    });

    for (const [i, text] of options.turns.entries()) {
      const endedBefore = progress.turnsEnded;
      const failedBefore = progress.turnsFailed;
      const delivery = await session.sendTurn(text, { signal: stop.signal });
      out.record({ demo: "turn", turn: i + 1, text, result: delivery.result, reason: delivery.reason });
      if (delivery.result !== "delivered") throw new AgyBridgeError("internal", `turn ${i + 1} was not delivered to the TUI: ${delivery.reason}`);
      await until(
        progress,
        () => progress.turnsEnded > endedBefore && progress.answering.size === 0,
        options.timeoutMs,
        `turn ${i + 1} ("${clip(text)}") did not finish within ${options.timeoutMs} ms`,
        stop.signal,
      );
      if (progress.turnsFailed > failedBefore) throw new AgyBridgeError("internal", `turn ${i + 1} ("${clip(text)}") ended in failure; see the events above`);
    }

    const screen = await world.driver.capturePane(world.target, { signal: stop.signal });
    out.record({ demo: "screen", pane: world.target, lines: screen.split("\n") });
  } catch (error) {
    failure = io.signal.aborted || interrupted ? new AgyBridgeError("aborted", "the demo was interrupted") : AgyBridgeError.from(error);
  } finally {
    io.signal.removeEventListener("abort", onAbort);
    stop.abort();
    await session?.close().catch(() => undefined);
    await consumer;
    if (world !== undefined) {
      const report = await world.close();
      out.record({ demo: "cleanup", processesEnded: report.ended, leftover: report.leftover, socketRemoved: report.socketRemoved });
      if (failure === undefined && report.leftover.length > 0) {
        failure = new AgyBridgeError("internal", `processes ${report.leftover.join(", ")} from the demo's tmux pane are still running after SIGKILL`);
      } else if (failure === undefined && !report.socketRemoved) {
        failure = new AgyBridgeError("internal", `the demo's tmux socket ${world.socketPath} could not be removed`);
      }
    }
    releaseSignals();
  }
  if (failure !== undefined) {
    out.record({ demo: "failed", message: failure.message });
    io.stderr.write(`${terminalText(`agy-bridge demo: ${failure.message}${/[.!?]$/.test(failure.message) ? "" : "."}`)}\n`);
    return failure.code === "aborted" ? 130 : 1;
  }
  out.record({ demo: "done", ms: Date.now() - startedAt });
  return 0;
}

/** Discovery from the pane, retried while the simulator starts (the launcher may be compiled first). */
async function locate(world: DemoWorld, pane: PaneRef, timeoutMs: number, signal: AbortSignal): Promise<ServerBinding> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await findServer({ pane, signal }, { signal });
    } catch (error) {
      if (!(error instanceof DiscoveryError) || signal.aborted) throw error;
      const state = await world.paneState().catch(() => ({ dead: false, lastLine: "" }));
      if (state.dead) {
        const said = state.lastLine === "" ? "" : ` (its last line: ${clip(state.lastLine)})`;
        throw new AgyBridgeError(
          "internal",
          `the simulator in the demo's pane exited before discovery found it${said}; run \`agy-bridge sim --as-agy\` to see why`,
        );
      }
      if (Date.now() > deadline)
        throw new AgyBridgeError("timeout", `discovery did not find the simulator in pane ${world.target} within ${timeoutMs} ms: ${error.message}`);
      await sleep(200, undefined, { signal });
    }
  }
}

/**
 * The session's turn driver over the demo's tmux server (the pane's target
 * string, the socket chosen with the driver), noting the keys that closed
 * agy's own dialog after an answer (Escape, never digits) so the demo can
 * show them.
 */
function paneDriver(world: DemoWorld, keysPressed: Progress["keysPressed"]): TurnDriver {
  return {
    deliverTurn: (pane, text, options) => world.driver.deliverTurn(pane.target, text, options),
    async closePrompt(pane, options) {
      const result = await world.driver.closePrompt(pane.target, options);
      if (result.keys.length > 0) keysPressed.push({ pane: pane.target, keys: result.keys.join(" ") });
      return result;
    },
    answerPrompt: (pane, choice, options) => world.driver.answerPrompt(pane.target, choice, options),
    readScreen: (pane, options) => world.driver.readPane(pane.target, options),
  };
}

/** Answers each gate as a cautious bot would: allow the command, pick the question's first option. */
function react(session: AgySessionApi, event: MapperEvent, progress: Progress, out: DemoOutput): void {
  if (event.type === "status" && (event.status === "idle" || event.status === "failed")) {
    progress.turnsEnded++;
    if (event.status === "failed") progress.turnsFailed++;
    return;
  }
  if (event.type !== "interaction_requested") return;
  const { interactionId, stepIndex, request } = event;
  let call: Promise<AnswerResult>;
  let record: { call: "approve" | "answer"; optionIds?: string[] };
  if (request.kind === "permission") {
    call = session.approve(interactionId);
    record = { call: "approve" };
  } else if (request.kind === "question") {
    const optionIds = (request.questions[0]?.options ?? []).slice(0, 1).map((o) => o.id);
    call = session.answer(interactionId, { optionIds });
    record = { call: "answer", optionIds };
  } else {
    progress.failure ??= new AgyBridgeError(
      "invalid_argument",
      `step ${stepIndex} waits on a ${request.variant || "unknown"} gate that only a person can answer in the agy TUI`,
    );
    return;
  }
  const done = call.then(
    (result) => {
      out.record({
        demo: "answer",
        interactionId,
        stepIndex,
        kind: request.kind,
        ...record,
        result: result.result,
        ...(result.result === "delivered" ? { deliveredTo: result.stepIndex } : {}),
      });
      for (const pressed of progress.keysPressed.splice(0)) out.record({ demo: "prompt_keys", ...pressed });
      if (result.result !== "delivered")
        progress.failure ??= new AgyBridgeError("internal", `the answer to step ${stepIndex} was not delivered (${result.result})`);
    },
    (error: unknown) => {
      progress.failure ??= new AgyBridgeError("internal", `answering step ${stepIndex} over RPC failed: ${AgyBridgeError.from(error).message}`, {
        cause: error,
      });
    },
  );
  progress.answering.add(done);
  void done.finally(() => {
    progress.answering.delete(done);
    progress.wake();
  });
}

/** Waits until `done()` holds, re-checking on every event; fails on the consumer's failure or the bound. */
async function until(progress: Progress, done: () => boolean, timeoutMs: number, timeoutMessage: string, signal: AbortSignal): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (progress.failure !== undefined) throw progress.failure;
    if (done()) return;
    signal.throwIfAborted();
    if (Date.now() > deadline) throw new AgyBridgeError("timeout", timeoutMessage);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 100);
      progress.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

function clip(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
