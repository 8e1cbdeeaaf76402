/**
 * Probes one server's listeners, all at once: a TLS handshake decides each
 * listener's transport, `Heartbeat` decides whether it is agy's RPC, then
 * `GetAllCascadeTrajectories` on the preferred listener (TLS first) lists its
 * conversations (spike-notes §2.5, §3.1, §3.11, §10.2). Every wait is short
 * and bounded, so a silent listener costs one timeout, never a hang.
 *
 * agy's CSRF token goes only where it came from. A listener among agy's own
 * fds (`own`) gets it. One merely owned by agy's uid (`same_user`) is first
 * asked without it, and gets it only when it refuses that with 401 as agy's
 * server does (spike-notes §10.3) — a process of agy's own user could read the token from agy
 * anyway, so nothing is given away that was not already theirs. Any other
 * listener (`guess`) is never sent it: it is asked without a token, is
 * usable only when it answers so (an agy that wants no token), and a 401
 * from it is reported, not answered. A listener that answers a tokenless
 * call while agy has a token is not agy's (agy refuses those).
 */
import { isAgyBridgeError, RpcError } from "../errors.js";
import type { AgyRpcClient, AgyRpcClientOptions } from "../rpc/client.js";
import { conversationsOf } from "./conversations.js";
import type { CandidateListener } from "./listener-scan.js";
import { HINTS, type DiscoveryStep } from "./report.js";
import { probeHandshake } from "./transport-probe.js";
import type { DiscoveredConversation, DiscoveredListener, ListenerTrust } from "./types.js";

/** A listener to probe, with how far it is proven to be the process's own. */
export interface ProbeCandidate extends CandidateListener {
  trust: ListenerTrust;
  /** Why it is not `own`, for messages (`owned by uid 1000, agy's user`). */
  trustDetail?: string;
}

export interface ProbeSettings {
  createClient: (options: AgyRpcClientOptions) => AgyRpcClient;
  /** Deadline of each TLS handshake. */
  handshakeTimeoutMs: number;
  /** Deadline of each RPC (Heartbeat, GetAllCascadeTrajectories). */
  rpcTimeoutMs: number;
  /** A signal for one operation (handshake or RPC), each its own so the caller's carries one listener. */
  signal?: () => AbortSignal | undefined;
}

export interface ServerProbe {
  listeners: DiscoveredListener[];
  url?: string;
  /** The token was sent to (and accepted by) the `url` listener: the binding may carry it. */
  urlTokenSent?: boolean;
  conversations: DiscoveredConversation[];
  steps: DiscoveryStep[];
}

interface ListenerProbe {
  listener: DiscoveredListener;
  /** Open while the server is probed, when Heartbeat answered 200; the caller closes it. */
  client?: AgyRpcClient;
  step: DiscoveryStep;
}

/**
 * Probes `listeners` of `pid` in parallel with `token` (when one was found).
 * Conversations are asked of the first TLS listener that passes Heartbeat as
 * soon as it does, without waiting for its sibling; a plain listener is asked
 * only when no TLS one passed.
 */
export async function probeServer(pid: number, listeners: readonly ProbeCandidate[], token: string | undefined, settings: ProbeSettings): Promise<ServerProbe> {
  let asked: { probe: ListenerProbe; conversations: Promise<DiscoveryStep & { conversations?: DiscoveredConversation[] }> } | undefined;
  const ask = (probe: ListenerProbe) => {
    asked ??= { probe, conversations: listConversations(pid, probe, settings) };
  };
  const pending = listeners.map((l) =>
    probeListener(pid, l, token, settings).then((probe) => {
      if (probe.client !== undefined && probe.listener.transport === "tls") ask(probe);
      return probe;
    }),
  );
  const probes = await Promise.all(pending);
  try {
    const fallback = probes.find((p) => p.client !== undefined);
    if (fallback !== undefined) ask(fallback);
    const result: ServerProbe = { listeners: probes.map((p) => p.listener), conversations: [], steps: probes.map((p) => p.step) };
    const chosen = asked as typeof asked | undefined;
    if (chosen === undefined) return result;
    result.url = (chosen.probe.client as AgyRpcClient).baseUrl;
    result.urlTokenSent = chosen.probe.listener.tokenSent;
    const { conversations, ...step } = await chosen.conversations;
    if (conversations !== undefined) result.conversations = conversations;
    result.steps.push(step);
    return result;
  } finally {
    await Promise.all(probes.map((p) => p.client?.close()));
  }
}

async function listConversations(
  pid: number,
  probe: ListenerProbe,
  settings: ProbeSettings,
): Promise<DiscoveryStep & { conversations?: DiscoveredConversation[] }> {
  const port = probe.listener.port;
  try {
    // The Heartbeat's client: its kept-alive connection saves a second handshake.
    const conversations = conversationsOf(await (probe.client as AgyRpcClient).getAllCascadeTrajectories({}, callOptions(settings)));
    const n = conversations.length;
    return { step: "conversations", status: "ok", pid, port, detail: `GetAllCascadeTrajectories lists ${n} conversation${n === 1 ? "" : "s"}`, conversations };
  } catch (error) {
    return { step: "conversations", status: "warn", pid, port, detail: `GetAllCascadeTrajectories failed: ${sentence(error)}` };
  }
}

async function probeListener(pid: number, candidate: ProbeCandidate, token: string | undefined, settings: ProbeSettings): Promise<ListenerProbe> {
  const { port, source, trust } = candidate;
  const host = dialHost(candidate.host);
  const base = { port, host: candidate.host, source, trust, tokenSent: false };
  const handshake = await probeHandshake(host, port, settings.handshakeTimeoutMs, settings.signal?.());
  const step = (status: DiscoveryStep["status"], detail: string, hint?: string): DiscoveryStep => ({
    step: "listener",
    status,
    pid,
    port,
    detail,
    ...(hint === undefined ? {} : { hint }),
  });
  if (handshake.kind === "refused") {
    const error = `nothing listens on port ${port} any more (connection refused)`;
    return { listener: { ...base, transport: "unknown", heartbeatOk: false, error }, step: step("fail", error, HINTS.refused) };
  }
  if (handshake.kind === "timeout") {
    const error = `port ${port} accepted the connection but sent nothing within ${settings.handshakeTimeoutMs} ms`;
    return { listener: { ...base, transport: "unknown", heartbeatOk: false, error }, step: step("fail", error, HINTS.timeout) };
  }
  const transport = handshake.kind === "tls" ? "tls" : "plain";
  const url = `${transport === "tls" ? "https" : "http"}://${urlHost(host)}:${port}`;
  const { client, beat, tokenSent } = await vettedHeartbeat(pid, url, candidate, token, settings);
  if (!beat.ok) await client.close();
  if (handshake.kind === "closed" && beat.httpStatus === undefined && !beat.ok) {
    const error = `port ${port}: ${handshake.detail}, and plain HTTP got no answer either`;
    return { listener: { ...base, transport: "unknown", heartbeatOk: false, error }, step: step("fail", error, HINTS.tlsFailed) };
  }
  const listener: DiscoveredListener = { ...base, transport, heartbeatOk: beat.ok, tokenSent };
  if (beat.httpStatus !== undefined) listener.httpStatus = beat.httpStatus;
  if (beat.ok) return { listener, client, step: step("ok", `port ${port} speaks ${transport === "tls" ? "TLS" : "plain HTTP"} and answers Heartbeat`) };
  if (beat.error !== undefined) listener.error = beat.error;
  return { listener, step: step("fail", `port ${port} (${transport === "tls" ? "TLS" : "plain HTTP"}): ${beat.error}`, beat.hint) };
}

type Beat = { ok: boolean; httpStatus?: number; error?: string; hint?: string };

/**
 * `Heartbeat` on `url` under the token rule above: the client that made the
 * last call (open), what it answered, and whether the token was sent.
 */
async function vettedHeartbeat(
  pid: number,
  url: string,
  candidate: ProbeCandidate,
  token: string | undefined,
  settings: ProbeSettings,
): Promise<{ client: AgyRpcClient; beat: Beat; tokenSent: boolean }> {
  if (token === undefined || candidate.trust === "own") {
    const client = settings.createClient({ baseUrl: url, ...(token === undefined ? {} : { csrfToken: token }) });
    return { client, beat: await heartbeat(client, token, settings), tokenSent: token !== undefined };
  }
  const bare = settings.createClient({ baseUrl: url });
  const first = await heartbeat(bare, undefined, settings);
  const unproven = candidate.trustDetail === undefined ? "" : ` (${candidate.trustDetail})`;
  if (first.ok) {
    const error = `answered Heartbeat without a CSRF token, which the agy of pid ${pid} (it has one) would refuse, so it is not that agy's listener; the token was not sent`;
    return { client: bare, beat: { ok: false, error, hint: HINTS.notAgy }, tokenSent: false };
  }
  if (first.httpStatus !== 401) return { client: bare, beat: first, tokenSent: false };
  if (candidate.trust === "guess") {
    const error = `answered 401 as agy does, but it cannot be shown to be the listener of pid ${pid}${unproven}, so its CSRF token was not sent`;
    return { client: bare, beat: { ok: false, httpStatus: 401, error, hint: HINTS.guessed }, tokenSent: false };
  }
  // Owned by agy's user and refusing a tokenless call as agy does: it may have the token.
  await bare.close();
  const client = settings.createClient({ baseUrl: url, csrfToken: token });
  return { client, beat: await heartbeat(client, token, settings), tokenSent: true };
}

async function heartbeat(
  client: AgyRpcClient,
  token: string | undefined,
  settings: ProbeSettings,
): Promise<{ ok: boolean; httpStatus?: number; error?: string; hint?: string }> {
  try {
    await client.heartbeat({}, callOptions(settings));
    return { ok: true };
  } catch (error) {
    if (error instanceof RpcError && error.isUnauthenticated) {
      return token === undefined
        ? { ok: false, httpStatus: 401, error: "answered 401: a CSRF token is needed and none was found", hint: HINTS.unauthorized }
        : { ok: false, httpStatus: 401, error: "answered 401: the CSRF token found was refused", hint: HINTS.tokenRefused };
    }
    if (error instanceof RpcError && error.httpStatus !== undefined) {
      return {
        ok: false,
        httpStatus: error.httpStatus,
        error: `answered Heartbeat with HTTP ${error.httpStatus}, so it is not agy's RPC listener`,
        hint: HINTS.notAgy,
      };
    }
    if (isAgyBridgeError(error, "timeout")) {
      return { ok: false, error: `did not answer Heartbeat within ${settings.rpcTimeoutMs} ms`, hint: HINTS.timeout };
    }
    return { ok: false, error: sentence(error), hint: HINTS.tlsFailed };
  }
}

function callOptions(settings: ProbeSettings): { timeoutMs: number; signal?: AbortSignal } {
  const signal = settings.signal?.();
  return signal === undefined ? { timeoutMs: settings.rpcTimeoutMs } : { timeoutMs: settings.rpcTimeoutMs, signal };
}

/** agy's reference client dials 127.0.0.1 (spike-notes §1.2); an IPv4-mapped listener takes it too. */
export function dialHost(host: string): string {
  if (host.startsWith("::ffff:")) return host.slice("::ffff:".length);
  if (host === "0:0:0:0:0:0:0:1") return "::1";
  return host;
}

function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/** The error's own sentence; RPC errors are already scrubbed of the token by the client. */
function sentence(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
