/**
 * `agy-bridge send`: types one user turn into agy's TUI through tmux and
 * says honestly whether it started. With `--conversation` (its server given
 * by `--url` or found by discovery) the turn is confirmed over RPC (a new
 * USER_INPUT step) and refused while a step is WAITING, and a dialog agy
 * left open for a step RPC shows settled is closed first only with a key
 * the key table marks safe on agy's version (the one discovery read) —
 * else the send refuses with the reason, and `--close-stale` is the
 * person's explicit choice to close it with Escape. Without it, the draft
 * leaving the composer confirms the turn. Nothing is typed while a prompt
 * holds the keyboard, and a turn starting with `/` needs `--slash`
 * (spike-notes §13, K1).
 */
import { findServer, lookUpAgyVersion } from "../discovery/index.js";
import { AgyBridgeError } from "../errors.js";
import { STEP_STATUS, STEP_TYPE } from "../protocol/wire-names.js";
import { createAgyRpcClient, type AgyRpcClient } from "../rpc/index.js";
import {
  createTmuxDriver,
  isPaneTarget,
  MAX_TURN_BYTES,
  paneTarget,
  socketArgs,
  type DeliverTurnOptions,
  type TmuxSocket,
  type TurnDeliveryResult,
} from "../tmux/index.js";
import { CONNECTION_HELP, CONNECTION_OPTIONS, connectionArgs, UsageError } from "./args.js";
import { defineCommand, type CliIo } from "./command.js";
import { resolveConversationTarget } from "./conversation-ref.js";
import { terminalText } from "./terminal-text.js";

const HELP = `Usage: agy-bridge send --pane TARGET [options] -- TEXT...
       agy-bridge send --pane TARGET [options] -

Types TEXT (the words joined by spaces, or stdin with -) into agy's composer
in a tmux pane as one bracketed paste, presses Enter separately, and checks
that the turn started. Control characters other than tab and newline are
removed; text with a NUL byte or over 1 MiB is refused.

It types only when agy is ready with an empty composer (a mode placeholder
counts as empty): never while a dialog, picker, menu or the slash popup holds
the keyboard (text and Enter in a dialog approve it; on agy 1.2.x a leading
digit answers a menu at once). Every key is chosen from the key table for
agy's version (docs/tmux.md); an unknown or newer version gets the
conservative row. With --conversation, a dialog agy left open for a step RPC
shows answered is closed first only with a key that is safe for it on this
version (Escape on agy 1.0.x); where there is none (agy 1.1, 1.2.x, unknown:
Escape there can end the turn the answer resumed) nothing is typed and the
reason says so, unless --close-stale. A TEXT starting with "/" is a slash
command and needs --slash.

Options:
  --pane TARGET       the pane: a pane id like %3, or an exact session =main
  -L NAME             the tmux server's socket name (tmux -L)
  -S PATH             the tmux server's socket path (tmux -S)
${CONNECTION_HELP.replace(
  /^(  --conversation ID .*)$/m,
  `$1
                      and with it: confirm the turn by a new USER_INPUT step,
                      and refuse while a step is WAITING (the server is --url,
                      else the one discovery finds for it or the pane)`,
)}
  --close-stale       with --conversation: close a dialog agy left open for an
                      answered step with Escape even where no key is known to
                      be safe for it (on agy 1.2.x that can cancel the command
                      the answer approved and end agy's turn)
  --force             type even while RPC shows a step WAITING (never into a prompt on screen)
  --slash             TEXT is a slash command: submitted only when agy's popup
                      highlights exactly that command, else Escape and failed
  --clear-draft       clear a draft someone typed instead of refusing
  --allow-unverified  exit 0 when the text was typed but the start is unconfirmed
  --json              print {"result","reason","screen"?} as one JSON object (screen:
                      what the pane showed when it refused, as \`agy-bridge screen --json\`)
  -h, --help          show this help

Result: delivered | unverified | failed, with a reason. Exit 0 when delivered
(or unverified with --allow-unverified), 1 otherwise, 2 on a usage error.`;

const OPTIONS = {
  pane: { type: "string" },
  "socket-name": { type: "string", short: "L" },
  "socket-path": { type: "string", short: "S" },
  ...CONNECTION_OPTIONS,
  force: { type: "boolean" },
  "close-stale": { type: "boolean" },
  slash: { type: "boolean" },
  "clear-draft": { type: "boolean" },
  "allow-unverified": { type: "boolean" },
  json: { type: "boolean" },
} as const;

/** Text read from stdin beyond this is refused before sanitising (the turn limit is 1 MiB). */
const STDIN_LIMIT_BYTES = 4 * MAX_TURN_BYTES;

export const sendCommand = defineCommand({
  name: "send",
  summary: "type a user turn into agy's TUI through tmux",
  help: HELP,
  options: OPTIONS,
  positionals: { min: 1, max: Infinity, name: "TEXT" },
  async run(io, { values, positionals }) {
    const json = values.json === true;
    let socket: TmuxSocket;
    let target: string;
    try {
      target = values.pane ?? "";
      if (target === "") throw new UsageError("--pane TARGET is required (a pane id like %3 or a session =main); run `agy-bridge send --help`");
      if (!isPaneTarget(target)) throw new UsageError("--pane must be a pane id like %3 or an exact session name like =main; run `agy-bridge send --help`");
      if (values["socket-name"] !== undefined && values["socket-path"] !== undefined)
        throw new UsageError("give -L or -S, not both; run `agy-bridge send --help`");
      socket =
        values["socket-name"] !== undefined
          ? { name: values["socket-name"] }
          : values["socket-path"] !== undefined
            ? { path: values["socket-path"] }
            : undefined;
      socketArgs(socket);
    } catch (error) {
      io.stderr.write(`agy-bridge send: ${(error as Error).message}\n`);
      return 2;
    }
    const { connection } = await resolveConversationTarget(io, { connection: connectionArgs(values, io.env) });
    // AGY_BRIDGE_URL alone is not a request to confirm over RPC; an explicit --url is.
    if (values.url !== undefined && connection.conversationId === undefined) {
      io.stderr.write("agy-bridge send: --url needs --conversation ID (the conversation the pane shows); run `agy-bridge send --help`\n");
      return 2;
    }
    if (values["close-stale"] === true && connection.conversationId === undefined) {
      io.stderr.write(
        "agy-bridge send: --close-stale needs --conversation ID (only RPC can tell a leftover dialog from a live one); run `agy-bridge send --help`\n",
      );
      return 2;
    }

    let client: AgyRpcClient | undefined;
    try {
      const text = positionals.length === 1 && positionals[0] === "-" ? await readStdin(io.stdin) : positionals.join(" ");
      const options: DeliverTurnOptions = {
        force: values.force === true,
        clearDraft: values["clear-draft"] === true,
        slash: values.slash === true,
        closeStale: values["close-stale"] === true,
        agyVersion: null,
        signal: io.signal,
      };
      if (connection.conversationId !== undefined) {
        // Without --url, discovery finds the server that owns the conversation (or the agy in the pane).
        const binding = await findServer({
          conversationId: connection.conversationId,
          pane: paneRef(target, socket),
          ...(connection.url === undefined ? {} : { url: connection.url }),
          ...(connection.csrfToken === undefined ? {} : { csrfToken: connection.csrfToken }),
          signal: io.signal,
        });
        client = createAgyRpcClient({ baseUrl: binding.url, ...(binding.csrfToken === undefined ? {} : { csrfToken: binding.csrfToken }) });
        // The keys are chosen for the agy discovery found: its process, else its pane's banner (never by starting agy).
        options.agyVersion =
          binding.agyVersion ??
          (
            await lookUpAgyVersion(
              { url: binding.url, ...(binding.pid === undefined ? {} : { pid: binding.pid }), pane: paneRef(target, socket) },
              { signal: io.signal },
            )
          ).agyVersion;
        Object.assign(options, await rpcChecks(client, connection.conversationId, io.signal));
      }
      const driver = createTmuxDriver({ socket });
      const result = await driver.deliverTurn(target, text, options);
      return report(io, json, result, values["allow-unverified"] === true);
    } catch (error) {
      const failure = AgyBridgeError.from(error);
      if (json) io.stdout.write(`${JSON.stringify({ result: "failed", reason: failure.message })}\n`);
      io.stderr.write(`agy-bridge send: ${failure.message}\n`);
      return 1;
    } finally {
      await client?.close();
    }
  },
});

/** The pane as discovery names it. */
function paneRef(target: string, socket: TmuxSocket): { target: string; socketName?: string; socketPath?: string } {
  return { target: paneTarget(target), ...(socket === undefined ? {} : "name" in socket ? { socketName: socket.name } : { socketPath: socket.path }) };
}

/** The WAITING guard and the USER_INPUT check, bound to one conversation. */
async function rpcChecks(
  client: AgyRpcClient,
  conversationId: string,
  signal: AbortSignal,
): Promise<Pick<DeliverTurnOptions, "hasWaitingStep" | "verifyStarted">> {
  const userInputs = async (s: AbortSignal): Promise<number> => {
    const { steps } = await client.getCascadeTrajectorySteps({ conversationId }, { signal: s });
    return steps.filter((step) => step.type === STEP_TYPE.USER_INPUT).length;
  };
  // Counted before anything is typed, so the turn's own step is the one that makes the difference.
  const baseline = await userInputs(signal);
  return {
    async hasWaitingStep() {
      const { steps } = await client.getCascadeTrajectorySteps({ conversationId }, { signal });
      return steps.some((step) => step.status === STEP_STATUS.WAITING);
    },
    async verifyStarted(s) {
      // A failed read is "not seen yet": the bound then decides, and the result says unverified.
      return userInputs(s).then(
        (count) => count > baseline,
        () => false,
      );
    },
  };
}

function report(io: CliIo, json: boolean, result: TurnDeliveryResult, allowUnverified: boolean): number {
  const ok = result.result === "delivered" || (result.result === "unverified" && allowUnverified);
  if (json)
    io.stdout.write(`${JSON.stringify({ result: result.result, reason: result.reason, ...(result.screen === undefined ? {} : { screen: result.screen }) })}\n`);
  else if (ok) io.stdout.write(`${result.result}: ${terminalText(result.reason)}\n`);
  if (!ok) {
    const hint = result.result === "unverified" ? " Pass --allow-unverified to accept an unconfirmed turn." : "";
    io.stderr.write(`agy-bridge send: ${result.result}: ${terminalText(result.reason)}${hint}\n`);
  }
  return ok ? 0 : 1;
}

async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    size += buffer.length;
    if (size > STDIN_LIMIT_BYTES) {
      throw new AgyBridgeError("invalid_argument", "stdin holds more than 4 MiB, far over the 1 MiB turn limit; attach a file and refer to it instead.");
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}
