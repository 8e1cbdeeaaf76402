/**
 * The receiver in docs/notifications.md works as printed: run as its own
 * Node process, it accepts serve's webhook and refuses a forged or stale one.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createWebhookNotifier, signWebhook, type WebhookReport } from "../../src/notify/index.js";
import { permissionNotice } from "./support/notices.js";
import { until } from "../support/until.js";

const cleanup: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

describe("the documented webhook receiver", { timeout: 60_000 }, () => {
  it("accepts serve's signed webhook and refuses a forged or replayed one", async () => {
    const doc = await readFile(resolve(import.meta.dirname, "../../docs/notifications.md"), "utf8");
    const code = /```js\n(\/\/ receiver\.mjs[\s\S]*?)```/.exec(doc)?.[1];
    expect(code, "the receiver example in docs/notifications.md").toBeDefined();
    const port = await freePort();
    const dir = await mkdtemp(join(tmpdir(), "agyb-receiver-"));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, "receiver.mjs"), code!.replace("listen(8080,", `listen(${port},`));
    const child = spawn(process.execPath, [join(dir, "receiver.mjs")], {
      env: { ...process.env, WEBHOOK_SECRET: "doc-secret" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    cleanup.push(() => void child.kill("SIGKILL"));
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (err += c));
    const url = `http://127.0.0.1:${port}/hook`;
    // Wait for it to listen: a request that is refused at the socket means not yet.
    const deadline = Date.now() + 15_000;
    for (;;) {
      const ok = await fetch(url, { method: "POST", body: "{}" }).then(
        () => true,
        () => false,
      );
      if (ok) break;
      if (Date.now() > deadline) throw new Error(`the receiver did not listen; stderr: ${err}`);
      await new Promise((r) => setTimeout(r, 100));
    }

    const reports: WebhookReport[] = [];
    const notifier = createWebhookNotifier({ url, secret: "doc-secret", name: "webhook:1", onReport: (r) => reports.push(r), retry: { maxAttempts: 1 } });
    cleanup.push(() => notifier.close());
    notifier.pending(permissionNotice());
    await until(() => reports.length === 1, "the delivery", { everyMs: 50, seen: () => JSON.stringify(reports) });
    expect(reports[0]).toMatchObject({ result: "delivered", status: 204 });
    await until(() => out.includes("interaction.pending"), "the receiver's line", { everyMs: 50, seen: () => out + err });
    expect(out).toContain("interaction.pending npm test  http://127.0.0.1:7878/#/interactions/int_0123456789abcdef");

    const body = JSON.stringify({ type: "interaction.pending" });
    const now = Math.floor(Date.now() / 1000);
    const post = (timestamp: number, signature: string) =>
      fetch(url, { method: "POST", body, headers: { "x-agy-bridge-timestamp": String(timestamp), "x-agy-bridge-signature": signature } });
    expect((await post(now, signWebhook("wrong-secret", now, body))).status).toBe(401);
    expect((await post(now - 3600, signWebhook("doc-secret", now - 3600, body))).status).toBe(401);
  });
});
