/**
 * `agy-bridge sim` (the simulator's language server and its agy-like TUI)
 * running in a pane of a private tmux server, with a tmux driver whose
 * every tmux command is recorded: tests assert the exact keys the TUI was
 * sent (`send-keys`) and whether anything was pasted. The recording wraps
 * the real `spawnTmux`; nothing is faked.
 */
import { AgySession, type AgySessionApi, type AttachOptions, type TurnDriver } from "../../../src/session/index.js";
import { createTmuxDriver, spawnTmux, type TmuxDriver, type TmuxExec } from "../../../src/tmux/index.js";
import type { MapperEvent } from "../../../src/mapper/index.js";
import { BIN, createTmuxWorld, type TmuxWorld } from "./tmux-world.js";

const TOKEN = "7f3a9c1e5b2d4f6a8c0e1b3d5f7a9c2e";

export interface SimPane {
  world: TmuxWorld;
  /** `%N` of the pane running the simulator. */
  paneId: string;
  /** The simulator's plain-HTTP RPC URL. */
  url: string;
  token: string;
  /** A driver on the world's server whose tmux commands are recorded. */
  driver: TmuxDriver;
  /** The same driver as a session's turn driver. */
  turnDriver: TurnDriver;
  /** The key lists of every `send-keys` the driver ran, in order. */
  keysSent(): string[][];
  /** How many `paste-buffer` commands the driver ran. */
  pastes(): number;
  /** Forgets the recorded commands (after set-up steps). */
  resetRecording(): void;
  screen(): Promise<string>;
  waitForScreen(predicate: (screen: string) => boolean, what: string, timeoutMs?: number): Promise<string>;
  /** Attaches a session by URL to the simulator's conversation; the pane is given unless `pane: false`. */
  attach(options?: Omit<Partial<AttachOptions>, "pane"> & { pane?: AttachOptions["pane"] | false }): Promise<FollowedSession>;
  dispose(): Promise<void>;
}

export interface FollowedSession {
  session: AgySessionApi;
  log: MapperEvent[];
  waitFor(match: (e: MapperEvent) => boolean, what: string, ms?: number): Promise<MapperEvent>;
}

/** Starts the simulator in a fresh private tmux server; `simArgs` go after `sim` (e.g. `--tui-version 1.2.1`). */
export async function startSimPane(simArgs: readonly string[] = []): Promise<SimPane> {
  const world = await createTmuxWorld();
  const sessions: AgySessionApi[] = [];
  try {
    const paneId = await world.newSession("agy", [process.execPath, "--import", "tsx", BIN, "sim", "--speed", "0.05", "--csrf_token", TOKEN, ...simArgs], {
      columns: 140,
      rows: 45,
    });
    const banner = await world.waitForScreen(paneId, (s) => /\(plain\)/.test(s) && /^>/m.test(s), "the simulator's banner and composer", 30_000);
    const url = /(http:\/\/127\.0\.0\.1:\d+) \(plain\)/.exec(banner)![1]!;
    const commands: string[][] = [];
    const exec: TmuxExec = (file, args, options) => {
      commands.push([...args]);
      return spawnTmux(file, args, options);
    };
    const driver = createTmuxDriver({ socket: { name: world.socketName }, exec });
    const turnDriver: TurnDriver = {
      deliverTurn: (pane, text, options) => driver.deliverTurn(pane.target, text, options),
      closePrompt: (pane, options) => driver.closePrompt(pane.target, options),
      answerPrompt: (pane, choice, options) => driver.answerPrompt(pane.target, choice, options),
      readScreen: (pane, options) => driver.readPane(pane.target, options),
    };
    const argsOf = (name: string) => commands.filter((c) => c.includes(name));
    return {
      world,
      paneId,
      url,
      token: TOKEN,
      driver,
      turnDriver,
      keysSent: () => argsOf("send-keys").map((c) => c.slice(c.indexOf("-t") + 2)),
      pastes: () => argsOf("paste-buffer").length,
      resetRecording: () => void commands.splice(0),
      screen: () => world.capture(paneId),
      waitForScreen: (predicate, what, timeoutMs) => world.waitForScreen(paneId, predicate, what, timeoutMs),
      async attach(options = {}) {
        const { pane, ...rest } = options;
        const session = await AgySession.attach({
          url,
          csrfToken: TOKEN,
          turnDriver,
          ...(pane === false ? {} : { pane: pane ?? { target: paneId, socketName: world.socketName } }),
          ...rest,
        });
        sessions.push(session);
        return follow(session);
      },
      async dispose() {
        await Promise.allSettled(sessions.map((s) => s.close()));
        await world.dispose();
      },
    };
  } catch (error) {
    await Promise.allSettled(sessions.map((s) => s.close()));
    await world.dispose();
    throw error;
  }
}

function follow(session: AgySessionApi): FollowedSession {
  const log: MapperEvent[] = [];
  void (async () => {
    for await (const e of session.events()) log.push(e);
  })().catch(() => undefined);
  return {
    session,
    log,
    async waitFor(match, what, ms = 15_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const hit = log.find(match);
        if (hit !== undefined) return hit;
        if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms; saw ${log.map((e) => e.type).join(", ")}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

export const isGate = (e: MapperEvent): e is Extract<MapperEvent, { type: "interaction_requested" }> => e.type === "interaction_requested";
export const ranCommand = (e: MapperEvent): boolean => e.type === "function_call_output" && e.output === "/home/sim/project\n";
