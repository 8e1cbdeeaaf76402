/**
 * `agy-bridge mcp`: an MCP server (docs/mcp.md) over stdio, or over
 * streamable HTTP at /mcp with `--http`. Sessions come from discovery, like
 * `serve`; the connection options name the conversation for tools called
 * without one. HTTP uses serve's own token file and Host/Origin rules.
 */
import { homedir } from "node:os";
import { isIP } from "node:net";
import type { Readable, Writable } from "node:stream";
import type { AgySessionApi, AttachOptions } from "../session/index.js";
import type { McpSessionSource } from "../mcp/index.js";
import type { SessionSource } from "../session/local-session-source.js";
import { isLoopbackHost } from "../rpc/loopback.js";
import { CONNECTION_HELP, CONNECTION_OPTIONS, UsageError } from "./args.js";
import { defineCommand, type CliIo } from "./command.js";
import { resolveConversationTarget } from "./conversation-ref.js";
import { auditLogFor, auditorFor, policyAttachOption, POLICY_HELP, POLICY_OPTIONS, readPolicyOption } from "./policy-options.js";
import { attachFromArgs, failureText, sessionTarget, type SessionTarget } from "./session-connect.js";
import { tmuxScopeHelp, tmuxServerOf } from "./tmux-server-option.js";
import { packageVersion, ownUser, processAlive } from "./process-info.js";
import { untilAborted } from "../util/sleep.js";

/** The policy options' help, with the note about agents right under --policy. */
const POLICY_LINES = POLICY_HELP.split("\n");

const HELP = `Usage: agy-bridge mcp [--conversation ID] [--pane TARGET] [-L NAME | -S PATH] [--url URL] [--csrf-token T]
                      [--policy FILE] [--workspace DIR] [--audit-file PATH]
       agy-bridge mcp --http [--listen HOST:PORT] [--token-file PATH] [--json] [--allow-remote] [...]

An MCP server for agents (Claude Code, Codex, any MCP host): list the agy
sessions on this machine, follow them, send turns, approve, deny, answer and
interrupt — tools and resources described in docs/mcp.md. Over stdio by
default (the host starts it); with --http, streamable HTTP at /mcp, bearer
token required. Every agent decision goes to the audit log as mcp:<client>.

Options:
${CONNECTION_HELP}
  --pane TARGET       agy's tmux pane (%3 or =main): its conversation is the default
${tmuxScopeHelp()}
${POLICY_LINES[0]}
                      (with --policy, an agent cannot approve what the policy denies)
${POLICY_LINES.slice(1).join("\n")}
  --http              serve streamable HTTP instead of stdio
  --listen HOST:PORT  with --http: where (default 127.0.0.1:7879; port 0 picks a free one)
  --token-file PATH   with --http: the bearer token file, the same as serve's (default
                      $XDG_CONFIG_HOME/agy-bridge/token); AGY_BRIDGE_TOKEN wins when set
  --allow-remote      with --http: allow a HOST that is not loopback
  --allow-host NAME   with --http: also answer requests whose Host is NAME (repeatable)
  --json              with --http: print one line on start: {"url":…,"tokenFile":…}
  -h, --help          show this help

Tools called without a conversationId use --conversation / --pane / --url;
without those, the only agy session running. Runs until stdin closes (stdio:
the requests already read are answered first), or SIGINT / SIGTERM.
Exit 0 after a clean shutdown, 1 when it cannot start, 2 on a usage error.`;

const OPTIONS = {
  ...CONNECTION_OPTIONS,
  pane: { type: "string" },
  "socket-name": { type: "string", short: "L" },
  "socket-path": { type: "string", short: "S" },
  ...POLICY_OPTIONS,
  http: { type: "boolean" },
  listen: { type: "string" },
  "token-file": { type: "string" },
  "allow-remote": { type: "boolean" },
  "allow-host": { type: "string", multiple: true },
  json: { type: "boolean" },
} as const;

function parseListen(text: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text);
  if (match === null) return undefined;
  const port = Number(match[3]);
  return port > 65_535 ? undefined : { host: match[1] ?? match[2] ?? "", port };
}

export const mcpCommand = defineCommand({
  name: "mcp",
  summary: "an MCP server for agents: sessions, events, turns and answers as tools",
  help: HELP,
  options: OPTIONS,
  async run(io, { values }) {
    const hint = "run `agy-bridge mcp --help`";
    const http = values.http === true;
    for (const name of ["listen", "token-file", "allow-remote", "allow-host", "json"] as const) {
      if (!http && values[name] !== undefined) throw new UsageError(`--${name} goes with --http; ${hint}`);
    }
    if (values.policy === undefined && values.workspace !== undefined) throw new UsageError(`--workspace goes with --policy; ${hint}`);
    const tmux = tmuxServerOf("mcp", values);
    // -L / -S scope the sessions on offer (as for serve and acp); with --pane, they are also that pane's server.
    const target = await resolveConversationTarget(
      io,
      sessionTarget("mcp", values.pane === undefined ? { ...values, "socket-name": undefined, "socket-path": undefined } : values, io.env),
    );
    const listen = http ? parseListen(values.listen ?? "127.0.0.1:7879") : undefined;
    if (http) {
      if (listen === undefined) throw new UsageError(`--listen wants HOST:PORT (e.g. 127.0.0.1:7879, [::1]:0); ${hint}`);
      if (!isLoopbackHost(listen.host) && values["allow-remote"] !== true) {
        throw new UsageError(
          "--listen must name a loopback address (127.0.0.1, ::1 or localhost) unless --allow-remote is given; anyone who reaches it with the token could approve commands",
        );
      }
      if (listen.host !== "localhost" && isIP(listen.host) === 0) throw new UsageError(`--listen wants an IP address or localhost; ${hint}`);
    }

    let policy;
    try {
      policy = await readPolicyOption(values, io.env);
    } catch (error) {
      io.stderr.write(`agy-bridge mcp: ${error instanceof (await import("../policy/index.js")).PolicyError ? error.message : (error as Error).message}\n`);
      return 1;
    }
    const auditor = auditorFor(io, auditLogFor(io, values), "mcp");
    const policyOption: Partial<AttachOptions> = policy === undefined ? {} : policyAttachOption(io, policy, values, auditor);
    const home = io.env["HOME"] ?? homedir();
    const rules = {
      auditor,
      ...(policy === undefined ? {} : { policy, context: { home, ...(values.workspace === undefined ? {} : { workspace: values.workspace }) } }),
    };

    const [{ createAgyMcpServer, createMcpHttpServer, createSessionPool, createStdioTransport }, { AgySession, createMachineSessionSource }] =
      await Promise.all([import("../mcp/index.js"), import("../session/index.js")]);
    const onProblem = (message: string) => io.stderr.write(`agy-bridge mcp: ${message}\n`);
    const local = createMachineSessionSource({ tmux, onSkipped: onProblem, attach: AgySession.attach, alive: processAlive });
    const source = sessionSource(io, target, local, policyOption, AgySession.attach);
    const pool = createSessionPool({ source, onProblem });
    const version = await packageVersion();
    try {
      if (!http) {
        const server = createAgyMcpServer({ pool, rules, version });
        const transport = createStdioTransport({
          stdin: io.stdin as Readable,
          stdout: io.stdout as Writable,
          onProblem: (message) => io.stderr.write(`agy-bridge mcp: refused a line on stdin: ${message}\n`),
        });
        // stdin's end finishes what was asked first (transport.drained); a signal ends at once.
        const ended = new Promise<void>((resolve) => {
          void transport.drained.then(resolve);
          if (io.signal.aborted) resolve();
          else io.signal.addEventListener("abort", () => resolve(), { once: true });
        });
        await server.mcp.connect(transport);
        await ended;
        await server.close().catch(() => undefined);
        return 0;
      }
      return await serveHttp(io, values, listen!, () => createAgyMcpServer({ pool, rules, version }), createMcpHttpServer);
    } catch (error) {
      io.stderr.write(`${failureText("mcp", error)}\n`);
      return 1;
    } finally {
      await pool.close();
      await local.close();
      await auditor.flush().catch(() => undefined);
    }
  },
});

type Attach = (options: AttachOptions) => Promise<AgySessionApi>;

/** The machine's sessions in the -L/-S scope (as serve finds them), and the default one from the connection options. */
function sessionSource(io: CliIo, target: SessionTarget, local: SessionSource, extra: Partial<AttachOptions>, attach: Attach): McpSessionSource {
  const named = target.connection.url !== undefined || target.connection.conversationId !== undefined || target.pane !== undefined;
  const source: McpSessionSource = {
    async list(signal) {
      // A URL skips discovery: that server's conversation is the one on offer.
      if (target.connection.url !== undefined) return [];
      return (await local.list(signal)).map((offer) => ({
        conversationId: offer.conversationId,
        ...(offer.pid === undefined ? {} : { pid: offer.pid }),
        ...(offer.title === undefined ? {} : { title: offer.title }),
      }));
    },
    retain: (descriptor) => local.retain(descriptor),
    attach: (descriptor, signal) => local.attach(descriptor.conversationId, { signal, ...extra }),
  };
  if (named) {
    source.attachDefault = async (signal) => {
      const session = await attachFromArgs({ ...io, signal }, target, extra, { attach });
      return { descriptor: { conversationId: session.conversationId }, session };
    };
  }
  return source;
}

async function serveHttp(
  io: CliIo,
  values: { "token-file"?: string | undefined; json?: boolean | undefined; "allow-host"?: string[] | undefined },
  listen: { host: string; port: number },
  createServer: () => import("../mcp/index.js").AgyMcpServer,
  createMcpHttpServer: typeof import("../mcp/index.js").createMcpHttpServer,
): Promise<number> {
  const [{ loadBearerToken, defaultTokenFile, createBearerCheck, createFailureLimiter }, { createOriginCheck }, guard] = await Promise.all([
    import("../server/bearer-token.js"),
    import("../server/request-origin.js"),
    import("../server/connection-guard.js"),
  ]);
  const tokenFile = values["token-file"] ?? defaultTokenFile(io.env, homedir());
  let token;
  try {
    // The token file must be this user\'s own.
    token = await loadBearerToken({ env: io.env, tokenFile, ...ownUser() });
  } catch (error) {
    io.stderr.write(`agy-bridge mcp: ${(error as Error).message}\n`);
    return 1;
  }
  const http = createMcpHttpServer({
    createServer,
    authorize: createBearerCheck(token.token),
    checkOrigin: createOriginCheck({ boundHost: listen.host, ...(values["allow-host"] === undefined ? {} : { allowHosts: values["allow-host"] }) }),
    limiter: createFailureLimiter(),
    onInternalError: (error) =>
      io.stderr.write(`agy-bridge mcp: a request failed inside agy-bridge: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`),
  });
  // serve's guard and limits: a flood of idle sockets (no token needed to open one) is shed before descriptors run out.
  guard.guardConnections(http.server, await guard.connectionLimitsOfProcess());
  // Without a listener an accept error (EMFILE) would end the process; said once a minute per kind, as serve says it.
  const onServerError = guard.listeningErrorReporter((sentence) => io.stderr.write(`agy-bridge mcp: ${sentence}\n`));
  try {
    await new Promise<void>((resolve, reject) => {
      http.server.once("error", reject);
      http.server.listen(listen.port, listen.host, () => {
        http.server.off("error", reject);
        http.server.on("error", onServerError);
        resolve();
      });
    });
  } catch (error) {
    io.stderr.write(
      `agy-bridge mcp: cannot listen on ${listen.host}:${listen.port} (${(error as NodeJS.ErrnoException).code ?? "error"}); pick another --listen\n`,
    );
    return 1;
  }
  const address = http.server.address();
  const port = typeof address === "object" && address !== null ? address.port : listen.port;
  const url = `http://${listen.host.includes(":") ? `[${listen.host}]` : listen.host}:${port}/mcp`;
  const shownTokenFile = token.source === "AGY_BRIDGE_TOKEN" ? null : token.source;
  if (values.json === true) io.stdout.write(`${JSON.stringify({ url, tokenFile: shownTokenFile })}\n`);
  else
    io.stderr.write(
      `agy-bridge mcp: MCP over streamable HTTP at ${url}; the bearer token is ${shownTokenFile === null ? "AGY_BRIDGE_TOKEN" : `in ${shownTokenFile}`}\n`,
    );
  await untilAborted(io.signal);
  io.stderr.write("agy-bridge mcp: shutting down\n");
  await http.close();
  return 0;
}
