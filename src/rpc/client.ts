/**
 * The Connect client for agy's language server. With `connections.ts` (which
 * opens the sockets), the only code in the library that talks to agy.
 *
 * Shape: the Connect protocol spoken by hand over `node:http`/`node:http2`
 * (`http-transport.ts`), carrying raw JSON decoded with JSON.parse and loose
 * checks. The high-level Connect client with `google.protobuf.Struct`
 * descriptors was measured slower on a 10,000-step snapshot (see
 * `bench/rpc-snapshot.bench.ts`), typed messages would drop agy's unknown
 * fields, and importing the Connect libraries cost a CLI command more than
 * its own work. This file owns the request envelope, the end-stream trailer
 * and the error mapping; callers never see bytes. Opening connections (TLS,
 * the pin, HTTP/2 sessions) is in `connections.ts`.
 */
import { randomUUID } from "node:crypto";
import { RpcError } from "../errors.js";
import { createCertificatePin } from "./certificate-pin.js";
import { httpStatusError, toRpcError, type Deadline } from "./call-failure.js";
import { DEFAULT_CONNECT_TIMEOUT_MS } from "./connections.js";
import { createHttpTransport, type HttpAnswer, type HttpTransport } from "./http-transport.js";
import { DEFAULT_MAX_FRAME_BYTES, encodeJsonEnvelope, FLAG_DATA } from "../protocol/envelope.js";
import { assertLoopbackUrl } from "./loopback.js";
import { DEFAULT_TIMEOUTS_MS, METHODS, methodPath, type MethodName, type TimeoutClass } from "../protocol/methods.js";
import * as build from "./requests.js";
import { checkAllTrajectories, checkConversationMetadata, checkJsonObject, checkModelCatalog, checkTrajectory } from "./answer-shapes.js";
import { decodeStepsResponse, decodeStreamBody, joinChunks, parseJsonBody } from "./response-decoding.js";
import type {
  AllTrajectoriesResponse,
  ConversationMetadataResponse,
  JsonObject,
  ModelCatalog,
  Step,
  StreamUpdate,
  TrajectoryResponse,
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
  /**
   * Deadline in ms for opening, whatever the call's own deadline: the TLS
   * handshake, an HTTP/2 session's first SETTINGS, and a stream's response
   * headers (then, on a non-2xx, its error body). Default 10 s; 0 = none.
   */
  connectTimeoutMs?: number;
}

export interface CallOptions {
  signal?: AbortSignal | undefined;
  /** Whole-call deadline in ms, overriding the method's class default; 0 = none. */
  timeoutMs?: number;
}

export interface StreamCallOptions extends CallOptions {
  /** Called once the server accepted the stream (2xx headers), before any frame. */
  onOpen?: (() => void) | undefined;
}

export type StreamAgentStateUpdatesInput = Omit<build.StreamInput, "subscriberId"> & { subscriberId?: string };

/** Typed access to agy's language server. Every failure is an `RpcError`. */
export interface AgyRpcClient {
  readonly baseUrl: string;
  heartbeat(input?: Record<string, never>, options?: CallOptions): Promise<void>;
  getConversationMetadata(input: build.ConversationInput, options?: CallOptions): Promise<ConversationMetadataResponse>;
  getCascadeTrajectorySteps(input: build.StepsInput, options?: CallOptions): Promise<{ steps: Step[] }>;
  getCascadeTrajectory(input: build.ConversationInput, options?: CallOptions): Promise<TrajectoryResponse>;
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
const encoder = new TextEncoder();

interface Call {
  readonly signal: AbortSignal;
  /** Aborts the call unless disarmed within `ms`, failing it as `timeout` on `waitingFor`. */
  arm(ms: number, waitingFor: string): () => void;
  fail(reason: unknown): RpcError;
  dispose(): void;
}

class ConnectJsonClient implements AgyRpcClient {
  readonly baseUrl: string;
  readonly #origin: string;
  readonly #token: string | undefined;
  readonly #timeouts: Readonly<Record<TimeoutClass, number>>;
  readonly #maxFrameBytes: number;
  readonly #connectTimeoutMs: number;
  readonly #http: HttpTransport;
  readonly #inFlight = new Set<AbortController>();
  #closed = false;

  constructor(options: AgyRpcClientOptions) {
    const url = assertLoopbackUrl(options.baseUrl);
    this.#origin = url.origin;
    this.baseUrl = url.origin;
    this.#token = options.csrfToken === "" ? undefined : options.csrfToken;
    this.#timeouts = { ...DEFAULT_TIMEOUTS_MS, ...options.timeouts };
    this.#maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    this.#connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const pin = url.protocol === "https:" && options.tls !== "insecure" ? createCertificatePin(url.origin) : undefined;
    this.#http = createHttpTransport({ url, httpVersion: options.httpVersion ?? "1.1", pin, connectTimeoutMs: this.#connectTimeoutMs });
  }

  async heartbeat(input: Record<string, never> = {}, options?: CallOptions): Promise<void> {
    await this.#unary("Heartbeat", { ...input }, options, () => undefined);
  }

  getConversationMetadata(input: build.ConversationInput, options?: CallOptions) {
    return this.#unary("GetConversationMetadata", build.conversationMetadataRequest(input), options, (bytes, m) =>
      checkConversationMetadata(parseJsonBody(bytes, m), m),
    );
  }

  getCascadeTrajectorySteps(input: build.StepsInput, options?: CallOptions) {
    return this.#unary("GetCascadeTrajectorySteps", build.stepsRequest(input), options, decodeStepsResponse);
  }

  getCascadeTrajectory(input: build.ConversationInput, options?: CallOptions) {
    return this.#unary("GetCascadeTrajectory", build.trajectoryRequest(input), options, (bytes, m) => checkTrajectory(parseJsonBody(bytes, m), m));
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
    return this.#unary("GetAllCascadeTrajectories", { ...input }, options, (bytes, m) => checkAllTrajectories(objectOrEmpty(parseJsonBody(bytes, m)), m));
  }

  getAvailableModels(input: Record<string, never> = {}, options?: CallOptions) {
    return this.#unary("GetAvailableModels", { ...input }, options, (bytes, m) => {
      const body = objectOrEmpty(parseJsonBody(bytes, m));
      const inner = body["response"];
      // agy wraps the catalog in `response`; without it the body is the catalog.
      const catalog = typeof inner === "object" && inner !== null && !Array.isArray(inner) ? inner : body;
      return checkModelCatalog(catalog, m);
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
    this.#http.close();
  }

  #object(method: MethodName, body: build.JsonBody, options: CallOptions | undefined): Promise<JsonObject> {
    return this.#unary(method, body, options, (bytes, m) => (bytes.byteLength === 0 ? {} : checkJsonObject(parseJsonBody(bytes, m), m)));
  }

  async #unary<T>(method: MethodName, body: build.JsonBody, options: CallOptions | undefined, decode: (bytes: Uint8Array, method: string) => T): Promise<T> {
    const call = this.#startCall(method, options);
    try {
      const response = await this.#send(method, encoder.encode(JSON.stringify(body)), UNARY_CONTENT_TYPE, call);
      if (response.status < 200 || response.status > 299) {
        throw httpStatusError(method, response.status, await readErrorBody(response.body), this.#token);
      }
      return decode(await readAll(response.body, this.#maxFrameBytes, method), method);
    } catch (reason) {
      throw call.fail(reason);
    } finally {
      call.dispose();
    }
  }

  async *#stream(body: build.JsonBody, options: StreamCallOptions): AsyncGenerator<StreamUpdate, void, undefined> {
    const method = "StreamAgentStateUpdates";
    const call = this.#startCall(method, options);
    // A stream has no whole-call deadline by default, so opening gets its own:
    // without it a listener that accepts and never answers holds the caller forever.
    let disarm = call.arm(this.#connectTimeoutMs, "response headers");
    try {
      // agy reads a bare JSON body as a frame header, so the request is enveloped too (spike-notes §1.5).
      const response = await this.#send(method, encodeJsonEnvelope(FLAG_DATA, body), STREAM_CONTENT_TYPE, call);
      disarm();
      if (response.status < 200 || response.status > 299) {
        // A non-2xx stream body is not framed; reading it as frames would look like a clean end.
        disarm = call.arm(this.#connectTimeoutMs, `complete HTTP ${response.status} error body`);
        throw httpStatusError(method, response.status, await readErrorBody(response.body), this.#token);
      }
      options.onOpen?.();
      // Not `yield*`: a delegating generator keeps the last frame reachable while it waits for the
      // next, and a stream's first frame replays the whole history (issue 23: an idle session holds none).
      const frames = decodeStreamBody(response.body, { method, maxFrameBytes: this.#maxFrameBytes })[Symbol.asyncIterator]();
      try {
        for (;;) {
          let next: IteratorResult<StreamUpdate, void> | undefined = await frames.next();
          if (next.done === true) break;
          let update: StreamUpdate | undefined = next.value;
          next = undefined;
          yield update;
          update = undefined;
        }
      } finally {
        await frames.return?.();
      }
    } catch (reason) {
      throw call.fail(reason);
    } finally {
      disarm();
      call.dispose();
    }
  }

  #send(method: MethodName, payload: Uint8Array, contentType: string, call: Call): Promise<HttpAnswer> {
    const headers: Record<string, string> = {
      "connect-protocol-version": "1",
      "content-length": String(payload.byteLength),
      "content-type": contentType,
    };
    if (this.#token !== undefined) headers["x-codeium-csrf-token"] = this.#token;
    return this.#http.post(methodPath(method), headers, payload, call.signal);
  }

  #startCall(method: MethodName, options: CallOptions | undefined): Call {
    const controller = new AbortController();
    const callerSignal = options?.signal;
    let expired: Deadline | undefined;
    const arm = (ms: number, waitingFor: string) => {
      if (ms <= 0) return () => undefined;
      const timer = setTimeout(() => {
        expired ??= { afterMs: ms, waitingFor };
        controller.abort();
      }, ms);
      return () => clearTimeout(timer);
    };
    const disarmWhole = arm(options?.timeoutMs ?? this.#timeouts[METHODS[method].timeoutClass], "complete answer");
    const onCallerAbort = () => controller.abort();
    callerSignal?.addEventListener("abort", onCallerAbort, { once: true });
    this.#inFlight.add(controller);
    if (callerSignal?.aborted === true || this.#closed) controller.abort();
    return {
      signal: controller.signal,
      arm,
      fail: (reason) =>
        toRpcError(reason, {
          method,
          origin: this.#origin,
          timedOut: expired,
          abortedByCaller: callerSignal?.aborted === true || (this.#closed && controller.signal.aborted),
          secret: this.#token,
        }),
      dispose: () => {
        disarmWhole();
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

async function readAll(body: AsyncIterable<Uint8Array>, limit: number, method: string): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body) {
    if (total + chunk.byteLength > limit) {
      throw new RpcError("protocol", `${method} answered with more than ${limit} bytes; raise maxFrameBytes`, { method });
    }
    chunks.push(chunk);
    total += chunk.byteLength;
  }
  return joinChunks(chunks, total);
}

/** The first {@link ERROR_BODY_LIMIT} bytes of an error body; the rest is not read. */
async function readErrorBody(body: AsyncIterable<Uint8Array>): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body) {
    if (total + chunk.byteLength > ERROR_BODY_LIMIT) {
      chunks.push(chunk.subarray(0, ERROR_BODY_LIMIT - total));
      return { bytes: joinChunks(chunks, ERROR_BODY_LIMIT), truncated: true };
    }
    chunks.push(chunk);
    total += chunk.byteLength;
  }
  return { bytes: joinChunks(chunks, total), truncated: false };
}
