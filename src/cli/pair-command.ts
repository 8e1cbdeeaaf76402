/**
 * `agy-bridge pair`: asks the running serve for a one-time pairing link and
 * prints it as text and as a QR code. The bearer token goes to serve in a
 * header; what is printed (and so what a phone's camera reads) holds only
 * the one-time code.
 */
import { homedir } from "node:os";
import { readFile } from "node:fs/promises";
import { isLoopbackHost } from "../rpc/loopback.js";
import { UsageError } from "./args.js";
import { defineCommand, type Command } from "./command.js";
import { terminalText } from "./terminal-text.js";

const HELP = `Usage: agy-bridge pair [--url URL] [--token-file PATH] [--link-base URL] [--json]

Prints a one-time pairing link for the approval page, as text and as a QR
code (in colour on a terminal; plain Unicode blocks without escape codes
when stdout is a file or a pipe): open it on a phone (or scan the code) and
that browser gets its own device token. The link holds a random code, valid
for 5 minutes and one device; never the bearer token. \`agy-bridge devices\` lists and revokes
paired devices.

Options:
  --url URL          the running serve (default $AGY_BRIDGE_URL, else
                     http://127.0.0.1:7878); must be on this machine
  --token-file PATH  the bearer token file serve uses (default as serve's);
                     AGY_BRIDGE_TOKEN, when set, is used instead
  --link-base URL    the address the phone reaches serve at, when it is not
                     --url (an SSH tunnel, a reverse proxy): the link becomes
                     URL/#/pair/<code>
  --json             print only {"url":…,"expiresAt":…}: no QR code, no other text
  -h, --help         show this help

Exit status: 0 on success; 1 when serve cannot be reached or refuses; 2 on a usage error.
`;

interface PairingCode {
  code: string;
  expiresAt: string;
  url: string;
}

export const pairCommand: Command = defineCommand({
  name: "pair",
  summary: "print a one-time link and QR code that pairs a phone with the approval page",
  help: HELP,
  options: {
    url: { type: "string" },
    "token-file": { type: "string" },
    "link-base": { type: "string" },
    json: { type: "boolean" },
  },
  async run(io, { values }) {
    const base = parseUrl(values.url ?? io.env["AGY_BRIDGE_URL"] ?? "http://127.0.0.1:7878", "--url");
    // The bearer token must not travel to another machine in the clear.
    if (!isLoopbackHost(base.hostname))
      throw new UsageError(
        `--url must name serve on this machine (127.0.0.1, ::1 or localhost), not ${base.host}; run \`agy-bridge pair\` where serve runs, and use --link-base for the address the phone uses`,
      );
    const linkBase = values["link-base"] === undefined ? undefined : parseUrl(values["link-base"], "--link-base");
    const token = await bearerToken(io.env, values["token-file"]);
    if (typeof token !== "string") {
      io.stderr.write(`agy-bridge pair: ${token.problem}\n`);
      return 1;
    }
    let response: Response;
    try {
      response = await fetch(new URL("/v1/pairing/codes", base), {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.any([io.signal, AbortSignal.timeout(10_000)]),
      });
    } catch (error) {
      io.stderr.write(
        `agy-bridge pair: cannot reach serve at ${base.origin} (${causeOf(error)}); start \`agy-bridge serve\`, or pass --url with the address it printed\n`,
      );
      return 1;
    }
    const body = (await response.json().catch(() => ({}))) as Partial<PairingCode> & { detail?: string };
    if (response.status !== 201 || typeof body.code !== "string" || typeof body.url !== "string") {
      const why = response.status === 401 ? "it refused the bearer token: pass the --token-file serve uses" : (body.detail ?? `HTTP ${response.status}`);
      io.stderr.write(`agy-bridge pair: serve at ${base.origin} gave no pairing code: ${terminalText(why)}\n`);
      return 1;
    }
    const link = linkBase === undefined ? body.url : `${linkBase.origin}${linkBase.pathname.replace(/\/+$/, "")}/#/pair/${body.code}`;
    if (values.json === true) {
      io.stdout.write(`${JSON.stringify({ url: link, expiresAt: body.expiresAt })}\n`);
      return 0;
    }
    const { default: qrcode } = await import("qrcode");
    // `pair > file` or a pipe gets plain text: the terminal renderer's colours are escape codes.
    const tty = (io.stdout as { isTTY?: boolean }).isTTY === true;
    const qr = await qrcode.toString(link, tty ? { type: "terminal", small: true } : { type: "utf8" });
    io.stdout.write(`${qr}\n${link}\n`);
    io.stderr.write(`agy-bridge pair: open the link on your phone (or scan the code) before ${body.expiresAt ?? "it expires"}; it pairs one device\n`);
    return 0;
  },
});

function parseUrl(text: string, flag: string): URL {
  try {
    const url = new URL(text);
    if (url.protocol === "http:" || url.protocol === "https:") return url;
  } catch {
    // Said below.
  }
  throw new UsageError(`${flag} wants an http:// or https:// URL, e.g. http://127.0.0.1:7878`);
}

async function bearerToken(env: Readonly<Record<string, string | undefined>>, tokenFile: string | undefined): Promise<string | { problem: string }> {
  const fromEnv = env["AGY_BRIDGE_TOKEN"];
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  const { defaultTokenFile } = await import("../server/bearer-token.js");
  const path = tokenFile ?? defaultTokenFile(env, env["HOME"] ?? homedir());
  try {
    const token = (await readFile(path, "utf8")).trim();
    return token === "" ? { problem: `the token file ${path} is empty; start \`agy-bridge serve\` once to create one` } : token;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    return {
      problem:
        code === "ENOENT"
          ? `no token file at ${path}; start \`agy-bridge serve\` first (it creates one), or pass --token-file`
          : `cannot read the token file ${path} (${code})`,
    };
  }
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string } }).cause;
  return cause?.code ?? (error instanceof Error ? error.name : "error");
}
