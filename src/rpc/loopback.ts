/**
 * The loopback guard. agy's language server uses a self-signed certificate, so
 * the client cannot verify who it talks to; keeping every connection on the
 * loopback interface is what makes that safe. The guard runs before any socket
 * opens.
 */
import { isIP } from "node:net";
import { AgyBridgeError } from "../errors.js";

/**
 * Throws `not_loopback` unless `url` is an http(s) URL whose host is
 * `localhost`, an address in 127.0.0.0/8, `::1`, or an IPv4-mapped
 * `::ffff:127.x.y.z`. Returns the parsed URL.
 */
export function assertLoopbackUrl(url: string | URL): URL {
  let parsed: URL;
  try {
    if (typeof url !== "string" && !(url instanceof URL)) throw new TypeError("not a string or URL");
    parsed = typeof url === "string" ? new URL(url) : url;
  } catch (cause) {
    throw new AgyBridgeError("not_loopback", `refusing an RPC URL that does not parse as a URL`, { cause });
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new AgyBridgeError("not_loopback", `refusing RPC URL with scheme ${parsed.protocol}: only http: and https: to a loopback host are allowed`);
  }
  if (!isLoopbackHost(parsed.hostname)) {
    throw new AgyBridgeError(
      "not_loopback",
      `refusing RPC URL host ${parsed.hostname}: it is not loopback. TLS verification is off for agy's ` +
        "self-signed certificate, so staying on 127.0.0.0/8, localhost or ::1 is the only thing that makes " +
        "the connection safe",
    );
  }
  return parsed;
}

/** True for `localhost`, 127.0.0.0/8, `::1` and `::ffff:127.x.y.z` (brackets allowed). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
  const lower = host.toLowerCase();
  if (lower === "localhost") return true;
  const family = isIP(lower);
  if (family === 4) return lower.startsWith("127.");
  if (family !== 6) return false;
  const words = expandIpv6(lower);
  if (words === undefined) return false;
  if (words.slice(0, 7).every((w) => w === 0) && words[7] === 1) return true;
  // IPv4-mapped ::ffff:a.b.c.d: the high byte of word 6 is the first octet.
  const mapped = words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff;
  return mapped && (words[6] ?? 0) >> 8 === 127;
}

function expandIpv6(address: string): number[] | undefined {
  let text = address;
  const tail: number[] = [];
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const o = dotted.slice(1).map(Number);
    tail.push(((o[0] ?? 0) << 8) | (o[1] ?? 0), ((o[2] ?? 0) << 8) | (o[3] ?? 0));
    text = text.slice(0, dotted.index);
    if (text.endsWith(":") && !text.endsWith("::")) text = text.slice(0, -1);
  }
  const [head = "", rest] = text.split("::");
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((w) => Number.parseInt(w, 16)));
  const left = parse(head);
  const right = rest === undefined ? [] : parse(rest);
  const missing = 8 - tail.length - left.length - right.length;
  if (missing < 0 || (rest === undefined && missing !== 0)) return undefined;
  const words = [...left, ...new Array<number>(missing).fill(0), ...right, ...tail];
  return words.some((w) => Number.isNaN(w)) ? undefined : words;
}
