/**
 * Remembering an answer from Telegram and ntfy through a real
 * `agy-bridge serve --policy`: the simulator as agy in a private tmux server,
 * started in a workspace of its own (so the workspace rule it learns can
 * match no other test's simulator), a Telegram Bot API stand-in and an ntfy
 * recording server on loopback. The message shows the rule exactly as it
 * will be saved; "Always allow" answers and saves it in the learned file,
 * where `GET /v1/rules` lists it. (That the next identical request is then
 * decided by it is shown with the same store and the policy in
 * telegram-notifier.test.ts and ntfy-actions.test.ts: serve scopes the rule
 * to agy's working directory, its policy matches the workspace agy reports,
 * and every simulator reports /home/sim/project — a rule that matched here
 * would answer other tests' simulators too.)
 */
import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, startServeProcess, type ServeProcess } from "../server/support/serve-process.js";
import { createPrivateTmux } from "../support/tmux-server.js";
import { until } from "../support/until.js";
import { startRecordingServer } from "./support/recording-server.js";
import { startTelegramStandIn } from "./support/telegram-stand-in.js";

const BOT_TOKEN = "246810:remember-bot-token";
const CHAT = 515;
const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

async function descendsFrom(pid: number, ancestor: number): Promise<boolean> {
  let current: number | undefined = pid;
  for (let hops = 0; current !== undefined && hops < 32; hops++) {
    if (current === ancestor) return true;
    const stat: string = await readFile(`/proc/${current}/stat`, "utf8").catch(() => "");
    const ppid: number = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    current = Number.isInteger(ppid) && ppid > 0 ? ppid : undefined;
  }
  return false;
}

describe("remembering an answer from Telegram and ntfy", { timeout: 180_000 }, () => {
  it("shows the rule exactly as it will be saved, and Always allow answers and saves it, listed by /v1/rules", async () => {
    const dir = await mkdtemp(join(tmpdir(), "agyb-remember-e2e-"));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const workspace = await realpath(await mkdtemp(join(tmpdir(), "agyb-remember-ws-")));
    cleanup.push(() => rm(workspace, { recursive: true, force: true }));
    const telegram = await startTelegramStandIn(BOT_TOKEN);
    cleanup.push(() => telegram.close());
    const ntfy = await startRecordingServer();
    cleanup.push(() => ntfy.close());
    await writeFile(join(dir, "bot-token"), `${BOT_TOKEN}\n`);
    await writeFile(join(dir, "policy.yaml"), "version: 1\ndefault: ask\n");

    const tmux = createPrivateTmux();
    cleanup.push(() => tmux.kill());
    await tmux.newSession("agy", [process.execPath, "--import", TSX, BIN, "sim", "--as-agy"], { columns: 120, rows: 40, cwd: workspace });
    const panePid = Number((await tmux.run(["display-message", "-p", "-t", "agy", "#{pane_pid}"])).trim());
    await tmux.waitForScreen("agy", (s) => /\? for shortcuts|esc to interrupt/i.test(s) || s.includes("─────"), "the simulator's TUI", 30_000);
    const serve: ServeProcess = await startServeProcess({
      configHome: dir,
      args: [
        "-L",
        tmux.socketName,
        "--refresh-ms",
        "300",
        "--policy",
        join(dir, "policy.yaml"),
        "--telegram-bot-token-file",
        join(dir, "bot-token"),
        "--telegram-chat",
        String(CHAT),
        "--telegram-api-root",
        telegram.apiRoot,
        "--notify-ntfy",
        `${ntfy.url}/agy-topic`,
      ],
    });
    cleanup.push(() => serve.stop());
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${serve.url}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${serve.token}`, ...(init.body === undefined ? {} : { "content-type": "application/json" }) },
      });
    const conversationId = await until(
      async () => {
        const { sessions } = (await (await api("/v1/sessions")).json()) as { sessions: { conversationId: string; pid?: number }[] };
        for (const s of sessions) if (s.pid !== undefined && (await descendsFrom(s.pid, panePid))) return s.conversationId;
        return undefined;
      },
      "serve to list the simulator in our pane",
      { ms: 30_000, everyMs: 100, seen: () => serve.stderr().slice(-2000) },
    );
    const pending = async () => ((await (await api(`/v1/sessions/${conversationId}/pending`)).json()) as { pending: Array<{ interactionId: string }> }).pending;
    const ask = async () => {
      const turn = await api(`/v1/sessions/${conversationId}/turns`, { method: "POST", body: JSON.stringify({ text: "Run pwd" }) });
      expect(await turn.json(), serve.stderr()).toMatchObject({ result: "delivered" });
    };

    await ask();
    const [waiting] = await until(async () => ((await pending()).length > 0 ? pending() : undefined), "the first request", {
      ms: 60_000,
      everyMs: 200,
      seen: () => serve.stderr(),
    });
    const id = waiting!.interactionId;
    const offer = "Always allow: `pwd` (this workspace)";
    const message = await telegram.until(() => telegram.messages.find((m) => m.text.includes(id)), "the Telegram message", 30_000);
    expect(message.text).toContain(offer);
    const rows = message.reply_markup!.inline_keyboard.map((row) => row.map((b) => b.text));
    expect(rows).toEqual([
      ["Approve", "Deny"],
      ["Always allow", "Always deny"],
    ]);
    type Published = { message: string; click: string; actions?: Array<{ label: string }> };
    const published = (r: { body: Buffer }[]) => r.map((x) => JSON.parse(x.body.toString("utf8")) as Published).filter((m) => m.click.endsWith(id));
    const [ntfyMessage] = published(await ntfy.until((r) => published(r).length >= 1, "the ntfy message", 30_000));
    expect(ntfyMessage!.message).toContain(offer);
    expect(ntfyMessage!.actions!.map((a) => a.label)).toEqual(["Approve", "Deny", "Always allow"]);

    const always = message.reply_markup!.inline_keyboard[1]![0]!;
    const press = telegram.press(CHAT, message.message_id, always.callback_data!);
    expect(await telegram.until(() => telegram.callbackAnswers.get(press), "the press to be answered", 30_000)).toBe(`Approved; rule saved: ${offer}`);
    const learned = await readFile(join(dir, "agy-bridge", "learned.yaml"), "utf8");
    expect(learned).toContain("addedBy: telegram:ana");
    expect(learned).toContain(workspace);
    const { rules } = (await (await api("/v1/rules")).json()) as { rules: Array<{ id: string; match: string; scope: string; fired: number }> };
    expect(rules).toMatchObject([{ match: "pwd", scope: "workspace", fired: 0 }]);
    await telegram.until(() => (message.history.length >= 2 ? true : undefined), "the Telegram message to be edited", 30_000);
    expect(message.text).toContain(`Approved; rule saved: ${offer}. Decided by telegram:ana.`);

    expect(serve.stderr()).not.toContain(BOT_TOKEN);
  });
});
