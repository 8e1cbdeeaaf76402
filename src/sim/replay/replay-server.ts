/**
 * `agy-bridge sim --replay DIR`: a captured conversation served back as agy
 * served it, so a bug seen on a real agy can be reproduced here. Two
 * loopback listeners (TLS and plain, like the simulator) answer from the
 * capture on one timeline: it starts when a client first reads the
 * conversation (a snapshot or a stream), and at replay time T
 *
 * - `GetCascadeTrajectorySteps` answers the last snapshot recorded at or
 *   before T (the first one before that), from `stepOffset`;
 * - `GetAllCascadeTrajectories` answers the last summary likewise;
 * - `StreamAgentStateUpdates` sends at once every frame recorded up to T (a
 *   new subscription's replay of what happened, like agy's first frame),
 *   then each later frame at its recorded time; then it stays open and
 *   silent, as agy's idle stream does;
 * - the screen (`screenAt`, `onScreen`) is the one recorded after the state
 *   change that prompted it, shown from the moment of that change (the last
 *   frame or snapshot before it was captured), so a client that reacts to a
 *   frame reads the screen that followed it;
 * - `HandleCascadeUserInteraction` answers 500 "input not registered": the
 *   recorded conversation goes on as it went, whatever a client answers.
 *
 * `speed` multiplies the recorded delays, as the simulator's does (2 = half
 * as fast, 0 = everything at once).
 */
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createSecureServer, type Http2SecureServer, type ServerHttp2Session } from "node:http2";
import type { AddressInfo, Socket } from "node:net";
import { FLAG_END_STREAM, encodeJsonEnvelope } from "../../protocol/envelope.js";
import { asIndex, asString, isObject, type JsonObject } from "../../protocol/json.js";
import { SERVICE_NAME } from "../../protocol/methods.js";
import { createSelfSignedCertificate } from "../server/certificate.js";
import { hasCsrfToken, readBody, refuse, sendConnectError, sendJson, writeChunk, type SimRequest, type SimResponse } from "../server/http-edge.js";
import type { ReplayCapture } from "./capture-loader.js";

export interface ReplayServerOptions {
  capture: ReplayCapture;
  /** Multiplies every recorded delay; default 1. */
  speed?: number;
  /** When set, every call must carry `x-codeium-csrf-token: <token>` (else 401, as newer agy). */
  csrfToken?: string;
  /** Milliseconds now; default `Date.now`. */
  now?: () => number;
}

export interface ReplayServer {
  readonly conversationId: string;
  readonly tlsUrl: string;
  readonly plainUrl: string;
  /** The screen to show now (the first recorded one before the timeline starts); undefined when the capture has none. */
  screenAt(): string | undefined;
  /** Called whenever the screen to show changes; returns an unsubscribe function. */
  onScreen(listener: (screen: string) => void): () => void;
  /** True once the last recorded frame, snapshot and screen have been served. */
  finished(): boolean;
  close(): Promise<void>;
}

const PATH_PREFIX = `/${SERVICE_NAME}/`;
const MAX_REQUEST_BYTES = 1024 * 1024;

export async function startReplayServer(options: ReplayServerOptions): Promise<ReplayServer> {
  const certificate = await createSelfSignedCertificate();
  const server = new Replay(options, certificate);
  await server.listen();
  return server;
}

class Replay implements ReplayServer {
  readonly #capture: ReplayCapture;
  readonly #speed: number;
  readonly #token: string | undefined;
  readonly #clock: () => number;
  readonly #tls: Http2SecureServer;
  readonly #plain: HttpServer;
  readonly #sockets = new Set<Socket>();
  readonly #sessions = new Set<ServerHttp2Session>();
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  readonly #screenListeners = new Set<(screen: string) => void>();
  /** Each screen with the capture time it is shown from. */
  readonly #screens: Array<{ from: number; text: string }>;
  #startedAt: number | undefined;
  #screen = 0;

  constructor(options: ReplayServerOptions, certificate: { cert: string; key: string }) {
    this.#capture = options.capture;
    this.#speed = options.speed ?? 1;
    this.#token = options.csrfToken;
    this.#clock = options.now ?? Date.now;
    const changes = [...options.capture.frames.map((f) => f.t), ...options.capture.snapshots.map((s) => s.t)].sort((a, b) => a - b);
    this.#screens = options.capture.screens
      .slice()
      .sort((a, b) => a.t - b.t)
      .map((s, i) => ({ from: i === 0 ? 0 : lastAtOrBefore(changes, s.t), text: s.text }));
    const handler = (req: SimRequest, res: SimResponse): void => {
      this.#handle(req, res).catch(() => {
        if (!res.headersSent) sendConnectError(res, 500, "internal", "replay failure");
        else res.end();
      });
    };
    this.#tls = createSecureServer({ cert: certificate.cert, key: certificate.key, allowHTTP1: true }, handler);
    this.#plain = createHttpServer(handler);
    for (const s of [this.#tls, this.#plain]) {
      s.on("connection", (socket: Socket) => {
        this.#sockets.add(socket);
        socket.on("close", () => this.#sockets.delete(socket));
      });
    }
    this.#tls.on("session", (session: ServerHttp2Session) => {
      this.#sessions.add(session);
      session.on("close", () => this.#sessions.delete(session));
    });
  }

  get conversationId(): string {
    return this.#capture.conversationId;
  }

  get tlsUrl(): string {
    return `https://127.0.0.1:${(this.#tls.address() as AddressInfo).port}`;
  }

  get plainUrl(): string {
    return `http://127.0.0.1:${(this.#plain.address() as AddressInfo).port}`;
  }

  async listen(): Promise<void> {
    await Promise.all(
      [this.#tls, this.#plain].map(
        (s) =>
          new Promise<void>((resolve, reject) => {
            s.once("error", reject);
            s.listen({ port: 0, host: "127.0.0.1" }, () => {
              s.off("error", reject);
              resolve();
            });
          }),
      ),
    );
  }

  screenAt(): string | undefined {
    return this.#screens[this.#screen]?.text;
  }

  onScreen(listener: (screen: string) => void): () => void {
    this.#screenListeners.add(listener);
    return () => this.#screenListeners.delete(listener);
  }

  finished(): boolean {
    const last = Math.max(0, ...this.#capture.frames.map((f) => f.t), ...this.#capture.snapshots.map((s) => s.t), ...this.#screens.map((s) => s.from));
    return this.#startedAt !== undefined && this.#now() >= last;
  }

  async close(): Promise<void> {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    const closing = [this.#tls, this.#plain].map((s) => new Promise<void>((resolve) => (s.listening ? s.close(() => resolve()) : resolve())));
    for (const session of this.#sessions) session.destroy();
    for (const socket of this.#sockets) socket.destroy();
    await Promise.all(closing);
  }

  /** Capture time now: 0 until the timeline starts. */
  #now(): number {
    if (this.#startedAt === undefined) return 0;
    return this.#speed === 0 ? Number.POSITIVE_INFINITY : (this.#clock() - this.#startedAt) / this.#speed;
  }

  #start(): void {
    if (this.#startedAt !== undefined) return;
    this.#startedAt = this.#clock();
    this.#screens.forEach((screen, i) => {
      if (i > 0) this.#after(screen.from, () => this.#show(i));
    });
  }

  /** Runs `fn` at capture time `t` (at once when it has passed). */
  #after(t: number, fn: () => void): ReturnType<typeof setTimeout> {
    const delay = this.#speed === 0 ? 0 : Math.max(0, (t - this.#now()) * this.#speed);
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      fn();
    }, delay);
    this.#timers.add(timer);
    return timer;
  }

  /** Shows the last screen whose time has come, whatever the timers' order. */
  #catchUpScreens(): void {
    const now = this.#now();
    let index = this.#screen;
    this.#screens.forEach((screen, i) => {
      if (screen.from <= now) index = Math.max(index, i);
    });
    this.#show(index);
  }

  #show(index: number): void {
    if (index <= this.#screen) return;
    this.#screen = index;
    const text = this.#screens[index]?.text;
    if (text !== undefined) for (const listener of this.#screenListeners) listener(text);
  }

  async #handle(req: SimRequest, res: SimResponse): Promise<void> {
    if (this.#token !== undefined && !hasCsrfToken(req, this.#token)) {
      refuse(res, 401, "unauthenticated", "missing CSRF token");
      return;
    }
    const url = req.url ?? "";
    const method = url.startsWith(PATH_PREFIX) ? (url.slice(PATH_PREFIX.length).split("?")[0] ?? "") : "";
    const body = req.method === "POST" ? await readBody(req, MAX_REQUEST_BYTES) : "too_large";
    if (body === "too_large") {
      refuse(res, req.method === "POST" ? 413 : 404, "unknown", "not served by the replay");
      return;
    }
    if (method === "StreamAgentStateUpdates") {
      this.#stream(body, res);
      return;
    }
    let request: JsonObject = {};
    try {
      const parsed: unknown = body.byteLength === 0 ? {} : JSON.parse(body.toString("utf8"));
      if (isObject(parsed)) request = parsed;
    } catch {
      sendConnectError(res, 400, "invalid_argument", "unmarshal request: not JSON");
      return;
    }
    const own = (id: unknown): boolean => asString(id) === this.#capture.conversationId;
    switch (method) {
      case "Heartbeat":
        sendJson(res, 200, {});
        return;
      case "GetConversationMetadata":
        if (own(request.conversationId)) sendJson(res, 200, { metadata: { rootConversationId: this.#capture.conversationId } });
        else sendConnectError(res, 500, "unknown", "trajectory not found");
        return;
      case "GetCascadeTrajectorySteps": {
        if (!own(request.cascadeId ?? request.conversationId)) {
          sendConnectError(res, 500, "unknown", "trajectory not found");
          return;
        }
        this.#start();
        this.#catchUpScreens();
        const body = latest(this.#capture.snapshots, this.#now()) ?? {};
        const steps = Array.isArray(body.steps) ? body.steps.slice(asIndex(request.stepOffset) ?? 0) : [];
        sendJson(res, 200, steps.length > 0 ? { steps } : {});
        return;
      }
      case "GetAllCascadeTrajectories":
        sendJson(res, 200, latest(this.#capture.summaries, this.#now()) ?? {});
        return;
      case "HandleCascadeUserInteraction": {
        const interaction = isObject(request.interaction) ? request.interaction : {};
        sendConnectError(
          res,
          500,
          "unknown",
          `input not registered for step ${asIndex(interaction.stepIndex) ?? 0} (a replay: the captured conversation goes on as recorded)`,
        );
        return;
      }
      case "CancelCascadeSteps":
        sendJson(res, 200, {});
        return;
      default:
        res.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
        res.end("404 page not found\n");
    }
  }

  #stream(body: Buffer, res: SimResponse): void {
    res.writeHead(200, { "content-type": "application/connect+json" });
    const promised = body.byteLength >= 5 ? body.readUInt32BE(1) : 0;
    let request: unknown;
    try {
      request = body.byteLength >= 5 && promised === body.byteLength - 5 ? JSON.parse(body.subarray(5).toString("utf8")) : undefined;
    } catch {
      request = undefined;
    }
    if (!isObject(request)) {
      res.end(
        encodeJsonEnvelope(FLAG_END_STREAM, {
          error: {
            code: "invalid_argument",
            message: `protocol error: promised ${promised} bytes in enveloped message, got ${Math.max(0, body.byteLength - 5)} bytes`,
          },
        }),
      );
      return;
    }
    if (asString(request.conversationId) !== this.#capture.conversationId) {
      res.end(encodeJsonEnvelope(FLAG_END_STREAM, { error: { code: "unknown", message: "trajectory not found" } }));
      return;
    }
    this.#start();
    const mine = new Set<ReturnType<typeof setTimeout>>();
    res.on("close", () => {
      for (const timer of mine) {
        clearTimeout(timer);
        this.#timers.delete(timer);
      }
    });
    const now = this.#now();
    for (const { t, frame } of this.#capture.frames) {
      if (t <= now) writeChunk(res, encodeJsonEnvelope(0, frame));
      else
        mine.add(
          this.#after(t, () => {
            // The screen that followed this change is up before the frame that announces it.
            this.#catchUpScreens();
            writeChunk(res, encodeJsonEnvelope(0, frame));
          }),
        );
    }
  }
}

/** The body recorded last at or before `t`; the first one before anything was. */
function latest(items: ReadonlyArray<{ t: number; body: JsonObject }>, t: number): JsonObject | undefined {
  let found = items[0]?.body;
  for (const item of items) if (item.t <= t) found = item.body;
  return found;
}

function lastAtOrBefore(sorted: readonly number[], t: number): number {
  let found = 0;
  for (const value of sorted) if (value <= t) found = value;
  return found;
}
