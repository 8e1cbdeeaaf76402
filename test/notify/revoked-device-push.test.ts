/**
 * serve's notifications and the device file: when a device is revoked —
 * by `agy-bridge devices` in another process, or any other writer of
 * devices.json — serve deletes its push subscriptions at once, not only
 * before its next push (which would otherwise write them back).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createAuditLog } from "../../src/audit/index.js";
import { prepareNotifications, type Notifications } from "../../src/cli/notify-options.js";
import { createDeviceStore } from "../../src/server/device-store.js";
import { captureIo } from "../support/cli-io.js";
import { until } from "../support/until.js";
import { newBrowserSubscription } from "./support/push-decrypt.js";

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

describe("a revoked device's push subscriptions", () => {
  it("are deleted by serve as soon as the device file says the device is gone, and the other devices' stay", async () => {
    const dir = await mkdtemp(join(tmpdir(), "agyb-revoked-push-"));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const configDir = join(dir, "agy-bridge");
    const devicesFile = join(configDir, "devices.json");
    const devices = createDeviceStore({ file: devicesFile });
    const phone = await devices.add("phone");
    const tablet = await devices.add("tablet");
    const prepared = await prepareNotifications(
      captureIo([]).io,
      {},
      { configDir, auditLog: createAuditLog({ path: join(dir, "audit.jsonl") }), policy: false, devicesFile },
    );
    if (typeof prepared === "string") throw new Error(prepared);
    const notifications: Notifications = prepared;
    cleanup.push(() => notifications.close());
    // Never started: no channel runs, so no push could prune anything.
    await notifications.push.subscribe(newBrowserSubscription("https://push.example/phone").json, phone.device.id);
    await notifications.push.subscribe(newBrowserSubscription("https://push.example/tablet").json, tablet.device.id);
    const pushFile = join(configDir, "push-subscriptions.json");
    const stored = async () => (JSON.parse(await readFile(pushFile, "utf8")) as Array<{ endpoint: string; device: string }>).map((s) => [s.endpoint, s.device]);
    expect(await stored()).toEqual([
      ["https://push.example/phone", phone.device.id],
      ["https://push.example/tablet", tablet.device.id],
    ]);
    // Another process's store on the same file, as `agy-bridge devices --revoke` edits it.
    expect(await createDeviceStore({ file: devicesFile }).revoke(phone.device.id)).toBe(true);
    let now: unknown;
    await until(
      async () => {
        now = await stored();
        return (now as unknown[]).length === 1;
      },
      "the phone's subscription to be deleted",
      { ms: 10_000, seen: () => JSON.stringify(now) },
    );
    expect(now).toEqual([["https://push.example/tablet", tablet.device.id]]);
  });
});
