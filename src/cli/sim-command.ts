/**
 * `agy-bridge sim`: a simulated agy — the fake language server plus the fake
 * TUI in this terminal, or headless, or (`--as-agy`) under a launcher whose
 * process shape discovery takes for agy: `…/bin/agy --csrf_token T`, the
 * listeners among its fds, a child with the ANTIGRAVITY_* environment
 * (spike-notes §2.1–2.3, §10.2, §10.3). The token is never printed.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { Stream } from "node:stream";
import { AgyBridgeError } from "../errors.js";
import { buildAgyLauncher } from "../sim/launcher/build-agy-launcher.js";
import { loadScenarios } from "../sim/engine/scenarios.js";
import { AGY_VERSIONS, DEFAULT_AGY_VERSION, isAgyVersion, type AgyVersion } from "../sim/engine/persona.js";
import { startSimServer, type SimServer, type SimServerOptions } from "../sim/server/server.js";
import { createFakeTui } from "../sim/tui/fake-tui.js";
import { AGY_TRANSCRIPT_NAMES, writeAgyFiles, type AgyTranscriptName } from "../sim/engine/agy-files.js";
import {
  resolveTuiVersion,
  TUI_DIGITS,
  TUI_STALE_DIALOGS,
  TUI_VERSIONS,
  type TuiCommandOptions,
  type TuiDigits,
  type TuiStaleDialog,
  type TuiVersion,
} from "../sim/tui/tui-options.js";
import { parseCommandArgs, UsageError, type ParseArgsOptionsConfig, type ParsedArgs } from "./args.js";
import { defineCommand, type CliIo, type Command } from "./command.js";
import { runReplay } from "./sim-replay.js";
import { untilAborted } from "../util/sleep.js";

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
  /** Mints the `--as-agy` CSRF token when none is given; default a random UUID. */
  mintToken?: () => string;
}

const HELP = `Usage: agy-bridge sim [options]

Runs a simulated agy: a fake language server (TLS + plain HTTP on 127.0.0.1)
and the fake agy TUI in this terminal. Point agy-bridge, or your own bot, at it.

Options:
  --csrf_token T, --csrf-token T   require header x-codeium-csrf-token: T on every call
                                   (with --as-agy: default a random token, as agy does)
  --no-csrf                        with --as-agy: no token and no header check, like
                                   agy 1.0.x
  --headless                       no TUI; print {"conversationId","tlsUrl","plainUrl","pid",
                                   "csrfTokenPresent","agyVersion"} (plus "agyPid" under
                                   --as-agy) as one JSON line and run until SIGINT/SIGTERM
  --as-agy                         run under a compiled launcher named …/bin/agy that owns
                                   the listeners and takes the token as its first argument,
                                   with a child process carrying the ANTIGRAVITY_*
                                   environment, so discovery finds it like agy, and that
                                   tmux reports as the pane's command "agy" (needs cc)
  --agy-version V                  the agy whose wire to speak: 1.0.10 (default), 1.1 or
                                   1.2; each sends only the fields that version is
                                   recorded to send (docs/simulator.md, "Personas")
  --scenarios DIR                  scenario files to play (default: the bundled ones)
  --interaction-timeout MS         an unanswered prompt times out after MS (default 300000)
  --speed X                        multiply scenario delays by X (0 = no delays; default 1)
  --listen-fds TLS,PLAIN           serve on inherited listening fds (used by --as-agy)
  --tui-version V                  whose screen and keys the TUI plays: 1.0, 1.1 (default),
                                   1.2.1 (drops "? for shortcuts" after a tool turn) or
                                   1.2 (agy 1.2.x as captured on 1.2.1-1.2.17: "Run this
                                   command?" … "4. No, cancel", digits answer at once, Esc
                                   at an approval interrupts the turn, LF inserts a
                                   newline); a full version such as 1.2.10 or 1.1.27 plays
                                   its line (1.2.10 → 1.2) and shows in the banner
  --tui-digits accept|ignore       before 1.2: whether arrow menus take typed digits
                                   (default ignore; accept = agy 1.0.10)
  --tui-stale-dialog close|stay    after an answer over RPC, the TUI's dialog closes by
                                   itself (close) or stays drawn until keys close it
                                   (stay, the default, as on agy 1.0.10)
  --tui-command-options 4|2        1.2 command dialogs: four options (default) or the
                                   two-option "Yes, run command" / "No, cancel"
  --tui-tasks N                    show "· N task(s) · /tasks" on the status row
  --home DIR                       write agy's files as a turn plays (brain/<id>/.system_
                                   generated/logs/transcript.jsonl, cache/last_
                                   conversations.json) under DIR/.gemini/antigravity-cli
  --agy-files                      the same under $HOME (never by default: a real agy's
                                   files there would be changed)
  --agy-transcript NAME            the transcript's file name: transcript.jsonl (default)
                                   or transcript_full.jsonl (sources disagree)
  --trust-prompt                   start on agy's folder-trust screen
  --populate N,M                   also host N conversations of M settled steps each
                                   (for scale benchmarks; docs/scale.md)
  --replay DIR                     serve a capture (agy-bridge capture, docs/capture.md)
                                   instead of scenarios: its RPC answers, stream frames and
                                   screens on the recorded timeline (with --speed,
                                   --csrf-token and --headless; the banner is on stderr)
  -h, --help                       show this help

In the TUI: Enter submits, Esc cancels a running turn, / opens the command
popup (/clear, /model, …), shift+tab cycles modes; in a dialog Up/Down move
the pointer, Enter confirms the pointed option, Esc declines (1.2: a digit
answers at once, Esc at an approval interrupts the turn, Esc does nothing in
"Pending edit" and skips a question, Tab opens the amend field). C-c on an
empty draft quits.
The CSRF token is never printed.
`;

const SIM_OPTIONS = {
  // agy's own spelling, and the one every other agy-bridge command uses.
  csrf_token: { type: "string" },
  "csrf-token": { type: "string" },
  "no-csrf": { type: "boolean" },
  headless: { type: "boolean" },
  "as-agy": { type: "boolean" },
  scenarios: { type: "string" },
  "agy-version": { type: "string" },
  "interaction-timeout": { type: "string" },
  speed: { type: "string" },
  "listen-fds": { type: "string" },
  "tui-version": { type: "string" },
  "tui-digits": { type: "string" },
  "tui-stale-dialog": { type: "string" },
  "tui-command-options": { type: "string" },
  "tui-tasks": { type: "string" },
  home: { type: "string" },
  "agy-files": { type: "boolean" },
  "agy-transcript": { type: "string" },
  "trust-prompt": { type: "boolean" },
  populate: { type: "string" },
  replay: { type: "string" },
} as const satisfies ParseArgsOptionsConfig;

/** The `sim` subcommand; `deps.self` says how to re-run this CLI under the launcher. */
export function createSimCommand(deps: SimCommandDeps = {}): Command {
  return defineCommand({
    name: "sim",
    summary: "run the simulated agy (language server + TUI)",
    help: HELP,
    options: SIM_OPTIONS,
    async run(io, parsed) {
      const args = simArgs(parsed.values);
      const self = deps.self ?? currentProcess;
      try {
        if (args.replay !== undefined)
          return await runReplay(io, {
            dir: args.replay,
            headless: args.headless,
            ...(args.speed === undefined ? {} : { speed: args.speed }),
            ...(args.csrfToken === undefined ? {} : { csrfToken: args.csrfToken }),
          });
        if (args.asAgy) return await runAsAgy(io, args, self(), deps.mintToken ?? randomUUID);
        return await runServer(io, args, self());
      } catch (error) {
        io.stderr.write(`agy-bridge sim: ${AgyBridgeError.from(error).message}\n`);
        return 1;
      }
    },
  });
}

/** The `sim` subcommand wired to this node process. */
export const simCommand: Command = createSimCommand();

// The CLI is the one layer allowed to read its own process.
function currentProcess(): SimSelf {
  const script = process.argv[1];
  if (script === undefined) throw new AgyBridgeError("internal", "cannot tell which script runs agy-bridge; start it as `agy-bridge sim`");
  // The real path, not an npm bin link: a child whose command line reads
  // `…/bin/agy-bridge` would match discovery's `bin/agy` test while it holds the listeners.
  return { node: process.execPath, args: [...process.execArgv, realpathSync(script)], pid: process.pid };
}

async function runServer(io: CliIo, args: SimArgs, self: SimSelf): Promise<number> {
  const options: SimServerOptions = {};
  if (args.csrfToken !== undefined) options.csrfToken = args.csrfToken;
  if (args.listenFds !== undefined) options.listenFds = args.listenFds;
  if (args.scenariosDir !== undefined) options.scenarios = await loadScenarios(args.scenariosDir);
  if (args.agyVersion !== undefined) options.agyVersion = args.agyVersion;
  if (args.interactionTimeoutMs !== undefined) options.interactionTimeoutMs = args.interactionTimeoutMs;
  if (args.speed !== undefined) options.speed = args.speed;
  if (args.populate !== undefined) options.populate = args.populate;
  const server = await startSimServer(options);
  const home = args.home ?? (args.agyFiles === true ? io.env.HOME : undefined);
  const files =
    home === undefined || home === ""
      ? undefined
      : writeAgyFiles(server.engine, {
          home,
          cwd: process.cwd(),
          ...(args.agyTranscript !== undefined ? { transcriptName: args.agyTranscript } : {}),
          onError: (error) => io.stderr.write(`agy-bridge sim: ${error.message}\n`),
        });
  try {
    if (args.headless) {
      io.stdout.write(`${JSON.stringify(headlessInfo(io, args, server, self))}\n`);
      await untilAborted(io.signal);
      return 0;
    }
    const tui = createFakeTui({
      port: server.engine.tuiPort(),
      input: io.stdin,
      output: io.stdout,
      banner: [
        // Real agy names its version in the banner (`Antigravity CLI 1.2.1`); the simulator does when given a full one.
        ...(args.tuiFullVersion !== undefined ? [`Antigravity CLI ${args.tuiFullVersion}`] : []),
        `agy (simulated by agy-bridge) · RPC ${server.tlsUrl} (TLS) · ${server.plainUrl} (plain)`,
      ],
      ...(args.tuiVersion !== undefined ? { version: args.tuiVersion } : {}),
      ...(args.tuiDigits !== undefined ? { digits: args.tuiDigits } : {}),
      ...(args.tuiStaleDialog !== undefined ? { staleDialog: args.tuiStaleDialog } : {}),
      ...(args.tuiCommandOptions !== undefined ? { commandOptions: args.tuiCommandOptions } : {}),
      ...(args.tuiTasks !== undefined ? { tasks: args.tuiTasks } : {}),
      ...(args.trustPrompt ? { trustPath: workspaceLabel(io.env.HOME) } : {}),
    });
    tui.start();
    await Promise.race([tui.closed, untilAborted(io.signal)]);
    tui.stop();
    return 0;
  } finally {
    files?.close();
    await server.close();
  }
}

function headlessInfo(io: CliIo, args: SimArgs, server: SimServer, self: SimSelf): Record<string, unknown> {
  const info: Record<string, unknown> = {
    conversationId: server.engine.activeConversationId,
    tlsUrl: server.tlsUrl,
    plainUrl: server.plainUrl,
    pid: self.pid,
    csrfTokenPresent: args.csrfToken !== undefined,
    agyVersion: server.agyVersion,
  };
  // Under the launcher, discovery finds the launcher's pid, not ours.
  const launcherPid = Number(io.env.AGY_SIM_LAUNCHER_PID);
  if (args.listenFds !== undefined && Number.isInteger(launcherPid) && launcherPid > 0) info.agyPid = launcherPid;
  return info;
}

async function runAsAgy(io: CliIo, args: SimArgs, self: SimSelf, mintToken: () => string): Promise<number> {
  const cacheRoot = io.env.AGY_BRIDGE_CACHE_DIR ?? join(io.env.XDG_CACHE_HOME ?? join(io.env.HOME ?? "/tmp", ".cache"), "agy-bridge");
  const launcher = await buildAgyLauncher({ outDir: join(cacheRoot, "launcher"), env: io.env });
  // Newer agy always has a token, as its FIRST argument (spike-notes §10.3); --no-csrf models 1.0.x.
  const token = args.csrfToken ?? (args.noCsrf ? undefined : mintToken());
  const launcherArgs = [...(token === undefined ? [] : ["--csrf_token", token]), ...forwardedArgs(args)];
  const env = {
    ...io.env,
    AGY_SIM_NODE: self.node,
    AGY_SIM_ARGV: [...self.args, "sim", "--listen-fds", "3,4"].join("\n"),
    // What discovery reads without starting agy: the version agy gives its children, and that this is our simulator.
    // The TUI's version wins when one is given: the bridge picks its keys by this version, and a 1.2 screen
    // keyed as 1.0 would get an Escape that cancels the approved command (spike-notes §15).
    ANTIGRAVITY_LS_VERSION: `cli-${args.tuiFullVersion ?? args.tuiVersion ?? args.agyVersion ?? DEFAULT_AGY_VERSION}`,
    AGY_BRIDGE_SIMULATOR: "1",
    // On a terminal the launcher leads the foreground process group, so tmux names the pane `agy` (spike-notes §14 #10).
    ...((io.stdin as { isTTY?: boolean }).isTTY === true ? { AGY_SIM_FOREGROUND: "1" } : {}),
  };
  // The launcher shares this terminal: the TUI it runs reads keys from it directly.
  const stdio = [io.stdin, io.stdout, io.stderr].map((stream) => (stream instanceof Stream ? stream : ("inherit" as const)));
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn(launcher, launcherArgs, { env, stdio });
  } catch (error) {
    throw new AgyBridgeError("internal", `cannot start the agy launcher: ${(error as Error).message}`, { cause: error });
  }
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
  if (args.agyVersion !== undefined) out.push("--agy-version", args.agyVersion);
  if (args.interactionTimeoutMs !== undefined) out.push("--interaction-timeout", String(args.interactionTimeoutMs));
  if (args.speed !== undefined) out.push("--speed", String(args.speed));
  if (args.tuiVersion !== undefined) out.push("--tui-version", args.tuiFullVersion ?? args.tuiVersion);
  if (args.tuiDigits !== undefined) out.push("--tui-digits", args.tuiDigits);
  if (args.tuiStaleDialog !== undefined) out.push("--tui-stale-dialog", args.tuiStaleDialog);
  if (args.tuiCommandOptions !== undefined) out.push("--tui-command-options", String(args.tuiCommandOptions));
  if (args.tuiTasks !== undefined) out.push("--tui-tasks", String(args.tuiTasks));
  if (args.home !== undefined) out.push("--home", args.home);
  if (args.agyFiles === true) out.push("--agy-files");
  if (args.agyTranscript !== undefined) out.push("--agy-transcript", args.agyTranscript);
  if (args.trustPrompt) out.push("--trust-prompt");
  if (args.populate !== undefined) out.push("--populate", `${args.populate.conversations},${args.populate.steps}`);
  return out;
}

/** This directory as agy's trust screen names it: `~/…` under the home directory. */
function workspaceLabel(home: string | undefined): string {
  const cwd = process.cwd();
  return home !== undefined && home !== "" && (cwd === home || cwd.startsWith(`${home}/`)) ? `~${cwd.slice(home.length)}` : cwd;
}

function signalNumber(signal: NodeJS.Signals): number {
  return signal === "SIGINT" ? 2 : signal === "SIGHUP" ? 1 : signal === "SIGKILL" ? 9 : 15;
}

// Arguments. Errors name the option, never echo its value.

/** Parsed `agy-bridge sim` options. */
export interface SimArgs {
  csrfToken?: string;
  noCsrf: boolean;
  listenFds?: { tls: number; plain: number };
  headless: boolean;
  asAgy: boolean;
  scenariosDir?: string;
  /** The persona (`--agy-version`); absent: the simulator's default, 1.0.10. */
  agyVersion?: AgyVersion;
  interactionTimeoutMs?: number;
  speed?: number;
  /** `--tui-version`: whose screen the TUI draws. */
  tuiVersion?: TuiVersion;
  /** `--tui-version` given as a full agy version (`1.2.10`): shown in the banner. */
  tuiFullVersion?: string;
  /** `--tui-digits`: whether the TUI's arrow menus take digits. */
  tuiDigits?: TuiDigits;
  /** `--tui-stale-dialog`: whether a dialog answered over RPC closes by itself. */
  tuiStaleDialog?: TuiStaleDialog;
  /** `--tui-command-options`: 4 or 2 options in a 1.2 command dialog. */
  tuiCommandOptions?: TuiCommandOptions;
  /** `--tui-tasks N`: the status row's task strip. */
  tuiTasks?: number;
  /** `--home DIR`: write agy's files there. */
  home?: string;
  /** `--agy-files`: write agy's files under $HOME. Neither: none are written. */
  agyFiles?: boolean;
  /** `--agy-transcript`: the transcript's file name. */
  agyTranscript?: AgyTranscriptName;
  /** `--trust-prompt`: start on the folder-trust screen. */
  trustPrompt?: boolean;
  /** `--populate N,M`: N more conversations of M settled steps each. */
  populate?: { conversations: number; steps: number };
  /** `--replay DIR`: serve a capture instead of scenarios. */
  replay?: string;
}

/** Parses `agy-bridge sim` options (not `--help`); throws a {@link UsageError} naming the option. */
export function parseSimArgs(argv: readonly string[]): SimArgs {
  return simArgs(parseCommandArgs("sim", argv, SIM_OPTIONS).values);
}

function simArgs(values: ParsedArgs<typeof SIM_OPTIONS>["values"]): SimArgs {
  const args: SimArgs = { noCsrf: values["no-csrf"] === true, headless: values.headless === true, asAgy: values["as-agy"] === true };
  if (values.csrf_token !== undefined && values["csrf-token"] !== undefined) {
    throw new UsageError("give the CSRF token once, as --csrf_token or --csrf-token");
  }
  const token = values.csrf_token ?? values["csrf-token"];
  if (token === "") throw new UsageError("the CSRF token must not be empty");
  if (token !== undefined && args.noCsrf) throw new UsageError("--no-csrf and a CSRF token cannot be combined");
  if (token !== undefined) args.csrfToken = token;
  if (values["listen-fds"] !== undefined) args.listenFds = parseFds(values["listen-fds"]);
  if (values.scenarios !== undefined) args.scenariosDir = values.scenarios;
  if (values["agy-version"] !== undefined) {
    if (!isAgyVersion(values["agy-version"])) throw new UsageError(`--agy-version wants one of ${AGY_VERSIONS.join(", ")}`);
    args.agyVersion = values["agy-version"];
  }
  if (values["interaction-timeout"] !== undefined) {
    args.interactionTimeoutMs = parseNumber(
      "--interaction-timeout",
      "a positive whole number of milliseconds",
      values["interaction-timeout"],
      (n) => Number.isInteger(n) && n > 0,
    );
  }
  if (values.speed !== undefined) args.speed = parseNumber("--speed", "a number >= 0", values.speed, (n) => n >= 0);
  const tuiVersion = values["tui-version"];
  if (tuiVersion !== undefined) {
    const known = resolveTuiVersion(tuiVersion);
    if (known === undefined)
      throw new UsageError(`--tui-version wants one of ${TUI_VERSIONS.join(", ")}, or a full agy version from 1.0.0 to 1.2.9999 (such as 1.2.10)`);
    args.tuiVersion = known.version;
    if (known.full !== undefined) args.tuiFullVersion = known.full;
  }
  const stale = values["tui-stale-dialog"];
  if (stale !== undefined) {
    const known = TUI_STALE_DIALOGS.find((v) => v === stale);
    if (known === undefined) throw new UsageError(`--tui-stale-dialog wants one of ${TUI_STALE_DIALOGS.join(", ")}`);
    args.tuiStaleDialog = known;
  }
  const commandOptions = values["tui-command-options"];
  if (commandOptions !== undefined) {
    if (commandOptions !== "2" && commandOptions !== "4") throw new UsageError("--tui-command-options wants 4 or 2");
    args.tuiCommandOptions = commandOptions === "2" ? 2 : 4;
  }
  if (values["tui-tasks"] !== undefined) {
    args.tuiTasks = parseNumber("--tui-tasks", "a whole number of tasks from 0 to 99", values["tui-tasks"], (n) => Number.isInteger(n) && n >= 0 && n <= 99);
  }
  if (values.home !== undefined) {
    if (values.home === "" || !values.home.startsWith("/")) throw new UsageError("--home wants an absolute directory path");
    args.home = values.home;
  }
  if (values["agy-files"] === true) {
    if (args.home !== undefined) throw new UsageError("give agy's files one place: --home DIR or --agy-files ($HOME)");
    args.agyFiles = true;
  }
  const transcript = values["agy-transcript"];
  if (transcript !== undefined) {
    const known = AGY_TRANSCRIPT_NAMES.find((name) => name === transcript);
    if (known === undefined) throw new UsageError(`--agy-transcript wants one of ${AGY_TRANSCRIPT_NAMES.join(", ")}`);
    args.agyTranscript = known;
  }
  const tuiDigits = values["tui-digits"];
  if (tuiDigits !== undefined) {
    const known = TUI_DIGITS.find((v) => v === tuiDigits);
    if (known === undefined) throw new UsageError(`--tui-digits wants one of ${TUI_DIGITS.join(", ")}`);
    args.tuiDigits = known;
  }
  if (values["trust-prompt"] === true) args.trustPrompt = true;
  if (values.populate !== undefined) {
    const match = /^(\d{1,6}),(\d{1,7})$/.exec(values.populate.trim());
    if (match === null) throw new UsageError('--populate wants "N,M": N conversations of M steps, e.g. 100,1000');
    args.populate = { conversations: Number(match[1]), steps: Number(match[2]) };
  }
  if (values.replay !== undefined) {
    if (values.replay === "") throw new UsageError("--replay needs a capture directory");
    if (args.asAgy || args.scenariosDir !== undefined || args.listenFds !== undefined)
      throw new UsageError("--replay serves a capture: it cannot be combined with --as-agy, --scenarios or --listen-fds");
    args.replay = values.replay;
  }
  if (args.asAgy && args.listenFds !== undefined) {
    throw new UsageError("--as-agy and --listen-fds cannot be combined (the launcher passes the fds)");
  }
  return args;
}

function parseFds(text: string): { tls: number; plain: number } {
  const parts = text.split(",").map((part) => (/^\d+$/.test(part) ? Number(part) : Number.NaN));
  const [tls, plain] = parts;
  if (parts.length !== 2 || tls === undefined || plain === undefined || !Number.isSafeInteger(tls) || !Number.isSafeInteger(plain)) {
    throw new UsageError('--listen-fds wants two file descriptors, "TLS,PLAIN"');
  }
  return { tls, plain };
}

function parseNumber(flag: string, wanted: string, text: string, ok: (n: number) => boolean): number {
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n) || !ok(n)) throw new UsageError(`${flag} wants ${wanted}`);
  return n;
}
