/**
 * A simulated agy in a tmux pane of a private tmux server, for capture tests:
 * `agy-bridge sim` with the given flags (a persona, a token, `--as-agy`, or
 * `--replay DIR`), its URLs read from the banner or the replay's stderr line,
 * and the RPC and keys a test needs to play a turn. Every wait is bounded and
 * says what it saw.
 */
import { resolve } from "node:path";
import type { PrivateTmux } from "../../support/tmux-server.js";

const ROOT = resolve(import.meta.dirname, "../../..");
const BIN = resolve(ROOT, "src/cli/bin.ts");
const SERVICE = "exa.language_server_pb.LanguageServerService";

export interface SimPane {
  target: string;
  tlsUrl: string;
  plainUrl: string;
  rpc<T>(method: string, body: object): Promise<T>;
  conversationId(): Promise<string>;
  typeTurn(text: string): Promise<void>;
}

export const PANE = { columns: 100, rows: 32 };

/** Starts `agy-bridge sim …flags` in session `name`; waits for its idle screen and URLs. */
export async function startSimPane(
  tmux: PrivateTmux,
  name: string,
  flags: readonly string[],
  options: { token?: string; env?: Record<string, string> } = {},
): Promise<SimPane> {
  await tmux.newSession(name, [process.execPath, "--import", "tsx", BIN, "sim", ...flags], {
    cwd: ROOT,
    ...PANE,
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  const ready = await tmux.waitForScreen(
    name,
    (s) => s.includes("? for shortcuts") && /https:\/\/127\.0\.0\.1:\d+/.test(s) && /http:\/\/127\.0\.0\.1:\d+/.test(s),
    "the idle simulated agy",
    40_000,
  );
  const tlsUrl = (/https:\/\/127\.0\.0\.1:\d+/.exec(ready) as RegExpExecArray)[0];
  const plainUrl = (/http:\/\/127\.0\.0\.1:\d+/.exec(ready) as RegExpExecArray)[0];
  const rpc = async <T>(method: string, body: object): Promise<T> => {
    const res = await fetch(`${plainUrl}/${SERVICE}/${method}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(options.token === undefined ? {} : { "x-codeium-csrf-token": options.token }) },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${method} → HTTP ${res.status}: ${text}`);
    return JSON.parse(text) as T;
  };
  return {
    target: name,
    tlsUrl,
    plainUrl,
    rpc,
    async conversationId() {
      const all = await rpc<{ trajectorySummaries?: Record<string, unknown> }>("GetAllCascadeTrajectories", {});
      const ids = Object.keys(all.trajectorySummaries ?? {});
      if (ids.length !== 1) throw new Error(`expected one conversation, saw ${ids.length}`);
      return ids[0] as string;
    },
    async typeTurn(text) {
      await tmux.paste(name, `${text}\n`);
      await tmux.waitForScreen(name, (s) => s.includes(`> ${text}`), `the draft "${text}"`);
      await tmux.sendKeys(name, "Enter");
    },
  };
}
