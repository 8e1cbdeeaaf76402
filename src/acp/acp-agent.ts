/**
 * The ACP agent: an editor's `initialize`, `session/new|load|list|close`,
 * `session/prompt` and `session/cancel`, over one connection, answered by
 * joining the attended agy sessions a {@link AcpSessionSource} offers. The
 * ACP session id is agy's conversation id, so `session/load` with it joins
 * the same conversation again (and replays it).
 */
import { agent, PROTOCOL_VERSION, RequestError, type AgentContext, type ContentBlock, type SessionInfo, type Stream } from "@agentclientprotocol/sdk";
import { AgyBridgeError } from "../errors.js";
import type { SessionAuditor } from "../audit/index.js";
import { createAcpSession, type AcpSession } from "./acp-session.js";
import type { PolicyGate } from "./policy-gate.js";
import { chooseConversation, namedConversation } from "./session-choice.js";
import type { AcpSessionSource } from "./session-source.js";

export interface AcpAgentOptions {
  source: AcpSessionSource;
  /** agy-bridge's version, for `agentInfo`. */
  version: string;
  policyGate?: PolicyGate | undefined;
  auditor?: SessionAuditor | undefined;
  policyWaitMs?: number | undefined;
  cancelWaitMs?: number | undefined;
  /** Told what went wrong where no request can carry it (a failed delivery, an update that could not be sent). */
  onProblem?: ((message: string) => void) | undefined;
}

export interface AcpAgentConnection {
  /** Settles when the editor closes the connection (or it breaks); every session is closed by then. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/** Serves one editor over `stream` (newline-delimited JSON-RPC, e.g. stdio). */
export function serveAcp(stream: Stream, options: AcpAgentOptions): AcpAgentConnection {
  const sessions = new Map<string, AcpSession>();
  const stop = new AbortController();
  let decidedBy = "acp:client";
  let forms = false;

  const open = async (conversationId: string, client: AgentContext, history: boolean): Promise<AcpSession> => {
    await sessions.get(conversationId)?.close();
    sessions.delete(conversationId);
    let agy;
    try {
      agy = await options.source.attach(conversationId, stop.signal);
    } catch (error) {
      throw new RequestError(-32002, `agy-bridge cannot join conversation ${conversationId}: ${AgyBridgeError.from(error).message}`, { conversationId });
    }
    const session = createAcpSession({
      sessionId: conversationId,
      agy,
      client,
      decidedBy,
      forms,
      policyGate: options.policyGate,
      auditor: options.auditor,
      policyWaitMs: options.policyWaitMs,
      cancelWaitMs: options.cancelWaitMs,
      onProblem: options.onProblem,
    });
    try {
      await session.start(history);
    } catch (error) {
      await session.close();
      throw new RequestError(-32603, `agy-bridge could not read conversation ${conversationId}: ${(error as Error).message}`);
    }
    sessions.set(conversationId, session);
    return session;
  };

  const sessionFor = (sessionId: string): AcpSession => {
    const session = sessions.get(sessionId);
    if (session === undefined)
      throw new RequestError(-32002, `No session ${sessionId} is open on this connection; join it with session/new or session/load first.`, { sessionId });
    return session;
  };

  const app = agent({ name: "agy-bridge" })
    .onRequest("initialize", ({ params }) => {
      decidedBy = `acp:${clientName(params.clientInfo?.name)}`;
      forms = params.clientCapabilities?.elicitation?.form !== undefined && params.clientCapabilities.elicitation.form !== null;
      return {
        protocolVersion: PROTOCOL_VERSION,
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { image: false, audio: false, embeddedContext: false },
          sessionCapabilities: { list: {}, close: {} },
        },
        agentInfo: { name: "agy-bridge", title: "agy-bridge (join an attended agy session)", version: options.version },
        authMethods: [],
      };
    })
    .onRequest("session/new", async ({ params, client }) => {
      let conversationId = namedConversation(params._meta) ?? options.source.defaultConversationId;
      let how = conversationId === undefined ? "" : "named";
      if (conversationId === undefined) {
        const candidates = await listOrFail(options.source, stop.signal);
        const choice = chooseConversation(candidates, params.cwd);
        if ("error" in choice) throw RequestError.invalidParams({ candidates: choice.candidates }, choice.error);
        conversationId = choice.chosen;
        how = choice.how;
      }
      const session = await open(conversationId, client, false);
      return { sessionId: session.sessionId, _meta: { agyBridge: { conversationId, how } } };
    })
    .onRequest("session/load", async ({ params, client }) => {
      const session = await open(params.sessionId, client, true);
      const usage = session.usage();
      return { _meta: { agyBridge: { conversationId: params.sessionId, ...(usage === undefined ? {} : { usage }) } } };
    })
    .onRequest("session/list", async ({ params }) => {
      const candidates = await listOrFail(options.source, stop.signal);
      const sessions: SessionInfo[] = candidates
        .filter((c) => params.cwd === undefined || params.cwd === null || c.workspace === undefined || c.workspace === params.cwd)
        .map((c) => ({
          sessionId: c.conversationId,
          // ACP wants an absolute cwd; agy 1.0.x names no workspace, so the editor's own stands in.
          cwd: c.workspace ?? params.cwd ?? "/",
          ...(c.title === undefined ? {} : { title: c.title }),
          ...(c.updatedAt === undefined ? {} : { updatedAt: c.updatedAt }),
          _meta: { agyBridge: { workspaceKnown: c.workspace !== undefined } },
        }));
      return { sessions };
    })
    .onRequest("session/close", async ({ params }) => {
      await sessions.get(params.sessionId)?.close();
      sessions.delete(params.sessionId);
      return {};
    })
    .onRequest("session/prompt", async ({ params }) => {
      const session = sessionFor(params.sessionId);
      return session.prompt(promptText(params.prompt));
    })
    .onNotification("session/cancel", async ({ params }) => {
      await sessions.get(params.sessionId)?.cancel();
    });

  const connection = app.connect(stream);
  const closeAll = async () => {
    stop.abort();
    const all = [...sessions.values()];
    sessions.clear();
    await Promise.all(all.map((s) => s.close().catch(() => undefined)));
  };
  const closed = connection.closed.then(closeAll, closeAll);
  return {
    closed,
    async close() {
      connection.close();
      await closed;
    },
  };
}

async function listOrFail(source: AcpSessionSource, signal: AbortSignal) {
  try {
    return await source.list(signal);
  } catch (error) {
    throw new RequestError(-32603, `agy-bridge could not look for agy sessions: ${AgyBridgeError.from(error).message}`);
  }
}

/** The prompt as the text typed into agy: text blocks, and a linked resource as its URI (the only kinds advertised). */
export function promptText(blocks: readonly ContentBlock[]): string {
  const parts: string[] = [];
  for (const block of blocks) {
    if (block.type === "text") parts.push(block.text);
    else if (block.type === "resource_link") parts.push(block.uri);
    else
      throw RequestError.invalidParams(
        { type: block.type },
        `agy-bridge types prompts into agy's TUI, which takes text only; a ${block.type} block cannot be sent.`,
      );
  }
  const text = parts.join("\n").trim();
  if (text === "") throw RequestError.invalidParams(undefined, "The prompt is empty; send some text.");
  return text;
}

/** The client's name as it goes into `decidedBy`: printable, short, never empty. */
export function clientName(name: string | null | undefined): string {
  const clean = (name ?? "")
    .replace(/[^\p{L}\p{N}._\- ]/gu, "")
    .trim()
    .slice(0, 64);
  return clean === "" ? "client" : clean.replace(/ /g, "-");
}
