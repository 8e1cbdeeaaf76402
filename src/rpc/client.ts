/**
 * The Connect client for agy's language server, and the only file in the
 * project that opens sockets.
 *
 * Shape: connect-es protocol-level pieces (connect-node's universal HTTP
 * client for HTTP/1.1 and HTTP/2) carrying raw JSON, decoded with JSON.parse
 * and loose zod schemas. The high-level client with `google.protobuf.Struct`
 * descriptors was measured slower on a 10,000-step snapshot (see
 * `bench/rpc-snapshot.bench.ts`), and typed messages would drop agy's unknown
 * fields. This file owns the request envelope, the end-stream trailer and the
 * error mapping; callers never see bytes.
 */
import { randomUUID } from "node:crypto";
import * as http from "node:http";
import * as http2 from "node:http2";
import * as https from "node:https";
import { once } from "node:events";
import type { Duplex } from "node:stream";
import * as tls from "node:tls";
import { createNodeHttpClient, type NodeHttpClientOptions } from "@connectrpc/connect-node";
import type { UniversalClientFn, UniversalClientResponse } from "@connectrpc/connect/protocol";
import type { z } from "zod";
import { RpcError } from "../errors.js";
import { createCertificatePin, type CertificatePin } from "./certificate-pin.js";
import { httpStatusError, toRpcError } from "./call-failure.js";
import { DEFAULT_MAX_FRAME_BYTES, encodeJsonEnvelope, FLAG_DATA } from "../protocol/envelope.js";
import { assertLoopbackUrl } from "./loopback.js";
import { DEFAULT_TIMEOUTS_MS, METHODS, methodPath, type MethodName, type TimeoutClass } from "../protocol/methods.js";
import * as build from "./requests.js";
import { decodeStepsResponse, decodeStreamBody, joinChunks, parseJsonBody, validateBody } from "./response-decoding.js";
import {
  AllTrajectoriesResponseSchema,
  AvailableModelsResponseSchema,
  ConversationMetadataResponseSchema,
  JsonObjectSchema,
  TrajectoryResponseSchema,
  type AllTrajectoriesResponse,
  type ConversationMetadataResponse,
  type JsonObject,
  type ModelCatalog,
  type Step,
  type StreamUpdate,
  type TrajectoryResponse,
} from "../protocol/wire-schemas.js";

export interface AgyRpcClientOptions {
  /** `https://127.0.0.1:<port>` (or plain `http://`); must be loopback. */
  baseUrl: string;
  /** Sent as `x-codeium-csrf-token` when given; never logged or put in errors. */
  csrfToken?: string;
  /** Default "1.1": agy's reference client speaks HTTP/1.1 over TLS. */
  httpVersion?: "1.1" | "2";
  /**
   * "pin-first-seen" (default): accept agy's self-signed certificate on the
   * first connection and refuse a different one for the rest of the client's
   * life. "insecure": accept any certificate.
   */
  tls?: "pin-first-seen" | "insecure";
  /** Per-class deadlines in ms (0 = none); see `DEFAULT_TIMEOUTS_MS`. */
  timeouts?: Partial<Record<TimeoutClass, number>>;
  /** Largest stream frame or unary body accepted; default 64 MiB. */
  maxFrameBytes?: number;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Whole-call deadline in ms, overriding the method's class default; 0 = none. */
  timeoutMs?: number;
}

export interface StreamCallOptions extends CallOptions {
  /** Called once the server accepted the stream (2xx headers), before any frame. */
  onOpen?: () => void;
}

export type StreamAgentStateUpdatesInput = Omit<build.StreamInput, "subscriberId"> & { subscriberId?: string };

/** Typed access to agy's language server. Every failure is an `RpcError`. */
export interface AgyRpcClient {
  readonly baseUrl: string;
  heartbeat(input?: Record<string, never>, options?: CallOptions): Promise<void>;
  getConversationMetadata(input: build.ConversationInput, options?: CallOptions): Promise<ConversationMetadataResponse>;
  getCascadeTrajectorySteps(input: build.StepsInput, options?: CallOptions): Promise<{ steps: Step[] }>;
  getCascadeTrajectory(input: build.CascadeInput, options?: CallOptions): Promise<TrajectoryResponse>;
  /** A server stream; a fresh `subscriberId` is generated when not given. Single use. */
  streamAgentStateUpdates(input: StreamAgentStateUpdatesInput, options?: StreamCallOptions): AsyncIterable<StreamUpdate>;
  handleCascadeUserInteraction(input: build.HandleInteractionInput, options?: CallOptions): Promise<JsonObject>;
  cancelCascadeSteps(input: build.CancelStepsInput, options?: CallOptions): Promise<JsonObject>;
  cancelCascadeInvocation(input: build.CancelInvocationInput, options?: CallOptions): Promise<JsonObject>;
  forceStopCascadeTree(input: build.ConversationInput, options?: CallOptions): Promise<JsonObject>;
  getAllCascadeTrajectories(input?: Record<string, never>, options?: CallOptions): Promise<AllTrajectoriesResponse>;
  /** The catalog, unwrapped from agy's `response` wrapper. */
  getAvailableModels(input?: Record<string, never>, options?: CallOptions): Promise<ModelCatalog>;
  startCascade(input?: build.StartCascadeInput, options?: CallOptions): Promise<JsonObject>;
  /** Library use only: needs a model; user turns go through the TUI. */
  sendUserCascadeMessage(input: build.SendMessageInput, options?: CallOptions): Promise<JsonObject>;
  /** Aborts calls in flight and closes every connection. */
  close(): Promise<void>;
}

/** Creates a client. Throws `not_loopback` before any socket when `baseUrl` is not loopback. */
export function createAgyRpcClient(options: AgyRpcClientOptions): AgyRpcClient {
  return new ConnectJsonClient(options);
}

const UNARY_CONTENT_TYPE = "application/json";
const STREAM_CONTENT_TYPE = "application/connect+json";
const ERROR_BODY_LIMIT = 64 * 1024;
/** Connect/handshake deadline, as agy's reference client uses for streams (10 s). */
const CONNECT_TIMEOUT_MS = 10_000;
const encoder = new TextEncoder();

interface Call {
  readonly signal: AbortSignal;
  fail(reason: unknown): RpcError;
  dispose(): void;
}

class ConnectJsonClient implements AgyRpcClient {
  readonly baseUrl: string;
  readonly #origin: string;
  readonly #token: string | undefined;
  readonly #timeouts: Readonly<Record<TimeoutClass, number>>;
  readonly #maxFrameBytes: number;
  readonly #http: UniversalClientFn;
  readonly #closers: Array<() => void> = [];
  readonly #inFlight = new Set<AbortController>();
  #closed = false;

  constructor(options: AgyRpcClientOptions) {
    const url = assertLoopbackUrl(options.baseUrl);
    this.#origin = url.origin;
    this.baseUrl = url.origin;
    this.#token = options.csrfToken === "" ? undefined : options.csrfToken;
    this.#timeouts = { ...DEFAULT_TIMEOUTS_MS, ...options.timeouts };
    this.#maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    const secure = url.protocol === "https:";
    const pin = secure && options.tls !== "insecure" ? createCertificatePin(url.origin) : undefined;
    this.#http = createNodeHttpClient(this.#transportOptions(url, secure, pin, options.httpVersion ?? "1.1"));
  }

  #transportOptions(url: URL, secure: boolean, pin: CertificatePin | undefined, version: "1.1" | "2"): NodeHttpClientOptions {
    if (version === "2") {
      const sessions = new Http2Sessions(url.origin, secure ? () => connectTls(url, ["h2"], pin) : undefined);
      this.#closers.push(() => sessions.close());
      return { httpVersion: "2", sessionProvider: () => sessions };
    }
    const agent = secure ? new PinnedHttpsAgent(url, pin) : new http.Agent({ keepAlive: true });
    this.#closers.push(() => agent.destroy());
    return { httpVersion: "1.1", nodeOptions: { agent } };
  }

  async heartbeat(input: Record<string, never> = {}, options?: CallOptions): Promise<void> {
    await this.#unary("Heartbeat", { ...input }, options, () => undefined);
  }

  getConversationMetadata(input: build.ConversationInput, options?: CallOptions) {
    return this.#unary("GetConversationMetadata", build.conversationMetadataRequest(input), options, (bytes, m) =>
      validateBody(parseJsonBody(bytes, m), ConversationMetadataResponseSchema, m),
    );
  }

  getCascadeTrajectorySteps(input: build.StepsInput, options?: CallOptions) {
    return this.#unary("GetCascadeTrajectorySteps", build.stepsRequest(input), options, decodeStepsResponse);
  }

  getCascadeTrajectory(input: build.CascadeInput, options?: CallOptions) {
    return this.#unary("GetCascadeTrajectory", build.trajectoryRequest(input), options, (bytes, m) =>
      validateBody(parseJsonBody(bytes, m), TrajectoryResponseSchema, m),
    );
  }

  handleCascadeUserInteraction(input: build.HandleInteractionInput, options?: CallOptions) {
    return this.#object("HandleCascadeUserInteraction", build.handleInteractionRequest(input), options);
  }

  cancelCascadeSteps(input: build.CancelStepsInput, options?: CallOptions) {
    return this.#object("CancelCascadeSteps", build.cancelStepsRequest(input), options);
  }

  cancelCascadeInvocation(input: build.CancelInvocationInput, options?: CallOptions) {
    return this.#object("CancelCascadeInvocation", build.cancelInvocationRequest(input), options);
  }

  forceStopCascadeTree(input: build.ConversationInput, options?: CallOptions) {
    return this.#object("ForceStopCascadeTree", build.forceStopRequest(input), options);
  }

  getAllCascadeTrajectories(input: Record<string, never> = {}, options?: CallOptions) {
    // A body that is not an object counts as "no conversations" (agy 1.0.x reference client).
    return this.#unary("GetAllCascadeTrajectories", { ...input }, options, (bytes, m) =>
      validateBody(objectOrEmpty(parseJsonBody(bytes, m)), AllTrajectoriesResponseSchema, m),
    );
  }

  getAvailableModels(input: Record<string, never> = {}, options?: CallOptions) {
    return this.#unary("GetAvailableModels", { ...input }, options, (bytes, m) => {
      const body = objectOrEmpty(parseJsonBody(bytes, m));
      const inner = body["response"];
      // agy wraps the catalog in `response`; without it the body is the catalog.
      const catalog = typeof inner === "object" && inner !== null && !Array.isArray(inner) ? inner : body;
      return validateBody({ response: catalog }, AvailableModelsResponseSchema, m).response ?? {};
    });
  }

  startCascade(input: build.StartCascadeInput = {}, options?: CallOptions) {
    return this.#object("StartCascade", build.startCascadeRequest(input), options);
  }

  sendUserCascadeMessage(input: build.SendMessageInput, options?: CallOptions) {
    return this.#object("SendUserCascadeMessage", build.sendMessageRequest(input), options);
  }

  streamAgentStateUpdates(input: StreamAgentStateUpdatesInput, options: StreamCallOptions = {}): AsyncIterable<StreamUpdate> {
    const body = build.streamRequest({ ...input, subscriberId: input.subscriberId ?? randomUUID() });
    return this.#stream(body, options);
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const controller of this.#inFlight) controller.abort();
    for (const close of this.#closers) close();
  }

  #object(method: MethodName, body: build.JsonBody, options: CallOptions | undefined): Promise<JsonObject> {
    return this.#unary(method, body, options, (bytes, m) =>
      bytes.byteLength === 0 ? {} : validateBody(parseJsonBody(bytes, m), JsonObjectSchema, m),
    );
  }

  async #unary<T>(
    method: MethodName,
    body: build.JsonBody,
    options: CallOptions | undefined,
    decode: (bytes: Uint8Array, method: string) => T,
  ): Promise<T> {
    const call = this.#startCall(method, options);
    try {
      const response = await this.#send(method, encoder.encode(JSON.stringify(body)), UNARY_CONTENT_TYPE, call);
      if (response.status < 200 || response.status > 299) {
        throw httpStatusError(method, response.status, await readAll(response.body, ERROR_BODY_LIMIT, method, false));
      }
      return decode(await readAll(response.body, this.#maxFrameBytes, method, true), method);
    } catch (reason) {
      throw call.fail(reason);
    } finally {
      call.dispose();
    }
  }

  async *#stream(body: build.JsonBody, options: StreamCallOptions): AsyncGenerator<StreamUpdate, void, undefined> {
    const method = "StreamAgentStateUpdates";
    const call = this.#startCall(method, options);
    try {
      // agy reads a bare JSON body as a frame header, so the request is enveloped too (agy 1.0.10, live).
      const response = await this.#send(method, encodeJsonEnvelope(FLAG_DATA, body), STREAM_CONTENT_TYPE, call);
      if (response.status < 200 || response.status > 299) {
        // A non-2xx stream body is not framed; reading it as frames would look like a clean end.
        throw httpStatusError(method, response.status, await readAll(response.body, ERROR_BODY_LIMIT, method, false));
      }
      options.onOpen?.();
      yield* decodeStreamBody(response.body, { method, maxFrameBytes: this.#maxFrameBytes });
    } catch (reason) {
      throw call.fail(reason);
    } finally {
      call.dispose();
    }
  }

  #send(method: MethodName, payload: Uint8Array, contentType: string, call: Call): Promise<UniversalClientResponse> {
    const header = new Headers({
      "content-type": contentType,
      "content-length": String(payload.byteLength),
      "connect-protocol-version": "1",
    });
    if (this.#token !== undefined) header.set("x-codeium-csrf-token", this.#token);
    return this.#http({
      url: `${this.#origin}${methodPath(method)}`,
      method: "POST",
      header,
      body: (async function* () {
        yield payload;
      })(),
      signal: call.signal,
    });
  }

  #startCall(method: MethodName, options: CallOptions | undefined): Call {
    const controller = new AbortController();
    const callerSignal = options?.signal;
    const timeoutMs = options?.timeoutMs ?? this.#timeouts[METHODS[method].timeoutClass];
    let timedOut = false;
    const onCallerAbort = () => controller.abort();
    const timer =
      timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            controller.abort();
          }, timeoutMs)
        : undefined;
    callerSignal?.addEventListener("abort", onCallerAbort, { once: true });
    this.#inFlight.add(controller);
    const closedBefore = this.#closed;
    if (callerSignal?.aborted === true || closedBefore) controller.abort();
    return {
      signal: controller.signal,
      fail: (reason) =>
        toRpcError(reason, {
          method,
          origin: this.#origin,
          timedOutAfterMs: timedOut ? timeoutMs : undefined,
          abortedByCaller: callerSignal?.aborted === true || (this.#closed && controller.signal.aborted),
          secret: this.#token,
        }),
      dispose: () => {
        clearTimeout(timer);
        callerSignal?.removeEventListener("abort", onCallerAbort);
        // Stops a stream the consumer left early, and the body after a trailer.
        controller.abort();
        this.#inFlight.delete(controller);
      },
    };
  }
}

function objectOrEmpty(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

async function readAll(body: AsyncIterable<Uint8Array>, limit: number, method: string, strict: boolean): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body) {
    if (total + chunk.byteLength > limit) {
      if (!strict) {
        chunks.push(chunk.subarray(0, limit - total));
        total = limit;
        break;
      }
      throw new RpcError("protocol", `${method} answered with more than ${limit} bytes; raise maxFrameBytes`, { method });
    }
    chunks.push(chunk);
    total += chunk.byteLength;
  }
  return joinChunks(chunks, total);
}

/**
 * Opens a TLS socket and checks the peer certificate against the pin before
 * handing the socket over, so no request byte (and no CSRF token) reaches a
 * server that presented a different certificate.
 */
function connectTls(url: URL, alpn: string[] | undefined, pin: CertificatePin | undefined): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      host: url.hostname.replace(/^\[|\]$/g, ""),
      port: Number(url.port || 443),
      // agy's certificate is self-signed (CN localhost); the loopback guard and the pin stand in for verification.
      rejectUnauthorized: false,
      ...(alpn === undefined ? {} : { ALPNProtocols: alpn }),
    });
    const onError = (error: Error) => reject(error);
    socket.once("error", onError);
    // A listener that accepts but never finishes the handshake must not hold a stream (which has no deadline) forever.
    socket.setTimeout(CONNECT_TIMEOUT_MS, () => socket.destroy(new Error(`no TLS handshake within ${CONNECT_TIMEOUT_MS} ms`)));
    socket.once("secureConnect", () => {
      socket.setTimeout(0);
      socket.off("error", onError);
      const refused = pin?.check(socket.getPeerCertificate());
      if (refused === undefined) {
        resolve(socket);
        return;
      }
      socket.destroy();
      reject(refused);
    });
  });
}

/** An HTTPS agent whose sockets are handed over only after the certificate check. */
class PinnedHttpsAgent extends https.Agent {
  readonly #url: URL;
  readonly #pin: CertificatePin | undefined;

  constructor(url: URL, pin: CertificatePin | undefined) {
    super({ keepAlive: true, rejectUnauthorized: false });
    this.#url = url;
    this.#pin = pin;
  }

  override createConnection(
    _options: http.ClientRequestArgs,
    callback?: (error: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    // Returning nothing and calling back later is Node's asynchronous createConnection form.
    connectTls(this.#url, undefined, this.#pin).then(
      (socket) => callback?.(null, socket),
      (error: unknown) => callback?.(error instanceof Error ? error : new Error(String(error)), undefined as never),
    );
    return undefined;
  }
}

type SessionManager = ReturnType<NonNullable<Extract<NodeHttpClientOptions, { httpVersion: "2" }>["sessionProvider"]>>;

/** One HTTP/2 session per client, reopened when it closes. */
class Http2Sessions implements SessionManager {
  readonly authority: string;
  readonly #connectSocket: (() => Promise<Duplex>) | undefined;
  #session: http2.ClientHttp2Session | undefined;
  #opening: Promise<http2.ClientHttp2Session> | undefined;
  #closed = false;

  constructor(authority: string, connectSocket: (() => Promise<Duplex>) | undefined) {
    this.authority = authority;
    this.#connectSocket = connectSocket;
  }

  async request(
    method: string,
    path: string,
    headers: http2.OutgoingHttpHeaders,
    options: Omit<http2.ClientSessionRequestOptions, "signal">,
  ): Promise<http2.ClientHttp2Stream> {
    const session = await this.#get();
    return session.request({ ...headers, ":method": method, ":path": path }, options);
  }

  notifyResponseByteRead(): void {
    // No keepalive pings: agy has none, and an idle stream is normal.
  }

  close(): void {
    this.#closed = true;
    this.#session?.destroy();
    this.#session = undefined;
  }

  #get(): Promise<http2.ClientHttp2Session> {
    const current = this.#session;
    if (current !== undefined && !current.closed && !current.destroyed) return Promise.resolve(current);
    this.#opening ??= this.#open().finally(() => {
      this.#opening = undefined;
    });
    return this.#opening;
  }

  async #open(): Promise<http2.ClientHttp2Session> {
    const socket = this.#connectSocket === undefined ? undefined : await this.#connectSocket();
    if (this.#closed) {
      socket?.destroy();
      throw new Error("the client is closed");
    }
    const session = http2.connect(this.authority, socket === undefined ? {} : { createConnection: () => socket });
    // Each request stream reports its own failure; the session's error only needs a listener.
    session.on("error", () => undefined);
    session.on("close", () => {
      if (this.#session === session) this.#session = undefined;
    });
    await once(session, "connect");
    this.#session = session;
    return session;
  }
}
