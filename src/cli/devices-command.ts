/**
 * `agy-bridge devices`: the browsers paired with the approval page, and
 * revoking one. Works on the device file beside the token file, whether or
 * not serve runs; a running serve sees the change at once (it watches the
 * file): the device's open streams end and its next request is refused.
 * Revoking also deletes the device's Web Push subscriptions.
 */
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { ownUser } from "./process-info.js";
import { defineCommand, type Command } from "./command.js";
import { terminalText } from "./terminal-text.js";

const HELP = `Usage: agy-bridge devices [--revoke ID] [--token-file PATH] [--json]

Lists the devices paired with the approval page (\`agy-bridge pair\`), or
revokes one: its device token is refused from its next request on, a
running serve ends its open event streams at once (the page says it was
signed out), and its Web Push subscriptions are deleted.

Options:
  --revoke ID        revoke the device with this id
  --token-file PATH  the bearer token file serve uses; the devices are in
                     devices.json beside it (default $XDG_CONFIG_HOME/agy-bridge/,
                     else ~/.config/agy-bridge/)
  --json             {"devices":[{"id","name","pairedAt"}]}, or with --revoke
                     {"revoked":ID,"pushSubscriptionsRemoved":N}
  -h, --help         show this help

Exit status: 0 on success; 1 when the device file cannot be read or no device has that id; 2 on a usage error.
`;

export const devicesCommand: Command = defineCommand({
  name: "devices",
  summary: "list the devices paired with the approval page, or revoke one",
  help: HELP,
  options: {
    revoke: { type: "string" },
    "token-file": { type: "string" },
    json: { type: "boolean" },
  },
  async run(io, { values }) {
    const { createDeviceStore, deviceFileFor, defaultTokenFile } = await import("../server/index.js");
    const tokenFile = values["token-file"] ?? defaultTokenFile(io.env, io.env["HOME"] ?? homedir());
    const store = createDeviceStore({ file: deviceFileFor(tokenFile), ...ownUser() });
    try {
      if (values.revoke !== undefined) {
        const id = values.revoke;
        const device = (await store.list()).find((d) => d.id === id);
        const unknown = () => {
          io.stderr.write(`agy-bridge devices: no paired device has the id ${terminalText(JSON.stringify(id))}; \`agy-bridge devices\` lists them\n`);
          return 1;
        };
        if (device === undefined) return unknown();
        // Its pushes stop too. Deleted before the device file changes: a running serve, seeing the
        // change, deletes whatever it still holds of them (so the count here is what was stored).
        const { openPushSubscriptionStore } = await import("../notify/index.js");
        const pushFile = join(dirname(defaultTokenFile(io.env, io.env["HOME"] ?? homedir())), "push-subscriptions.json");
        const removed = await (await openPushSubscriptionStore(pushFile, { allowLoopback: true })).removeDevice(id);
        if (!(await store.revoke(id))) return unknown();
        if (values.json === true) io.stdout.write(`${JSON.stringify({ revoked: id, pushSubscriptionsRemoved: removed })}\n`);
        else
          io.stdout.write(
            `${terminalText(`revoked ${id} (${device.name}); its next request is refused${removed === 0 ? "" : `, and its ${removed} push subscription(s) were deleted`}`)}\n`,
          );
        return 0;
      }
      const devices = await store.list();
      if (values.json === true) {
        io.stdout.write(`${JSON.stringify({ devices })}\n`);
        return 0;
      }
      if (devices.length === 0) {
        io.stderr.write("agy-bridge devices: no paired devices; `agy-bridge pair` pairs one\n");
        return 0;
      }
      const width = Math.max(4, ...devices.map((d) => d.name.length));
      io.stdout.write(`${"ID".padEnd(12)}  ${"NAME".padEnd(width)}  PAIRED\n`);
      for (const d of devices) io.stdout.write(`${terminalText(`${d.id.padEnd(12)}  ${d.name.padEnd(width)}  ${d.pairedAt}`)}\n`);
      return 0;
    } catch (error) {
      io.stderr.write(`agy-bridge devices: ${terminalText((error as Error).message)}\n`);
      return 1;
    }
  },
});
