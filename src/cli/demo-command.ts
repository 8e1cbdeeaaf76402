/**
 * `agy-bridge demo`: the README's first command. A whole attended session,
 * supervised through the real parts: `agy-bridge sim --as-agy` in a private
 * tmux server, found by discovery, turns typed by the tmux driver, gates
 * answered over RPC. The run itself is in demo-run.ts.
 */
import { UsageError, type ParseArgsOptionsConfig } from "./args.js";
import { defineCommand, type Command } from "./command.js";
import { runDemo, type DemoDeps, type DemoOptions } from "./demo-run.js";

const DEFAULT_TURNS = ["Say hello in one short sentence.", "Run pwd", "Help me start a project"];

const HELP = `Usage: agy-bridge demo [--json] [--turn TEXT]... [--timeout MS] [--speed X]

Supervises a simulated agy end to end, the way you would supervise a real one
(needs tmux and a C compiler; no agy):

  1. starts \`agy-bridge sim --as-agy\` with its TUI in a private tmux server
     (tmux -L agy-bridge-demo-<random>);
  2. finds it through discovery, from its pane (the CSRF token is never printed);
  3. types each turn into the TUI with the tmux driver;
  4. shows the answer as it streams;
  5. answers the permission gate (allow) and the question (first option) over
     RPC, and closes the TUI's own prompt with keys;
  6. shows the TUI as the person sees it;
  7. ends every process it started and removes the tmux socket.

The default turns: a plain answer, a command behind a permission gate ("Run
pwd") and a single-select question ("Help me start a project").

Options:
  --json          NDJSON on stdout: the session's events, plus step records
                  with a "demo" field (tmux, discovered, turn, answer,
                  prompt_keys, screen, cleanup, done | failed)
  --turn TEXT     a turn to play instead of the default ones (repeatable)
  --timeout MS    bound on finding the simulator and on each turn (default 30000)
  --speed X       the simulator's speed factor for scenario delays (default 0.5)
  -h, --help      this text

Exit 0 when every turn finished and everything was cleaned up; 1 with one
sentence on stderr when a step failed (cleanup still runs); 130 on SIGINT.
`;

const DEMO_OPTIONS = {
  json: { type: "boolean" },
  turn: { type: "string", multiple: true },
  timeout: { type: "string" },
  speed: { type: "string" },
} as const satisfies ParseArgsOptionsConfig;

/** The `demo` subcommand; `deps` replaces how the simulator is started (tests). */
export function createDemoCommand(deps: DemoDeps = {}): Command {
  return defineCommand({
    name: "demo",
    summary: "a supervised session against the simulated agy, through tmux, discovery and RPC (the Quick start)",
    help: HELP,
    options: DEMO_OPTIONS,
    async run(io, parsed) {
      const v = parsed.values;
      const options: DemoOptions = {
        json: v.json === true,
        turns: v.turn !== undefined && v.turn.length > 0 ? [...v.turn] : [...DEFAULT_TURNS],
        timeoutMs: v.timeout === undefined ? 30_000 : positive("--timeout", "a positive whole number of milliseconds", v.timeout, Number.isInteger),
        speed: v.speed === undefined ? 0.5 : positive("--speed", "a number >= 0", v.speed, () => true, true),
      };
      if (options.turns.some((t) => t.trim() === "")) throw new UsageError("--turn needs some text");
      return runDemo(io, options, deps);
    },
  });
}

/** The `demo` subcommand wired to this process. */
export const demoCommand: Command = createDemoCommand();

function positive(flag: string, wanted: string, text: string, ok: (n: number) => boolean, zeroOk = false): number {
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n) || !ok(n) || n < 0 || (!zeroOk && n === 0)) throw new UsageError(`${flag} wants ${wanted}`);
  return n;
}
