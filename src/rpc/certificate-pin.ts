/**
 * Trust-on-first-use for agy's self-signed certificate. agy makes a new
 * certificate at each start (agy 1.0.10), so nothing can be pinned ahead of
 * time; what we can refuse is a *different* certificate appearing on the same
 * port later in a client's life (another process took the port). Pure: the
 * client hands it each connection's peer certificate.
 */
import { AgyBridgeError } from "../errors.js";

export interface PeerCertificateLike {
  /** SHA-256 fingerprint, as Node's `getPeerCertificate()` reports it. */
  fingerprint256?: string;
}

export interface CertificatePin {
  /** The pinned fingerprint, once a connection has been seen. */
  readonly fingerprint: string | undefined;
  /** Pins the first certificate; returns an error for any later different one. */
  check(certificate: PeerCertificateLike | undefined): AgyBridgeError | undefined;
}

export function createCertificatePin(origin: string): CertificatePin {
  let pinned: string | undefined;
  return {
    get fingerprint() {
      return pinned;
    },
    check(certificate) {
      const seen = certificate?.fingerprint256;
      if (seen === undefined || seen === "") {
        return new AgyBridgeError("transport", `the TLS server at ${origin} presented no certificate; refusing`);
      }
      if (pinned === undefined) {
        pinned = seen;
        return undefined;
      }
      if (seen === pinned) return undefined;
      return new AgyBridgeError(
        "transport",
        `the TLS server at ${origin} presented a different certificate than the first one this client saw; ` +
          "refusing it (another process may hold the port now): re-discover the language server and create a new client",
      );
    },
  };
}
