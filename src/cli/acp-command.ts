/**
 * `agy-bridge acp`: an Agent Client Protocol agent on stdio. An editor
 * (Zed, any ACP client) starts it and joins the attended agy session a
 * person is already running. This file builds the session source (discovery
 * and `AgySession.attach`, with the policy) and hands it to `src/acp/`.
 */
import { Readable, Writable } from "node:stream";
import { ndJsonStream } from "@agentclientprotocol/sdk";
import type { AcpCandidate, AcpSessionSource } from "../acp/index.js";
import type { PaneRef, TmuxScope } from "../discovery/index.js";
import type { AgySessionApi, AttachOptions } from "../session/index.js";
import { createLocalSessionSource } from "../session/local-session-source.js";
import { CONNECTION_HELP, CONNECTION_OPTIONS, connectionArgs, UsageError, type ConnectionArgs } from "./args.js";
import { defineCommand } from "./command.js";
import { resolveConversationTarget } from "./conversation-ref.js";
import { auditLogFor, auditorFor, policyAttachOption, POLICY_OPTIONS, readPolicyOption } from "./policy-options.js";
import { emptyOption, failureText } from "./session-connect.js";
import { TMUX_SERVER_OPTIONS, tmuxScopeHelp, tmuxServerOf } from "./tmux-server-option.js";
import { terminalText } from "./terminal-text.js";
import { isPaneTarget } from "../tmux/index.js";
import { packageVersion } from "./process-info.js";

const HELP = `Usage: agy-bridge acp [--conversation ID] [--pane TARGET] [-L NAME | -S PATH]
                      [--url URL] [--csrf-token T] [--policy FILE] [--audit-file PATH]

An Agent Client Protocol agent on stdin/stdout for editors (Zed and any ACP
client): the editor joins the agy session a person is already running, in
the same conversation and the same TUI (docs/acp.md). The ACP session id is
agy's conversation id. Prompts are typed into agy's TUI through tmux; gates
and questions reach the editor as permission requests.

Which session: the editor's _meta {"agyBridge": {"conversationId": ID}} on
session/new, else --conversation, else the one whose agy workspace is the
editor's folder, else the only one.

Options:
${CONNECTION_HELP}
  --pane TARGET       agy's tmux pane (%3 or =main); discovery starts there
${tmuxScopeHelp()}
  --policy FILE       answer what the policy decides first (docs/policy.md); only
                      ask reaches the editor
  --workspace DIR     agy's workspace for the policy's {workspace} (with --policy)
  --audit-file PATH   where decisions are logged (default $XDG_STATE_HOME/agy-bridge/audit.jsonl)
  -h, --help          show this help

stdout carries the protocol only; problems go to stderr.
Exit status: 0 when the editor closes the connection; 1 when it cannot start; 2 on a usage error.
`;

const OPTIONS = {
  ...CONNECTION_OPTIONS,
  pane: { type: "string" },
  ...TMUX_SERVER_OPTIONS,
  ...POLICY_OPTIONS,
} as const;

export const acpCommand = defineCommand({
  name: "acp",
  summary: "an Agent Client Protocol agent on stdio: editors join a running agy session",
  help: HELP,
  options: OPTIONS,
  async run(io, { values }) {
    const hint = "run `agy-bridge acp --help`";
    const empty = emptyOption(values as Record<string, unknown>, ["pane", "policy", "workspace", "audit-file"]);
    if (empty !== undefined) throw new UsageError(`--${empty} needs a non-empty value; ${hint}`);
    const { connection } = await resolveConversationTarget(io, { connection: connectionArgs(values, io.env) });
    const tmux = tmuxServerOf("acp", values);
    if (values.pane !== undefined && !isPaneTarget(values.pane))
      throw new UsageError(`--pane must be a pane id like %3 or an exact session name like =main; ${hint}`);
    if (values.workspace !== undefined && values.policy === undefined) throw new UsageError(`--workspace goes with --policy; ${hint}`);
    const pane: PaneRef | undefined = values.pane === undefined ? undefined : { target: values.pane, ...tmux };

    const [{ serveAcp, createPolicyGate }, { AgySession }, { discoverServers, createTmuxScope }] = await Promise.all([
      import("../acp/index.js"),
      import("../session/index.js"),
      import("../discovery/index.js"),
    ]);
    let policy;
    try {
      policy = await readPolicyOption(values, io.env);
    } catch (error) {
      io.stderr.write(`${failureText("acp", error)}\n`);
      return 1;
    }
    const auditor = auditorFor(io, auditLogFor(io, values), "acp");
    const policyGate = policy === undefined ? undefined : createPolicyGate();
    const extra: Partial<AttachOptions> =
      policy === undefined || policyGate === undefined ? {} : policyAttachOption(io, policy, values, auditor, policyGate.report);

    const onProblem = (message: string) => io.stderr.write(`${terminalText(`agy-bridge acp: ${message}`)}\n`);
    const scope = createTmuxScope(tmux, { onSkipped: onProblem });
    const source = sessionSource({ connection, pane, scope, extra, attach: AgySession.attach, discover: discoverServers });
    const stream = ndJsonStream(
      Writable.toWeb(io.stdout as Writable) as WritableStream<Uint8Array>,
      Readable.toWeb(io.stdin as Readable) as ReadableStream<Uint8Array>,
    );
    const served = serveAcp(stream, {
      source,
      version: await packageVersion(),
      policyGate,
      auditor,
      onProblem,
    });
    const onAbort = () => void served.close();
    io.signal.addEventListener("abort", onAbort, { once: true });
    await served.closed;
    io.signal.removeEventListener("abort", onAbort);
    await auditor.flush().catch(() => undefined);
    return 0;
  },
});

interface SourceDeps {
  connection: ConnectionArgs;
  pane: PaneRef | undefined;
  /** Which agy -L/-S offer (tmux-scope.ts). */
  scope: TmuxScope;
  extra: Partial<AttachOptions>;
  attach: (options: AttachOptions) => Promise<AgySessionApi>;
  discover: typeof import("../discovery/index.js").discoverServers;
}

/**
 * With --url or --pane, the one server they name; otherwise every agy
 * discovery finds in the -L/-S scope (tmux-scope.ts), each conversation with
 * the workspace agy gives it.
 */
function sessionSource(deps: SourceDeps): AcpSessionSource {
  const { connection, pane, scope, extra } = deps;
  const given = {
    ...(connection.url === undefined ? {} : { url: connection.url }),
    ...(connection.csrfToken === undefined ? {} : { csrfToken: connection.csrfToken }),
  };
  // Every agy in the -L/-S scope, one offer per top-level conversation (session/local-session-source.ts).
  const local = createLocalSessionSource({
    scope,
    discovery: {
      refresh: async (signal?: AbortSignal) =>
        (
          await deps.discover({
            ...(signal === undefined ? {} : { signal }),
            tmuxServers: scope.discoveryServers,
            ...(connection.csrfToken === undefined ? {} : { csrfToken: connection.csrfToken }),
          })
        ).servers,
      close: async () => undefined,
    },
    attach: deps.attach,
  });
  const workspaceOf = async (options: AttachOptions): Promise<{ id: string; workspace: string | undefined }> => {
    const session = await deps.attach({ ...options, follow: false, locatePane: false });
    try {
      return { id: session.conversationId, workspace: await session.workspace().catch(() => undefined) };
    } finally {
      await session.close();
    }
  };
  const single = connection.url !== undefined || pane !== undefined;
  return {
    ...(connection.conversationId === undefined ? {} : { defaultConversationId: connection.conversationId }),
    async list(signal) {
      if (single) {
        const found = await workspaceOf({
          ...given,
          ...(pane === undefined ? {} : { pane }),
          ...(connection.conversationId === undefined ? {} : { conversationId: connection.conversationId }),
          signal,
        });
        return [{ conversationId: found.id, ...(found.workspace === undefined ? {} : { workspace: found.workspace }) }];
      }
      const out: Array<Promise<AcpCandidate>> = [];
      for (const offer of await local.list(signal)) {
        const server = local.serverOf(offer.conversationId);
        const candidate: AcpCandidate = {
          conversationId: offer.conversationId,
          ...(offer.title === undefined ? {} : { title: offer.title }),
          ...(offer.updatedAt === undefined ? {} : { updatedAt: offer.updatedAt }),
        };
        if (server?.url === undefined) continue;
        out.push(
          workspaceOf({
            url: server.url,
            ...(server.csrfToken === undefined ? {} : { csrfToken: server.csrfToken }),
            conversationId: offer.conversationId,
            signal,
          })
            .then(({ workspace }) => (workspace === undefined ? candidate : { ...candidate, workspace }))
            .catch(() => candidate),
        );
      }
      return Promise.all(out);
    },
    async attach(conversationId, signal) {
      // Discovered: on the server the source last saw it on, with its pane (as serve, mcp and relay attach).
      if (!single) return local.attach(conversationId, { ...extra, signal });
      const options: AttachOptions = { ...given, ...extra, conversationId, signal };
      if (pane !== undefined) options.pane = pane;
      return deps.attach(options);
    },
  };
}
