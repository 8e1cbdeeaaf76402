/**
 * `agy-bridge sim`: a simulated agy — the fake language server plus the fake
 * TUI in this terminal, or headless, or (`--as-agy`) under a launcher whose
 * process shape discovery takes for agy (spike-notes §2.1–2.3).
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { Stream } from "node:stream";
import { AgyBridgeError } from "../errors.js";
import { buildAgyLauncher } from "../sim/launcher/build-agy-launcher.js";
import { loadScenarios } from "../sim/engine/scenarios.js";
import { startSimServer, type SimServer, type SimServerOptions } from "../sim/server/server.js";
import { createFakeTui } from "../sim/tui/fake-tui.js";
import type { CliIo, Command } from "./command.js";

/** How to start this CLI again (the `--as-agy` launcher re-runs it). */
export interface SimSelf {
  /** Absolute path of node. */
  node: string;
  /** Node flags and the CLI script, e.g. `["--import", "tsx", "/…/src/cli/bin.ts"]`. */
  args: string[];
  pid: number;
}

export interface SimCommandDeps {
  self?: () => SimSelf;
}

const HELP = `Usage: agy-bridge sim [options]

Runs a simulated agy: a fake language server (TLS + plain HTTP on 127.0.0.1)
and the fake agy TUI in this terminal. Point agy-bridge, or your own bot, at it.

Options:
  --csrf_token T, --csrf-token T   require header x-codeium-csrf-token: T on every call
  --headless                       no TUI; print {"conversationId","tlsUrl","plainUrl","pid"}
                                   as one JSON line and run until SIGINT/SIGTERM
  --as-agy                         run under a compiled launcher named …/bin/agy that owns
                                   the listeners, so discovery finds it like agy (needs cc)
  --scenarios DIR                  scenario files to play (default: the bundled ones)
  --interaction-timeout MS         an unanswered prompt times out after MS (default 300000)
  --speed X                        multiply scenario delays by X (0 = no delays; default 1)
  --listen-fds TLS,PLAIN           serve on inherited listening fds (used by --as-agy)
  -h, --help                       show this help

In the TUI: Enter submits, Esc cancels a running turn, /clear starts a new
conversation, digits + Enter answer prompts, C-c on an empty draft quits.
The CSRF token is never printed.
`;

/** The `sim` subcommand; `deps.self` says how to re-run this CLI under the launcher. */
export function createSimCommand(deps: SimCommandDeps = {}): Command {
  return {
    name: "sim",
    summary: "Run a simulated agy (language server + TUI) for tests and demos",
    help: HELP,
    async run(io) {
      let args: SimArgs;
      try {
        args = parseSimArgs(io.argv);
      } catch (error) {
        io.stderr.write(`agy-bridge sim: ${AgyBridgeError.from(error).message}\n`);
        return 2;
      }
      const self = deps.self ?? currentProcess;
      try {
        if (args.asAgy) return await runAsAgy(io, args, self());
        return await runServer(io, args, self());
      } catch (error) {
        io.stderr.write(`agy-bridge sim: ${AgyBridgeError.from(error).message}\n`);
        return 1;
      }
    },
  };
}

/** The `sim` subcommand wired to this node process. */
export const simCommand: Command = createSimCommand();

// The CLI is the one layer allowed to read its own process.
function currentProcess(): SimSelf {
  const script = process.argv[1];
  if (script === undefined) throw new AgyBridgeError("internal", "cannot tell which script runs agy-bridge; start it as `agy-bridge sim`");
  return { node: process.execPath, args: [...process.execArgv, script], pid: process.pid };
}

async function runServer(io: CliIo, args: SimArgs, self: SimSelf): Promise<number> {
  const options: SimServerOptions = {};
  if (args.csrfToken !== undefined) options.csrfToken = args.csrfToken;
  if (args.listenFds !== undefined) options.listenFds = args.listenFds;
  if (args.scenariosDir !== undefined) options.scenarios = await loadScenarios(args.scenariosDir);
  if (args.interactionTimeoutMs !== undefined) options.interactionTimeoutMs = args.interactionTimeoutMs;
  if (args.speed !== undefined) options.speed = args.speed;
  const server = await startSimServer(options);
  try {
    if (args.headless) {
      io.stdout.write(`${JSON.stringify(headlessInfo(io, args, server, self))}\n`);
      await aborted(io.signal);
      return 0;
    }
    const tui = createFakeTui({
      port: server.engine.tuiPort(),
      input: io.stdin,
      output: io.stdout,
      banner: [`agy (simulated by agy-bridge) · RPC ${server.tlsUrl} (TLS) · ${server.plainUrl} (plain)`],
    });
    tui.start();
    await Promise.race([tui.closed, aborted(io.signal)]);
    tui.stop();
    return 0;
  } finally {
    await server.close();
  }
}

function headlessInfo(io: CliIo, args: SimArgs, server: SimServer, self: SimSelf): Record<string, unknown> {
  const info: Record<string, unknown> = {
    conversationId: server.engine.activeConversationId,
    tlsUrl: server.tlsUrl,
    plainUrl: server.plainUrl,
    pid: self.pid,
  };
  // Under the launcher, discovery finds the launcher's pid, not ours.
  const launcherPid = Number(io.env.AGY_SIM_LAUNCHER_PID);
  if (args.listenFds !== undefined && Number.isInteger(launcherPid) && launcherPid > 0) info.agyPid = launcherPid;
  return info;
}

async function runAsAgy(io: CliIo, args: SimArgs, self: SimSelf): Promise<number> {
  const cacheRoot = io.env.AGY_BRIDGE_CACHE_DIR ?? join(io.env.XDG_CACHE_HOME ?? join(io.env.HOME ?? "/tmp", ".cache"), "agy-bridge");
  const launcher = await buildAgyLauncher({ outDir: join(cacheRoot, "launcher"), env: io.env });
  // agy's own token is its FIRST argument (newer builds), so it goes first.
  const launcherArgs = [...(args.csrfToken === undefined ? [] : ["--csrf_token", args.csrfToken]), ...forwardedArgs(args)];
  const env = {
    ...io.env,
    AGY_SIM_NODE: self.node,
    AGY_SIM_ARGV: [...self.args, "sim", "--listen-fds", "3,4"].join("\n"),
  };
  // The launcher shares this terminal: the TUI it runs reads keys from it directly.
  const stdio = [io.stdin, io.stdout, io.stderr].map((stream) => (stream instanceof Stream ? stream : "inherit" as const));
  const child = spawn(launcher, launcherArgs, { env, stdio });
  const stop = (): void => {
    child.kill("SIGTERM");
  };
  io.signal.addEventListener("abort", stop, { once: true });
  try {
    return await new Promise<number>((resolve, reject) => {
      child.once("error", (error) => reject(new AgyBridgeError("internal", `cannot start the agy launcher: ${error.message}`, { cause: error })));
      child.once("close", (code, signal) => resolve(code ?? (signal === null ? 1 : 128 + signalNumber(signal))));
    });
  } finally {
    io.signal.removeEventListener("abort", stop);
  }
}

function forwardedArgs(args: SimArgs): string[] {
  const out: string[] = [];
  if (args.headless) out.push("--headless");
  if (args.scenariosDir !== undefined) out.push("--scenarios", args.scenariosDir);
  if (args.interactionTimeoutMs !== undefined) out.push("--interaction-timeout", String(args.interactionTimeoutMs));
  if (args.speed !== undefined) out.push("--speed", String(args.speed));
  return out;
}

function signalNumber(signal: NodeJS.Signals): number {
  return signal === "SIGINT" ? 2 : signal === "SIGHUP" ? 1 : signal === "SIGKILL" ? 9 : 15;
}

function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}

// Argument parsing. Errors never echo a token value.

/** Parsed `agy-bridge sim` options. */
export interface SimArgs {
  csrfToken?: string;
  listenFds?: { tls: number; plain: number };
  headless: boolean;
  asAgy: boolean;
  scenariosDir?: string;
  interactionTimeoutMs?: number;
  speed?: number;
}

/** Parses `agy-bridge sim` options; throws an `invalid_argument` AgyBridgeError naming the flag. */
export function parseSimArgs(argv: readonly string[]): SimArgs {
  const args: SimArgs = { headless: false, asAgy: false };
  for (let i = 0; i < argv.length; i++) {
    const raw = argv[i] as string;
    const eq = raw.startsWith("--") ? raw.indexOf("=") : -1;
    const flag = eq < 0 ? raw : raw.slice(0, eq);
    const value = (): string => {
      if (eq >= 0) return raw.slice(eq + 1);
      const next = argv[i + 1];
      if (next === undefined) throw new AgyBridgeError("invalid_argument", `${flag} needs a value`);
      i += 1;
      return next;
    };
    switch (flag) {
      case "--csrf_token":
      case "--csrf-token": {
        const token = value();
        if (token === "") throw new AgyBridgeError("invalid_argument", `${flag} must not be empty`);
        args.csrfToken = token;
        break;
      }
      case "--listen-fds":
        args.listenFds = parseFds(value());
        break;
      case "--headless":
        args.headless = true;
        break;
      case "--as-agy":
        args.asAgy = true;
        break;
      case "--scenarios":
        args.scenariosDir = value();
        break;
      case "--interaction-timeout":
        args.interactionTimeoutMs = parseNumber(flag, value(), (n) => Number.isInteger(n) && n > 0);
        break;
      case "--speed":
        args.speed = parseNumber(flag, value(), (n) => n >= 0);
        break;
      default:
        throw new AgyBridgeError("invalid_argument", `unknown option ${JSON.stringify(flag)}; run \`agy-bridge sim --help\``);
    }
  }
  if (args.asAgy && args.listenFds !== undefined) {
    throw new AgyBridgeError("invalid_argument", "--as-agy and --listen-fds cannot be combined (the launcher passes the fds)");
  }
  return args;
}

function parseFds(text: string): { tls: number; plain: number } {
  const parts = text.split(",").map(Number);
  const [tls, plain] = parts;
  if (parts.length !== 2 || !parts.every((n) => Number.isInteger(n) && n >= 0) || tls === undefined || plain === undefined) {
    throw new AgyBridgeError("invalid_argument", `--listen-fds wants two file descriptors "TLS,PLAIN", got ${JSON.stringify(text)}`);
  }
  return { tls, plain };
}

function parseNumber(flag: string, text: string, ok: (n: number) => boolean): number {
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n) || !ok(n)) throw new AgyBridgeError("invalid_argument", `${flag} got an invalid number ${JSON.stringify(text)}`);
  return n;
}
