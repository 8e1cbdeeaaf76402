/**
 * An `AgySessionApi` that plays scripted mapper events, for the agent's own
 * logic (stop reasons, usage, failures) where the simulator has no scenario:
 * agy's max-tokens and content-filter stops, a server that goes away. The
 * ACP side runs for real: `serveAcp` and the SDK's client over an in-memory
 * stream pair.
 */
import { client, type AnyMessage, type ClientConnection, type SessionNotification, type Stream } from "@agentclientprotocol/sdk";
import { serveAcp, type AcpAgentConnection } from "../../../src/acp/index.js";
import type { MapperEvent } from "../../../src/mapper/index.js";
import type { AgySessionApi } from "../../../src/session/index.js";

export type Emit = (...events: MapperEvent[]) => void;

export interface ScriptedWorld {
  connection: ClientConnection;
  agent: AcpAgentConnection;
  updates: SessionNotification[];
  /** Calls the session got: `interrupt`, `approve <id>`, … */
  calls: string[];
  emit: Emit;
  close(): Promise<void>;
}

const CONVERSATION = "conv-scripted";

export function scriptedWorld(onTurn: (text: string, emit: Emit) => void): ScriptedWorld {
  const calls: string[] = [];
  const waiting: Array<(event: MapperEvent | undefined) => void> = [];
  const queued: MapperEvent[] = [];
  let ended = false;
  const emit: Emit = (...events) => {
    for (const event of events) {
      const next = waiting.shift();
      if (next !== undefined) next(event);
      else queued.push(event);
    }
  };
  const session: AgySessionApi = {
    conversationId: CONVERSATION,
    url: "http://127.0.0.1:1",
    how: "scripted",
    async *events() {
      yield { type: "history_end", conversationId: CONVERSATION };
      for (;;) {
        const event = queued.shift() ?? (ended ? undefined : await new Promise<MapperEvent | undefined>((resolve) => waiting.push(resolve)));
        if (event === undefined) return;
        yield event;
      }
    },
    async sendTurn(text) {
      calls.push(`sendTurn ${text}`);
      setImmediate(() => onTurn(text, emit));
      return { result: "delivered", reason: "scripted" };
    },
    async approve(id) {
      calls.push(`approve ${id}`);
      return { result: "delivered", stepIndex: 1 };
    },
    async deny(id) {
      calls.push(`deny ${id}`);
      return { result: "delivered", stepIndex: 1 };
    },
    async answer(id) {
      calls.push(`answer ${id}`);
      return { result: "delivered", stepIndex: 1 };
    },
    pending: async () => [],
    readConversation: async () => [],
    workspace: async () => undefined,
    async interrupt() {
      calls.push("interrupt");
      return { result: "cancelled" };
    },
    screen: () => Promise.reject(new Error("no screen")),
    async close() {
      ended = true;
      for (const next of waiting.splice(0)) next(undefined);
    },
  };
  const toClient = new TransformStream<AnyMessage, AnyMessage>();
  const toAgent = new TransformStream<AnyMessage, AnyMessage>();
  const agentStream: Stream = { readable: toAgent.readable, writable: toClient.writable };
  const clientStream: Stream = { readable: toClient.readable, writable: toAgent.writable };
  const agent = serveAcp(agentStream, {
    version: "0.0.0-test",
    source: { list: async () => [{ conversationId: CONVERSATION }], attach: async () => session },
  });
  const updates: SessionNotification[] = [];
  const connection = client({ name: "scripted-test" })
    .onNotification("session/update", ({ params }) => {
      updates.push(params);
    })
    .connect(clientStream);
  return {
    connection,
    agent,
    updates,
    calls,
    emit,
    async close() {
      connection.close();
      await agent.close();
    },
  };
}

/** The events of a turn agy takes for `text`, up to (not including) its end. */
export function turnStart(text: string): MapperEvent[] {
  return [
    { type: "status", conversationId: CONVERSATION, trajectoryId: "t", status: "running", reason: "turn_started" },
    { type: "user_message", conversationId: CONVERSATION, trajectoryId: "t", stepIndex: 0, text },
  ];
}

export function answer(text: string, extra: { stopReason?: string; failed?: boolean } = {}): MapperEvent[] {
  const ids = { conversationId: CONVERSATION, trajectoryId: "t", stepIndex: 1, messageId: "agy_msg_t_1" };
  return [
    { type: "message_delta", ...ids, index: 0, text, replace: false, final: true },
    {
      type: "message",
      ...ids,
      role: "assistant",
      text,
      failed: extra.failed ?? false,
      ...(extra.stopReason === undefined ? {} : { stopReason: extra.stopReason }),
    },
  ];
}

export function idle(reason: "turn_completed" | "run_idle" = "turn_completed"): MapperEvent {
  return { type: "status", conversationId: CONVERSATION, trajectoryId: "t", status: "idle", reason };
}

export { CONVERSATION };
