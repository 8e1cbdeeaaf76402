/**
 * `agy-bridge relay --redis URL`: one per host. Follows every agy session on
 * this machine (or the one the connection options name), publishes their
 * events to Redis Streams and runs the commands bots send for this host
 * (docs/fleet.md). Sessions are found and attached here, as `serve` does, and
 * handed to the fleet relay through injected functions.
 */
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { CONNECTION_HELP, CONNECTION_OPTIONS, UsageError } from "./args.js";
import { defineCommand } from "./command.js";
import { resolveConversationTarget } from "./conversation-ref.js";
import { attachFromArgs, failureText, PANE_OPTION, sessionTarget } from "./session-connect.js";
import { tmuxScopeHelp, tmuxServerOf } from "./tmux-server-option.js";
import { auditLogFor, auditorFor } from "./policy-options.js";
import { terminalText } from "./terminal-text.js";
import { connectRedis, redisUrlOf, shownRedisUrl } from "./redis-connection.js";
import { untilAborted } from "../util/sleep.js";

const HELP = `Usage: agy-bridge relay --redis URL [--host NAME] [--claim-idle MS] [--json]
                        [--max-len N] [--refresh-ms MS] [--audit-file PATH] [--standby]
                        [--conversation ID | --pane TARGET] [-L NAME | -S PATH] [--url URL]

Publishes every agy session on this machine to Redis Streams and runs the
commands (approve, deny, answer, send_turn, interrupt) bots send to this host
through Redis (docs/fleet.md): events to agy:events:<host>:<conversationId>,
the fleet index to agy:sessions, commands from agy:commands:<host> (consumer
group agy-relay), results to agy:results:<host>. Restarted, it resumes without
gaps or duplicates and claims the commands a dead relay left pending.

Options:
  --redis URL         redis://[user@]host:port[/db] or rediss:// for TLS; the password
                      may be in the URL or in AGY_BRIDGE_REDIS_PASSWORD (never printed)
  --host NAME         this host's name in every key (default: the machine's host name)
  --claim-idle MS     claim a command another relay left pending this long (default 30000)
  --max-len N         keep about N entries per stream (default 10000)
  --refresh-ms MS     how often discovery runs (default 2000)
  --audit-file PATH   where answers are logged (default $XDG_STATE_HOME/agy-bridge/audit.jsonl)
  --standby           take commands (and claim what another relay of --host left pending)
                      but publish nothing: a second relay for the same host
  --json              print one line on start: {"relay":"ready","host":…,"redis":…}
${CONNECTION_HELP}
  --pane TARGET       agy's tmux pane (a pane id like %3, or an exact session =main):
                      follow only its conversation
${tmuxScopeHelp()}
                      (with --pane, -L/-S name the tmux server of that pane)
  -h, --help          show this help

Without --url, --conversation or --pane, every conversation discovery finds (in
the -L/-S scope) is followed, refreshed while it runs. Runs until SIGINT or SIGTERM.
Exit status: 0 after a clean shutdown; 1 when it cannot start; 2 on a usage error.
`;

const OPTIONS = {
  redis: { type: "string" },
  host: { type: "string" },
  "claim-idle": { type: "string" },
  "max-len": { type: "string" },
  "refresh-ms": { type: "string" },
  "audit-file": { type: "string" },
  standby: { type: "boolean" },
  json: { type: "boolean" },
  ...CONNECTION_OPTIONS,
  ...PANE_OPTION,
} as const;

function wholeNumber(name: string, text: string | undefined, fallback: number, min: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min) throw new UsageError(`--${name} wants a whole number, at least ${min}; run \`agy-bridge relay --help\``);
  return value;
}

export const relayCommand = defineCommand({
  name: "relay",
  summary: "publish this machine's agy sessions to Redis Streams and take commands from it",
  help: HELP,
  options: OPTIONS,
  async run(io, { values }) {
    const redisUrl = redisUrlOf("relay", values.redis);
    const { HOST_NAME, createRelay } = await import("../fleet/index.js");
    const host = values.host ?? hostname().split(".")[0] ?? "";
    if (!HOST_NAME.test(host))
      throw new UsageError(
        `--host must be letters, digits, '.', '_' or '-' (up to 128, no ':'), since it is part of every key${values.host === undefined ? "; this machine's host name is not, so give --host" : ""}`,
      );
    const claimIdleMs = wholeNumber("claim-idle", values["claim-idle"], 30_000, 1);
    const maxLen = wholeNumber("max-len", values["max-len"], 10_000, 10);
    const refreshMs = wholeNumber("refresh-ms", values["refresh-ms"], 2000, 100);
    const named = tmuxServerOf("relay", values);
    // -L / -S alone scope the sessions followed (as for serve, mcp and acp); with --pane, they are that pane's server.
    const target = await resolveConversationTarget(
      io,
      sessionTarget("relay", values.pane === undefined ? { ...values, "socket-name": undefined, "socket-path": undefined } : values, io.env),
    );
    const single = target.connection.url !== undefined || target.connection.conversationId !== undefined || target.pane !== undefined;
    const connection = await connectRedis(io, "relay", redisUrl);
    if (connection === undefined) return 1;
    const redis = connection.redis;

    const auditor = auditorFor(io, auditLogFor(io, values), "relay");
    const instanceId = `${host}-${process.pid}-${randomBytes(3).toString("hex")}`;
    const { AgySession, createMachineSessionSource } = await import("../session/index.js");
    // Full discovery only when agy processes come or go (and every 30 s), as in serve.
    const discovery = createMachineSessionSource({
      tmux: named,
      onSkipped: (message) => io.stderr.write(`${terminalText(`agy-bridge relay: ${message}`)}\n`),
      attach: AgySession.attach,
    });

    let singleId: string | undefined;
    if (single) {
      try {
        // Attached once to learn the conversation's id; later attaches (after a gap) name it.
        const first = await attachFromArgs(io, target, { follow: false });
        singleId = first.conversationId;
        await first.close();
      } catch (error) {
        io.stderr.write(`${failureText("relay", error)}\n`);
        redis.disconnect();
        return 1;
      }
    }

    const relay = createRelay({
      redis,
      host,
      instanceId,
      claimIdleMs,
      maxLen,
      publish: values.standby !== true,
      async list(signal) {
        if (singleId !== undefined) return [singleId];
        return (await discovery.list(signal)).map((offer) => offer.conversationId);
      },
      async attach(conversationId) {
        if (singleId !== undefined)
          return attachFromArgs(io, { ...target, connection: { ...target.connection, conversationId } }, { signal: new AbortController().signal });
        return discovery.attach(conversationId);
      },
      observe: (event) => auditor.observe(event),
      onAnswered: (answer) => auditor.answered(answer),
      onProblem: (message) => io.stderr.write(`${terminalText(`agy-bridge relay: ${message}`)}\n`),
    });
    try {
      await relay.start();
    } catch (error) {
      // E.g. the ACL user may not create the command group (NOPERM).
      io.stderr.write(
        `${terminalText(`agy-bridge relay: cannot start taking commands from Redis (${(error as Error).message}); check the ACL user's permissions (docs/fleet.md)`)}\n`,
      );
      await relay.close();
      await discovery.close();
      redis.disconnect();
      return 1;
    }
    const ready = { relay: "ready", host, redis: shownRedisUrl(redisUrl), ...(values.standby === true ? { standby: true } : {}) };
    if (values.json === true) io.stdout.write(`${JSON.stringify(ready)}\n`);
    else io.stderr.write(`agy-bridge relay: host ${host} on ${ready.redis}, following ${relay.following().length} conversation(s)\n`);

    const timer = singleId === undefined ? setInterval(() => void relay.refresh(), refreshMs) : undefined;
    await untilAborted(io.signal);
    if (timer !== undefined) clearInterval(timer);
    io.stderr.write("agy-bridge relay: shutting down\n");
    await relay.close();
    await discovery.close();
    await auditor.flush().catch(() => undefined);
    // QUIT waits for Redis; when it is away, just close the socket.
    if (redis.status === "ready") await redis.quit().catch(() => redis.disconnect());
    else redis.disconnect();
    return 0;
  },
});
