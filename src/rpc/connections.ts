/**
 * Opening connections to agy's language server: TLS sockets checked against
 * the certificate pin, an HTTPS agent that uses them, and the HTTP/2 session
 * of a client. Every step of opening has a deadline, because a listener that
 * accepts and then says nothing would otherwise hold the caller forever
 * (spike-notes §1.4: connect 10 s, no read deadline on streams).
 */
import * as http from "node:http";
import * as http2 from "node:http2";
import * as https from "node:https";
import type { Duplex } from "node:stream";
import * as tls from "node:tls";
import type { CertificatePin } from "./certificate-pin.js";

/** Connect/handshake deadline, as agy's reference client uses for streams (spike-notes §1.4). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/**
 * Opens a TLS socket and checks the peer certificate against the pin before
 * handing the socket over, so no request byte (and no CSRF token) reaches a
 * server that presented a different certificate.
 */
export function connectTls(url: URL, alpn: string[] | undefined, pin: CertificatePin | undefined, timeoutMs: number): Promise<tls.TLSSocket> {
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
    if (timeoutMs > 0) {
      socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no TLS handshake within ${timeoutMs} ms`)));
    }
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
export class PinnedHttpsAgent extends https.Agent {
  readonly #url: URL;
  readonly #pin: CertificatePin | undefined;
  readonly #timeoutMs: number;

  constructor(url: URL, pin: CertificatePin | undefined, timeoutMs: number) {
    super({ keepAlive: true, rejectUnauthorized: false });
    this.#url = url;
    this.#pin = pin;
    this.#timeoutMs = timeoutMs;
  }

  override createConnection(_options: http.ClientRequestArgs, callback?: (error: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    // Returning nothing and calling back later is Node's asynchronous createConnection form.
    connectTls(this.#url, undefined, this.#pin, this.#timeoutMs).then(
      (socket) => callback?.(null, socket),
      (error: unknown) => callback?.(error instanceof Error ? error : new Error(String(error)), undefined as never),
    );
    return undefined;
  }
}

/**
 * One HTTP/2 session per client, reopened when it closes. A session is handed
 * out only after the server's first SETTINGS frame: Node reports `connect` as
 * soon as the socket is up, so a server that never speaks HTTP/2 would
 * otherwise be reused by every later call. An attempt that fails or runs out
 * of time is destroyed and forgotten, so the next call opens a new one.
 */
export class Http2Sessions {
  readonly authority: string;
  readonly #connectSocket: (() => Promise<Duplex>) | undefined;
  readonly #timeoutMs: number;
  #session: http2.ClientHttp2Session | undefined;
  #opening: Promise<http2.ClientHttp2Session> | undefined;
  #attempt: http2.ClientHttp2Session | undefined;
  #closed = false;

  constructor(authority: string, connectSocket: (() => Promise<Duplex>) | undefined, timeoutMs: number) {
    this.authority = authority;
    this.#connectSocket = connectSocket;
    this.#timeoutMs = timeoutMs;
  }

  /** A request stream on the session, opened (or reopened) first. No keepalive pings: agy has none, and an idle stream is normal. */
  async request(method: string, path: string, headers: http2.OutgoingHttpHeaders): Promise<http2.ClientHttp2Stream> {
    const session = await this.#get();
    return session.request({ ...headers, ":method": method, ":path": path });
  }

  close(): void {
    this.#closed = true;
    this.#session?.destroy();
    this.#session = undefined;
    this.#attempt?.destroy();
    this.#attempt = undefined;
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
    this.#attempt = session;
    try {
      await firstSettings(session, this.#timeoutMs);
    } catch (error) {
      session.destroy();
      socket?.destroy();
      throw error;
    } finally {
      if (this.#attempt === session) this.#attempt = undefined;
    }
    if (this.#closed) {
      session.destroy();
      throw new Error("the client is closed");
    }
    this.#session = session;
    return session;
  }
}

/** Resolves on the server's first SETTINGS frame; rejects on error, close or the deadline. */
function firstSettings(session: http2.ClientHttp2Session, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = timeoutMs > 0 ? setTimeout(() => settle(new Error(`no HTTP/2 SETTINGS from the server within ${timeoutMs} ms`)), timeoutMs) : undefined;
    const onSettings = () => settle(undefined);
    const onError = (error: Error) => settle(error);
    const onClose = () => settle(new Error("the server closed the HTTP/2 connection before its SETTINGS"));
    function settle(error: Error | undefined) {
      clearTimeout(timer);
      session.off("remoteSettings", onSettings);
      session.off("error", onError);
      session.off("close", onClose);
      if (error === undefined) resolve();
      else reject(error);
    }
    session.once("remoteSettings", onSettings);
    session.once("error", onError);
    session.once("close", onClose);
  });
}
