/**
 * Which `Host` and `Origin` a request may carry. A page on another site can
 * make a browser send requests to 127.0.0.1, and with DNS rebinding its own
 * name can resolve to 127.0.0.1 too; it cannot read the token, but every
 * route, the page included, answers it 403 so nothing is served to it at
 * all. `Host` must be a loopback name or address, the address serve listens
 * on, or a name the user allowed (`--allow-host`); `Origin`, when sent, must
 * be the server's own (the origin of `Host`) or the one `--cors` origin.
 */
import type { IncomingHttpHeaders } from "node:http";
import { BlockList, isIP } from "node:net";

export interface OriginPolicy {
  /** The address the server listens on (e.g. `127.0.0.1`, `::1`, `localhost`, `0.0.0.0`). */
  boundHost?: string;
  /** More host names clients may use (e.g. a name in /etc/hosts, a tunnel's). */
  allowHosts?: readonly string[];
  /** The one cross-origin browser origin allowed (`--cors`). */
  cors?: string;
}

/** Returns why the request is refused (a sentence), or undefined when it may proceed. */
export type OriginCheck = (headers: IncomingHttpHeaders) => string | undefined;

const loopback = new BlockList();
loopback.addSubnet("127.0.0.0", 8, "ipv4");
loopback.addAddress("::1", "ipv6");
loopback.addSubnet("::ffff:127.0.0.0", 104, "ipv6");

function bare(hostname: string): string {
  const lower = hostname.toLowerCase().replace(/\.$/, "");
  return lower.startsWith("[") && lower.endsWith("]") ? lower.slice(1, -1) : lower;
}

function isLoopbackName(hostname: string): boolean {
  if (hostname === "localhost" || hostname.endsWith(".localhost")) return true;
  const family = isIP(hostname);
  return family !== 0 && loopback.check(hostname, family === 4 ? "ipv4" : "ipv6");
}

/** The hostname of a `Host` header value, or undefined when it is not one. */
function hostnameOf(host: string): string | undefined {
  try {
    const url = new URL(`http://${host}`);
    // A Host header is host[:port] only: anything else (userinfo, a path) is not one.
    if (url.username !== "" || url.password !== "" || url.pathname !== "/" || url.search !== "" || url.hash !== "") return undefined;
    return bare(url.hostname);
  } catch {
    return undefined;
  }
}

export function createOriginCheck(policy: OriginPolicy): OriginCheck {
  const bound = policy.boundHost === undefined ? undefined : bare(policy.boundHost);
  const wildcard = bound === "0.0.0.0" || bound === "::";
  const allowed = new Set((policy.allowHosts ?? []).map(bare));
  const hostAllowed = (hostname: string): boolean =>
    isLoopbackName(hostname) || hostname === bound || allowed.has(hostname) || (wildcard && isIP(hostname) !== 0);
  return (headers) => {
    const host = headers.host;
    if (host === undefined || host === "") return "send a Host header naming this server (e.g. Host: 127.0.0.1:7878)";
    const hostname = hostnameOf(host);
    if (hostname === undefined || !hostAllowed(hostname)) {
      return `this server does not answer to the host name ${JSON.stringify(host.slice(0, 100))}; use 127.0.0.1 or localhost, or start serve with --allow-host NAME to allow that name`;
    }
    const origin = headers.origin;
    if (origin === undefined) return undefined;
    if (policy.cors !== undefined && origin === policy.cors) return undefined;
    let same = false;
    try {
      const url = new URL(origin);
      same = (url.protocol === "http:" || url.protocol === "https:") && new URL(`${url.protocol}//${host}`).host === url.host;
    } catch {
      same = false;
    }
    if (same) return undefined;
    return `a page on another origin (${JSON.stringify(origin.slice(0, 100))}) may not use this server; open the approval page from this server itself, or start serve with --cors ORIGIN to allow that one origin`;
  };
}
