/**
 * The browser's half of Web Push, for a push service stand-in: a
 * subscription's keys (P-256 ECDH pair + 16-byte auth secret), the VAPID
 * check (RFC 8292: an ES256 JWT signed with the application server's key),
 * and the RFC 8291 `aes128gcm` decryption, written from the RFCs with
 * node:crypto alone — no code shared with the sender.
 */
import { createDecipheriv, createECDH, createPublicKey, hkdfSync, randomBytes, verify } from "node:crypto";

export interface BrowserSubscription {
  /** What the page would POST: `PushSubscription.toJSON()`. */
  json: { endpoint: string; expirationTime: null; keys: { p256dh: string; auth: string } };
  decrypt(body: Buffer): string;
}

export function newBrowserSubscription(endpoint: string): BrowserSubscription {
  const ecdh = createECDH("prime256v1");
  ecdh.generateKeys();
  const uaPublic = ecdh.getPublicKey();
  const auth = randomBytes(16);
  return {
    json: { endpoint, expirationTime: null, keys: { p256dh: uaPublic.toString("base64url"), auth: auth.toString("base64url") } },
    decrypt(body) {
      // RFC 8188 §2.1 header: salt(16) | rs(4) | idlen(1) | keyid(idlen) — keyid is the sender's public key.
      if (body.length < 21 + 16) throw new Error(`a ${body.length}-byte body is not an aes128gcm push message (header alone is 21 bytes, tag 16)`);
      const salt = body.subarray(0, 16);
      const recordSize = body.readUInt32BE(16);
      const idLength = body[20]!;
      const asPublic = body.subarray(21, 21 + idLength);
      const ciphertext = body.subarray(21 + idLength);
      if (ciphertext.length > recordSize) throw new Error("more than one record");
      // RFC 8291 §3.4: IKM from the ECDH secret and the auth secret, bound to both public keys.
      const ecdhSecret = ecdh.computeSecret(asPublic);
      const keyInfo = Buffer.concat([Buffer.from("WebPush: info\0"), uaPublic, asPublic]);
      const ikm = Buffer.from(hkdfSync("sha256", ecdhSecret, auth, keyInfo, 32));
      // RFC 8188 §2.2, 2.3: the content key and nonce.
      const cek = Buffer.from(hkdfSync("sha256", ikm, salt, Buffer.from("Content-Encoding: aes128gcm\0"), 16));
      const nonce = Buffer.from(hkdfSync("sha256", ikm, salt, Buffer.from("Content-Encoding: nonce\0"), 12));
      const decipher = createDecipheriv("aes-128-gcm", cek, nonce);
      decipher.setAuthTag(ciphertext.subarray(ciphertext.length - 16));
      const padded = Buffer.concat([decipher.update(ciphertext.subarray(0, ciphertext.length - 16)), decipher.final()]);
      // The last record ends with a 0x02 delimiter followed by zero padding.
      let end = padded.length - 1;
      while (end >= 0 && padded[end] === 0) end--;
      if (padded[end] !== 2) throw new Error(`the last record's delimiter is ${padded[end]}, not 2`);
      return padded.subarray(0, end).toString("utf8");
    },
  };
}

export interface VapidClaims {
  aud: string;
  exp: number;
  sub: string;
}

/**
 * Checks `Authorization: vapid t=<jwt>, k=<key>` (RFC 8292 §3): `k` is the
 * expected public key and the JWT's ES256 signature verifies with it.
 * Returns the claims, or throws saying what is wrong.
 */
export function verifyVapid(authorization: string | undefined, expectedPublicKey: string): VapidClaims {
  const match = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(authorization ?? "");
  if (match === null) throw new Error(`not a vapid Authorization header: ${authorization}`);
  const [, jwt, k] = match;
  if (k !== expectedPublicKey) throw new Error("the vapid k= is not the server's public key");
  const [header, payload, signature] = jwt!.split(".");
  const head = JSON.parse(Buffer.from(header!, "base64url").toString("utf8")) as { alg?: string; typ?: string };
  if (head.alg !== "ES256") throw new Error(`the JWT's alg is ${head.alg}, not ES256`);
  const point = Buffer.from(expectedPublicKey, "base64url");
  const key = createPublicKey({
    key: { kty: "EC", crv: "P-256", x: point.subarray(1, 33).toString("base64url"), y: point.subarray(33, 65).toString("base64url") },
    format: "jwk",
  });
  const ok = verify("sha256", Buffer.from(`${header}.${payload}`), { key, dsaEncoding: "ieee-p1363" }, Buffer.from(signature!, "base64url"));
  if (!ok) throw new Error("the JWT's ES256 signature does not verify with the public key");
  return JSON.parse(Buffer.from(payload!, "base64url").toString("utf8")) as VapidClaims;
}
