/**
 * `agy-bridge serve`: the HTTP + SSE API and the approval page over every
 * agy session discovery finds on this machine, refreshed while it runs.
 */
import { homedir, hostname } from "node:os";
import { isIP } from "node:net";
import { dirname } from "node:path";
import type { Server } from "node:http";
import { isLoopbackHost } from "../rpc/loopback.js";
import type { ServeSessions } from "../server/serve-sessions.js";
import type { SessionHub } from "../server/session-hub.js";
import type { AuditLog, SessionAuditor } from "../audit/index.js";
import type { LearnedStore } from "../audit/learned-store.js";
import { defineCommand, type CliIo } from "./command.js";
import { auditLogFor, auditorFor, policyAttachOption, POLICY_HELP, POLICY_OPTIONS, readPolicyOption } from "./policy-options.js";
import { NOTIFY_HELP, NOTIFY_OPTIONS, prepareNotifications, type Notifications } from "./notify-options.js";
import { terminalText } from "./terminal-text.js";
import { connectRedis, redisUrlOf, type RedisConnection } from "./redis-connection.js";
import { UsageError, type ParsedArgs } from "./args.js";
import { tmuxScopeHelp, tmuxServerOf } from "./tmux-server-option.js";
import { packageVersion, ownUser, processAlive } from "./process-info.js";
import { untilAborted } from "../util/sleep.js";

const HELP = `Usage: agy-bridge serve [--listen HOST:PORT] [--token-file PATH] [--json]
                        [--allow-remote] [--allow-host NAME]… [--cors ORIGIN]
                        [-L NAME | -S PATH] [--policy FILE]
                        [--notify-webhook URL]… [--notify-ntfy TOPIC_URL]
                        [--telegram-bot-token-file F --telegram-chat ID]
                        [--escalate-after DURATION [--escalate-action deny]]
                        [--notify-desktop]

Serves every agy session on this machine to remote approval bots and to the
approval page: an authenticated HTTP + SSE API (docs/http-api.md) and a
mobile-first page at /. Sessions come from discovery and are refreshed while
it runs: a new agy appears, a stopped one disappears.

Options:
  --listen HOST:PORT   where to listen (default 127.0.0.1:7878; port 0 picks a free one)
  --token-file PATH    the bearer token file (default $XDG_CONFIG_HOME/agy-bridge/token,
                       else ~/.config/agy-bridge/token); generated with mode 0600 on
                       first start. AGY_BRIDGE_TOKEN, when set, is used instead.
  --json               print one line on start: {"url":…,"tokenFile":…}
  --allow-remote       allow a HOST that is not loopback (anyone who can reach it
                       and has the token can approve commands)
  --allow-host NAME    also answer requests whose Host is NAME (repeatable); by
                       default only loopback names and the --listen address
  --cors ORIGIN        allow this one browser origin cross-origin
${tmuxScopeHelp(23)}
  --refresh-ms MS      how often discovery runs (default 2000)
  --redis URL          serve the fleet instead of this machine: every session the
                       relays publish to this Redis (docs/fleet.md), each labelled
                       with its host; answers go to its host's relay
  --replay-window N    events kept per conversation for SSE replay (default 1000);
                       a client further behind is resynchronised from a fresh read
${alignOptions(POLICY_HELP, 23)}
  -h, --help           show this help

${NOTIFY_HELP}

On start it prints a one-time link that pairs a phone with the page (5 minutes,
one device; \`agy-bridge pair\` prints more, with a QR code).

Runs until SIGINT or SIGTERM; event streams then get a final comment.
Exit status: 0 after a clean shutdown; 1 when it cannot start; 2 on a usage error.
`;

/** Option lines (`  --flag ARG   what`) re-padded so their descriptions start at `column`, as serve's own do. */
function alignOptions(help: string, column: number): string {
  return help.replace(/^( {2}-\S(?:.*?\S)?) {2,}(?=\S)/gm, (_, flag: string) => flag.padEnd(column - 1) + " ");
}

const OPTIONS = {
  listen: { type: "string" },
  "token-file": { type: "string" },
  json: { type: "boolean" },
  "allow-remote": { type: "boolean" },
  "allow-host": { type: "string", multiple: true },
  cors: { type: "string" },
  "socket-name": { type: "string", short: "L" },
  "socket-path": { type: "string", short: "S" },
  "refresh-ms": { type: "string" },
  redis: { type: "string" },
  "replay-window": { type: "string" },
  ...POLICY_OPTIONS,
  ...NOTIFY_OPTIONS,
} as const;

interface Listen {
  host: string;
  port: number;
}

function parseListen(text: string): Listen | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text);
  if (match === null) return undefined;
  const host = match[1] ?? match[2] ?? "";
  const port = Number(match[3]);
  if (port > 65_535) return undefined;
  return { host, port };
}

type ServeValues = ParsedArgs<typeof OPTIONS>["values"];
type ServerModule = typeof import("../server/index.js");
type Modules = [ServerModule, typeof import("../session/index.js")];
type TmuxServer = { socketName?: string; socketPath?: string };

/** serve's own flags, checked before anything is opened. */
interface ServeSettings {
  listen: Listen;
  replayWindow: number | undefined;
  refreshMs: number;
  /** The tmux server -L/-S name: it scopes the sessions served (tmux-scope.ts); `{}` without either. */
  tmux: TmuxServer;
  scoped: boolean;
}

/** What serve opens before it builds the hub, each refused with its own exit status. */
interface ServeState {
  tokenFile: string;
  token: Awaited<ReturnType<ServerModule["loadBearerToken"]>>;
  policy: Awaited<ReturnType<typeof readPolicyOption>>;
  fleetConnection: RedisConnection | undefined;
  auditLog: AuditLog;
  auditor: SessionAuditor;
  notifications: Notifications;
  page: string;
}

export const serveCommand = defineCommand({
  name: "serve",
  summary: "serve every agy session over HTTP + SSE, with an approval page",
  help: HELP,
  options: OPTIONS,
  async run(io, { values }) {
    const settings = readSettings(io, values);
    if (settings === undefined) return 2;
    const modules: Modules = await Promise.all([import("../server/index.js"), import("../session/index.js")]);
    const state = await openState(io, values, modules[0]);
    if (typeof state === "number") return state;
    const sessions = await startSessions(io, values, settings, state, modules);
    const { api, pairing } = await startApi(io, values, settings.listen, state, sessions, modules[0]);
    const port = await listenOn(io, api.server, settings.listen);
    if (port === undefined) {
      await sessions.close();
      await state.fleetConnection?.close();
      return 1;
    }
    const linkHost = announce(io, values, settings.listen, port, state.token, pairing.issue().code);
    state.notifications.start({ hub: sessions.hub, pageUrl: `http://${linkHost}:${port}`, describe: sessions.describe, ruleWorkspace: sessions.ruleWorkspace });
    await refreshUntilAborted(io.signal, sessions.hub, settings.refreshMs);
    io.stderr.write("agy-bridge serve: shutting down\n");
    await api.close();
    await state.notifications.close();
    await sessions.close();
    await state.fleetConnection?.close();
    await state.auditor.flush().catch(() => undefined);
    return 0;
  },
});

/** The flags serve checks itself; `undefined` after saying what is wrong (exit 2). */
function readSettings(io: CliIo, values: ServeValues): ServeSettings | undefined {
  const listen = parseListen(values.listen ?? "127.0.0.1:7878");
  if (listen === undefined) {
    io.stderr.write("agy-bridge serve: --listen wants HOST:PORT (e.g. 127.0.0.1:7878, [::1]:0)\n");
    return undefined;
  }
  if (!isLoopbackHost(listen.host) && values["allow-remote"] !== true) {
    io.stderr.write(
      "agy-bridge serve: --listen must name a loopback address (127.0.0.1, ::1 or localhost) unless --allow-remote is given; anyone who can reach the server with the token could approve commands\n",
    );
    return undefined;
  }
  if (listen.host !== "localhost" && isIP(listen.host) === 0 && values["allow-remote"] !== true) {
    io.stderr.write("agy-bridge serve: --listen wants an IP address or localhost\n");
    return undefined;
  }
  const replayWindow = values["replay-window"] === undefined ? undefined : Number(values["replay-window"]);
  if (replayWindow !== undefined && (!Number.isInteger(replayWindow) || replayWindow < 1 || replayWindow > 10_000_000)) {
    io.stderr.write("agy-bridge serve: --replay-window wants a whole number of events, from 1 to 10000000\n");
    return undefined;
  }
  const refreshMs = values["refresh-ms"] === undefined ? 2000 : Number(values["refresh-ms"]);
  if (!Number.isInteger(refreshMs) || refreshMs < 100) {
    io.stderr.write("agy-bridge serve: --refresh-ms wants a whole number of milliseconds, at least 100\n");
    return undefined;
  }
  const named = tmuxServerOf("serve", values);
  return { listen, replayWindow, refreshMs, tmux: named ?? {}, scoped: named !== undefined };
}

/**
 * The token, the policy, the fleet connection, the audit log, notifications
 * and the page, in that order; an exit status after saying what failed.
 */
async function openState(io: CliIo, values: ServeValues, server: ServerModule): Promise<ServeState | number> {
  const tokenFile = values["token-file"] ?? server.defaultTokenFile(io.env, homedir());
  let token;
  try {
    // The token file must be this user\'s own.
    token = await server.loadBearerToken({ env: io.env, tokenFile, ...ownUser() });
  } catch (error) {
    io.stderr.write(`agy-bridge serve: ${(error as Error).message}\n`);
    return 1;
  }

  // Each host's relay delivers answers for its sessions; a policy here would race them.
  if (values.redis !== undefined && values.policy !== undefined) {
    throw new UsageError("--policy and --redis do not go together: with --redis, answers are delivered by each host's relay; run `agy-bridge serve --help`");
  }
  let policy;
  try {
    policy = await readPolicyOption(values, io.env);
  } catch (error) {
    if (!(error instanceof (await import("../policy/index.js")).PolicyError)) throw error;
    // Refused before listening: the line and column say what to fix.
    io.stderr.write(`${terminalText(`agy-bridge serve: ${error.message}`)}\n`);
    return 1;
  }
  let fleetConnection: RedisConnection | undefined;
  if (values.redis !== undefined) {
    fleetConnection = await connectRedis(io, "serve", redisUrlOf("serve", values.redis));
    if (fleetConnection === undefined) return 1;
  }
  // Every decision serve sees — policy, bots, the page, answers given elsewhere (`observed`) — goes to the audit log.
  const auditLog = auditLogFor(io, values);
  const auditor = auditorFor(io, auditLog, "serve");
  // Webhooks, Web Push, ntfy, Telegram: checked and loaded before listening.
  let notifications: Notifications;
  try {
    const prepared = await prepareNotifications(io, values, {
      configDir: dirname(server.defaultTokenFile(io.env, homedir())),
      auditLog,
      policy: policy !== undefined,
      devicesFile: server.deviceFileFor(tokenFile),
    });
    if (typeof prepared === "string") {
      io.stderr.write(`${terminalText(`agy-bridge serve: ${prepared}`)}\n`);
      return 2;
    }
    notifications = prepared;
  } catch (error) {
    io.stderr.write(`${terminalText(`agy-bridge serve: ${(error as Error).message}`)}\n`);
    return 1;
  }

  let page: string;
  try {
    page = await server.loadApprovalPage();
  } catch (error) {
    io.stderr.write(`agy-bridge serve: ${(error as Error).message}\n`);
    return 1;
  }
  return { tokenFile, token, policy, fleetConnection, auditLog, auditor, notifications, page };
}

/** The session hub over this machine's sessions in the -L/-S scope (or, with --redis, over the fleet's). */
async function startSessions(io: CliIo, values: ServeValues, settings: ServeSettings, state: ServeState, modules: Modules): Promise<ServeSessions> {
  const [{ createServeSessions }, { AgySession, createMachineSessionSource }] = modules;
  const { policy, auditor } = state;
  const say = (message: string) => io.stderr.write(`agy-bridge serve: ${message}\n`);
  const common = {
    ...(settings.replayWindow === undefined ? {} : { replayWindow: settings.replayWindow }),
    ...(values.workspace === undefined ? {} : { workspace: values.workspace }),
    policy: policy !== undefined,
    onProblem: say,
  };
  // With --redis the sessions are the fleet's: every host's relay publishes them to Redis.
  if (state.fleetConnection !== undefined) return createServeSessions({ ...common, from: { remote: await fleetSource(state.fleetConnection) } });
  // -L/-S: only agy in a pane of that tmux server is served; each one left out is said once.
  const local = createMachineSessionSource({
    tmux: settings.scoped ? settings.tmux : undefined,
    onSkipped: say,
    attach: AgySession.attach,
    alive: processAlive,
  });
  // Notifications read the policy's verdict off each request in the hub's logs: nothing to hand them here.
  const attachExtra = policy === undefined ? {} : policyAttachOption(io, policy, values, auditor);
  return createServeSessions({ ...common, from: { local, tmux: settings.tmux, attachExtra, auditor } });
}

/** The HTTP API over the hub, with the page, devices, pairing and what notifications add. */
async function startApi(io: CliIo, values: ServeValues, listen: Listen, state: ServeState, sessions: ServeSessions, server: ServerModule) {
  const version = await packageVersion();
  const devices = server.createDeviceStore({ file: server.deviceFileFor(state.tokenFile), ...ownUser() });
  const pairing = server.createPairingCodes();
  // Learned rules apply where a policy does (docs/policy.md), so only a serve with --policy keeps them.
  const rules = state.policy === undefined ? undefined : await learnedRulesFor(io, state.auditLog);
  const api = server.createApiServer({
    hub: sessions.hub,
    ...(rules === undefined ? {} : { rules }),
    token: state.token.token,
    page: state.page,
    devices,
    pairing,
    describe: sessions.describe,
    ruleWorkspace: sessions.ruleWorkspace,
    // Pairing links name the address phones reach serve at, when it was given.
    ...(values["notify-base-url"] === undefined ? {} : { pageUrl: values["notify-base-url"] }),
    push: state.notifications.push,
    actions: state.notifications.actions,
    openapi: server.buildOpenApiDocument(version),
    boundHost: listen.host,
    allowHosts: values["allow-host"] ?? [],
    connectionLimits: await server.connectionLimitsOfProcess(),
    onInternalError: (error) =>
      io.stderr.write(`agy-bridge serve: a request failed inside agy-bridge: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`),
    onServerError: server.listeningErrorReporter((sentence) => io.stderr.write(`agy-bridge serve: ${sentence}\n`)),
    ...(values.cors === undefined ? {} : { cors: values.cors }),
  });
  return { api, pairing };
}

/** The port serve listens on; `undefined` after saying it cannot listen. */
async function listenOn(io: CliIo, server: Server, listen: Listen): Promise<number | undefined> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(listen.port, listen.host, () => resolve());
    });
  } catch (error) {
    io.stderr.write(
      `agy-bridge serve: cannot listen on ${listen.host}:${listen.port} (${(error as NodeJS.ErrnoException).code ?? "error"}); pick another --listen\n`,
    );
    return undefined;
  }
  const address = server.address();
  return typeof address === "object" && address !== null ? address.port : listen.port;
}

/** Says where serve listens, where its token is and the one-time pairing link; returns the host links name. */
function announce(io: CliIo, values: ServeValues, listen: Listen, port: number, token: ServeState["token"], pairingCode: string): string {
  const url = `http://${listen.host.includes(":") ? `[${listen.host}]` : listen.host}:${port}`;
  const shownTokenFile = token.source === "AGY_BRIDGE_TOKEN" ? null : token.source;
  // The pairing link carries a one-time code in its fragment, never the bearer token.
  const linkHost = listen.host === "0.0.0.0" || listen.host === "::" ? hostname() : listen.host.includes(":") ? `[${listen.host}]` : listen.host;
  const pageBase = (values["notify-base-url"] ?? `http://${linkHost}:${port}`).replace(/\/+$/, "");
  const pairingUrl = `${pageBase}/#/pair/${pairingCode}`;
  if (values.json === true) io.stdout.write(`${JSON.stringify({ url, tokenFile: shownTokenFile, pairingUrl })}\n`);
  else {
    io.stderr.write(
      `agy-bridge serve: listening on ${url} — open it in a browser; the token is ${shownTokenFile === null ? "AGY_BRIDGE_TOKEN" : `in ${shownTokenFile}`}\n`,
    );
    io.stderr.write(`agy-bridge serve: pair a phone: open ${pairingUrl} (one device, within 5 minutes); \`agy-bridge pair\` prints a new link and a QR code\n`);
  }
  return linkHost;
}

/** Refreshes the hub now and every `refreshMs` until SIGINT or SIGTERM. */
async function refreshUntilAborted(signal: AbortSignal, hub: SessionHub, refreshMs: number): Promise<void> {
  await hub.refresh();
  const timer = setInterval(() => void hub.refresh(), refreshMs);
  await untilAborted(signal);
  clearInterval(timer);
}

/** The fleet as serve's session source (`serve --redis`): every host's relay publishes its sessions to Redis. */
async function fleetSource(connection: RedisConnection) {
  const { createFleetClient, createFleetSessionSource } = await import("../fleet/index.js");
  return createFleetSessionSource(createFleetClient({ redis: connection.redis }));
}

async function learnedRulesFor(io: CliIo, audit: AuditLog): Promise<LearnedStore> {
  const { createLearnedStore, defaultLearnedFile } = await import("../audit/learned-store.js");
  return createLearnedStore({ file: defaultLearnedFile(io.env), audit });
}
