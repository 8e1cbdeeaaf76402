/**
 * A self-signed certificate for the simulator's TLS listener, made at start
 * like agy's own (CN localhost, agy 1.0.10). Tests use it for their loopback
 * servers too.
 */
import { generate } from "selfsigned";

export interface SelfSignedCertificate {
  /** PEM certificate. */
  cert: string;
  /** PEM private key. */
  key: string;
}

export async function createSelfSignedCertificate(): Promise<SelfSignedCertificate> {
  const pems = await generate([{ name: "commonName", value: "localhost" }], {
    keyType: "ec",
    curve: "P-256",
    algorithm: "sha256",
    extensions: [
      { name: "basicConstraints", cA: false },
      {
        name: "subjectAltName",
        altNames: [
          { type: 2, value: "localhost" },
          { type: 7, ip: "127.0.0.1" },
          { type: 7, ip: "::1" },
        ],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}
