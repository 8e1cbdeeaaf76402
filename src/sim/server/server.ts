/**
 * The fake agy language server: two loopback listeners like agy 1.1.5 (TLS
 * with HTTP/1.1 + HTTP/2, and plain HTTP/1.1), both answering Connect JSON
 * unary calls and the `StreamAgentStateUpdates` server-stream, in the
 * persona of one agy version (`persona.ts`).
 */
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createSecureServer, type Http2SecureServer, type ServerHttp2Session } from "node:http2";
import type { AddressInfo, Socket } from "node:net";
import { AgyBridgeError } from "../../errors.js";
import { isObject, type JsonObject } from "../../protocol/json.js";
import { SERVICE_NAME } from "../../protocol/methods.js";
import { createSelfSignedCertificate } from "./certificate.js";
import { createSimEngine, type SimEngine } from "../engine/engine.js";
import type { SimFaults } from "./faults.js";
import {
  ClientGone,
  hasCsrfToken,
  isHttp2,
  readBody,
  refuse,
  sendConnectError,
  sendJson,
  withoutSecret,
  type SimRequest,
  type SimResponse,
} from "./http-edge.js";
import type { Scenario } from "../engine/scenario-schema.js";
import { loadScenarios } from "../engine/scenarios.js";
import { systemClock, type SimClock } from "../engine/sim-clock.js";
import { handleStream, REACTIVE_METHOD, sendReactiveDeprecated, type StreamContext } from "./stream-handler.js";
import { agyPersona, type AgyPersona, type AgyVersion } from "../engine/persona.js";
import { populateConversations, type PopulateOptions } from "../engine/populate.js";
import { createUnaryHandlers, type UnaryHandler } from "./unary-handlers.js";

export interface SimServerOptions {
  /**
   * The agy version whose wire the simulator speaks (docs/simulator.md,
   * "Personas"): `"1.0.10"` (default), `"1.1"` or `"1.2"`. Each sends only
   * the fields that version is recorded to send.
   */
  agyVersion?: AgyVersion;
  /** When set, every call must carry `x-codeium-csrf-token: <token>`, else HTTP 401 "missing CSRF token". */
  csrfToken?: string;
  /** Already-bound listening sockets inherited from the --as-agy launcher (file descriptors). Default: bind 127.0.0.1:0 twice. */
  listenFds?: { tls: number; plain: number };
  /** Scenarios to play; default: every file in fixtures/scenarios/ (loadScenarios()). */
  scenarios?: Scenario[];
  /** How long a WAITING step waits before it times out to ERROR and is retried at a higher index. Default 300_000. */
  interactionTimeoutMs?: number;
  /** Multiplies every scenario delay (0 = as fast as possible; tests use small values). Default 1. */
  speed?: number;
  faults?: SimFaults;
  /** Clock and timers for step timestamps, scenario delays and prompt timeouts. Default: the system clock. */
  clock?: SimClock;
  /** The model of turns sent without one (the TUI's); `SendUserCascadeMessage` names its own. Default `MODEL_PLACEHOLDER_M20`. */
  model?: string;
  /** The workspace `GetConversationMetadata` reports. Default `/home/sim/project`. */
  workspacePath?: string;
  /** Request bodies larger than this are refused with 413 before they are read whole. Default 8 MiB. */
  maxRequestBytes?: number;
  /**
   * Told about every simulator failure: a turn that broke (its open steps are
   * then ERROR) or a call that could not be answered (the client got a 500
   * naming the reason). Messages never carry the CSRF token.
   */
  onError?: (error: AgyBridgeError) => void;
  /**
   * Conversations to host from the start besides the active one: `conversations`
   * headless conversations of `steps` settled steps each (the simulator's own
   * steps, copied turn after turn), for benchmarks of a supervisor of many long
   * conversations. Their ids are in `populatedIds`.
   */
  populate?: PopulateOptions;
}

export interface SimServer {
  readonly tlsPort: number;
  readonly plainPort: number;
  readonly tlsUrl: string; // "https://127.0.0.1:<tlsPort>"
  readonly plainUrl: string; // "http://127.0.0.1:<plainPort>"
  readonly engine: SimEngine;
  /** The conversations `populate` added, in order. */
  readonly populatedIds: readonly string[];
  /** The agy version this simulator plays. */
  readonly agyVersion: AgyVersion;
  /** The fault knobs in force. */
  readonly faults: SimFaults;
  /** How many `StreamAgentStateUpdates` streams follow `conversationId` right now (a test waits for its client to subscribe). */
  openStreams(conversationId: string): number;
  /** Replaces the fault knobs: unary calls see them at once, streams from their next connection on. */
  setFaults(faults: SimFaults): void;
  /** Closes both listeners and every connection, then binds new ephemeral ports; conversations survive. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

const PATH_PREFIX = `/${SERVICE_NAME}/`;
const DEFAULT_MAX_REQUEST_BYTES = 8 * 1024 * 1024;

/** Starts the simulated agy language server on two loopback listeners. */
export async function startSimServer(options: SimServerOptions = {}): Promise<SimServer> {
  const persona = agyPersona(options.agyVersion);
  const scenarios = options.scenarios ?? (await loadScenarios());
  const certificate = await createSelfSignedCertificate();
  const engine = createSimEngine({
    scenarios,
    ...(options.clock !== undefined ? { clock: options.clock } : {}),
    speed: options.speed ?? 1,
    interactionTimeoutMs: options.interactionTimeoutMs ?? 300_000,
    ...(options.model !== undefined ? { model: options.model } : {}),
    ...(options.onError !== undefined ? { onError: options.onError } : {}),
  });
  const populated = options.populate === undefined ? [] : await populateConversations(engine, scenarios, options.populate);
  const server = new Server(engine, persona, options, certificate);
  server.populatedIds = populated;
  try {
    await server.listen(options.listenFds);
  } catch (error) {
    await server.close();
    throw error;
  }
  return server;
}

class Server implements SimServer {
  readonly engine: SimEngine;
  populatedIds: readonly string[] = [];
  readonly #persona: AgyPersona;
  readonly #csrfToken: string | undefined;
  readonly #clock: SimClock;
  readonly #maxRequestBytes: number;
  readonly #onError: (error: AgyBridgeError) => void;
  readonly #unary: Record<string, UnaryHandler>;
  readonly #stream: StreamContext;
  readonly #tls: Http2SecureServer;
  readonly #plain: HttpServer;
  readonly #sockets = new Set<Socket>();
  readonly #sessions = new Set<ServerHttp2Session>();
  #faults: SimFaults;
  #closed = false;

  constructor(engine: SimEngine, persona: AgyPersona, options: SimServerOptions, certificate: { cert: string; key: string }) {
    this.engine = engine;
    this.#persona = persona;
    this.#csrfToken = options.csrfToken;
    this.#clock = options.clock ?? systemClock;
    this.#maxRequestBytes = options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
    this.#onError = options.onError ?? (() => undefined);
    this.#faults = { ...options.faults };
    this.#unary = createUnaryHandlers({ engine, persona, workspacePath: options.workspacePath ?? "/home/sim/project" });
    this.#stream = { engine, persona, faults: () => this.#faults, subscribers: new Map(), open: new Map() };
    const handler = (req: SimRequest, res: SimResponse): void => {
      this.#handle(req, res).catch((error: unknown) => this.#failed(res, error));
    };
    this.#tls = createSecureServer({ cert: certificate.cert, key: certificate.key, allowHTTP1: true }, handler);
    this.#plain = createHttpServer(handler);
    for (const server of [this.#tls, this.#plain]) {
      server.on("connection", (socket: Socket) => {
        this.#sockets.add(socket);
        socket.on("close", () => this.#sockets.delete(socket));
      });
    }
    this.#tls.on("session", (session: ServerHttp2Session) => {
      this.#sessions.add(session);
      session.on("close", () => this.#sessions.delete(session));
    });
  }

  get agyVersion(): AgyVersion {
    return this.#persona.version;
  }

  get tlsPort(): number {
    return (this.#tls.address() as AddressInfo | null)?.port ?? 0;
  }

  get plainPort(): number {
    return (this.#plain.address() as AddressInfo | null)?.port ?? 0;
  }

  get tlsUrl(): string {
    return `https://127.0.0.1:${this.tlsPort}`;
  }

  get plainUrl(): string {
    return `http://127.0.0.1:${this.plainPort}`;
  }

  openStreams(conversationId: string): number {
    return this.#stream.open.get(conversationId) ?? 0;
  }

  get faults(): SimFaults {
    return { ...this.#faults };
  }

  setFaults(faults: SimFaults): void {
    this.#faults = { ...faults };
  }

  async listen(fds?: { tls: number; plain: number }): Promise<void> {
    await Promise.all([
      listenOn(this.#tls, fds === undefined ? { port: 0, host: "127.0.0.1" } : { fd: fds.tls }),
      listenOn(this.#plain, fds === undefined ? { port: 0, host: "127.0.0.1" } : { fd: fds.plain }),
    ]);
  }

  async restart(): Promise<void> {
    await this.#closeListeners();
    // Inherited fds are gone once closed; a restart always binds fresh ephemeral ports.
    await this.listen();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.engine.close();
    await this.#closeListeners();
  }

  async #closeListeners(): Promise<void> {
    const closing = [this.#tls, this.#plain].map((server) => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve())));
    for (const session of this.#sessions) session.destroy();
    for (const socket of this.#sockets) socket.destroy();
    await Promise.all(closing);
  }

  /** A call the simulator could not answer: a 500 that names the reason (never the token), and `onError`. */
  #failed(res: SimResponse, error: unknown): void {
    if (error instanceof ClientGone) return;
    const reason = withoutSecret(error instanceof Error ? error.message : String(error), this.#csrfToken);
    this.#onError(
      new AgyBridgeError("internal", `The simulator could not answer a call (${reason}); see the cause, and restart the simulator if it persists.`, {
        cause: error,
      }),
    );
    if (!res.headersSent) sendConnectError(res, 500, "internal", `simulator failure: ${reason}`);
    else res.end();
  }

  async #handle(req: SimRequest, res: SimResponse): Promise<void> {
    // Refusals come before the body is read: a hostile client cannot make us hold it.
    if (this.#csrfToken !== undefined && !hasCsrfToken(req, this.#csrfToken)) {
      refuse(res, 401, "unauthenticated", "missing CSRF token");
      return;
    }
    const url = req.url ?? "";
    const method = url.startsWith(PATH_PREFIX) ? (url.slice(PATH_PREFIX.length).split("?")[0] ?? "") : "";
    const known = method === "StreamAgentStateUpdates" || method === REACTIVE_METHOD || this.#unary[method] !== undefined;
    if (req.method !== "POST" || !known) {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8", ...(isHttp2(res) ? {} : { connection: "close" }) });
      res.end("404 page not found\n");
      return;
    }
    const body = await readBody(req, this.#maxRequestBytes);
    if (body === "too_large") {
      refuse(res, 413, "resource_exhausted", `request body larger than ${this.#maxRequestBytes} bytes`);
      return;
    }
    if (method === "StreamAgentStateUpdates") {
      handleStream(body, res, this.#stream);
      return;
    }
    if (method === REACTIVE_METHOD) {
      sendReactiveDeprecated(res);
      return;
    }
    const contentType = String(req.headers["content-type"] ?? "");
    if (!contentType.startsWith("application/json")) {
      sendConnectError(res, 415, "unknown", `invalid content-type: "${contentType}"; expecting "application/json"`);
      return;
    }
    let request: JsonObject;
    try {
      const parsed: unknown = body.byteLength === 0 ? {} : JSON.parse(body.toString("utf8"));
      if (!isObject(parsed)) throw new Error("request is not a JSON object");
      request = parsed;
    } catch (error) {
      sendConnectError(res, 400, "invalid_argument", `unmarshal request: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    const delay = this.#faults.unaryDelayMs ?? 0;
    if (delay > 0) await new Promise<void>((resolve) => this.#clock.setTimeout(resolve, delay));
    const refusal = this.#faults.refuseInteractions;
    if (refusal !== undefined && method === "HandleCascadeUserInteraction") {
      sendConnectError(res, 503, "unavailable", refusal);
      return;
    }
    const result = (this.#unary[method] as UnaryHandler)(request);
    if ("body" in result) sendJson(res, 200, result.body);
    else sendConnectError(res, result.status, result.code, result.message);
  }
}

function listenOn(server: HttpServer | Http2SecureServer, target: { port: number; host: string } | { fd: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once("error", onError);
    server.listen(target, () => {
      server.off("error", onError);
      resolve();
    });
  });
}
