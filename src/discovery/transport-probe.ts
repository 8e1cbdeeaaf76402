/**
 * Tells a TLS listener from a plain-HTTP one by a real handshake, never by
 * port order: agy 1.0.10 put TLS on the lower port, but newer builds give no
 * such promise (spike-notes §1.1, §10.2). A TLS ClientHello sent to a plain
 * HTTP server comes back as an HTTP 400, which OpenSSL reports as a wrong
 * version number: that is "plain".
 */
import * as tls from "node:tls";

export type HandshakeOutcome =
  | { kind: "tls" }
  /** The server answered the ClientHello with non-TLS bytes (an HTTP 400). */
  | { kind: "plain" }
  /** The server closed or reset the connection during the handshake. */
  | { kind: "closed"; detail: string }
  | { kind: "refused" }
  | { kind: "timeout" };

/** Opens one TLS connection to `host:port` and reports how the server reacted. */
export function probeHandshake(host: string, port: number, timeoutMs: number, signal?: AbortSignal): Promise<HandshakeOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    const socket = tls.connect({
      host,
      port,
      // Only the handshake is looked at: no request, no token, nothing to protect; the RPC client pins later.
      rejectUnauthorized: false,
      ALPNProtocols: ["http/1.1"],
    });
    const finish = (outcome: HandshakeOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => finish({ kind: "timeout" }), timeoutMs);
    const onAbort = () => finish({ kind: "timeout" });
    signal?.addEventListener("abort", onAbort, { once: true });
    socket.once("secureConnect", () => finish({ kind: "tls" }));
    socket.once("error", (error: NodeJS.ErrnoException) => finish(classify(error)));
    socket.once("close", () => finish({ kind: "closed", detail: "the connection closed during the TLS handshake" }));
  });
}

function classify(error: NodeJS.ErrnoException): HandshakeOutcome {
  const code = error.code ?? "";
  if (code === "ECONNREFUSED") return { kind: "refused" };
  if (
    code === "ERR_SSL_WRONG_VERSION_NUMBER" ||
    code === "ERR_SSL_PACKET_LENGTH_TOO_LONG" ||
    code === "ERR_SSL_HTTP_REQUEST" ||
    /wrong version number|packet length too long|http request/i.test(error.message)
  ) {
    return { kind: "plain" };
  }
  return { kind: "closed", detail: `the TLS handshake failed (${code || error.message})` };
}
