/**
 * Runs the fake TUI in a tmux pane against a steerable fake port. The test
 * steers it over a loopback HTTP control socket whose port is written to the
 * file named by argv[2]:
 *   POST /view  {TuiView patch}  → sets the view (`"pending": null` removes the prompt)
 *   GET  /calls                 → the port calls the TUI made, as JSON
 * Optional flags after the file: `--version 1.0|1.1|1.2.1|1.2`, `--digits accept|ignore`,
 * `--trust PATH` (start on the trust screen), `--stale close|stay`, `--command-options 2|4`,
 * `--tasks N`.
 */
import { createServer } from "node:http";
import { renameSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { createFakeTui, type FakeTuiOptions } from "../../src/sim/tui/fake-tui.js";
import type { TuiDigits, TuiStaleDialog, TuiVersion } from "../../src/sim/tui/tui-options.js";
import { createFakeTuiPort } from "./fake-tui-port.js";

const { positionals, values } = parseArgs({
  args: process.argv.slice(2),
  allowPositionals: true,
  options: {
    version: { type: "string" },
    digits: { type: "string" },
    trust: { type: "string" },
    stale: { type: "string" },
    "command-options": { type: "string" },
    tasks: { type: "string" },
  },
});
const portFile = positionals[0];
if (portFile === undefined) throw new Error("usage: tui-fake-entry.ts <port-file> [--version V] [--digits D] [--trust PATH]");
const settings: Partial<FakeTuiOptions> = {};
if (values.version !== undefined) settings.version = values.version as TuiVersion;
if (values.digits !== undefined) settings.digits = values.digits as TuiDigits;
if (values.trust !== undefined) settings.trustPath = values.trust;
if (values.stale !== undefined) settings.staleDialog = values.stale as TuiStaleDialog;
if (values["command-options"] !== undefined) settings.commandOptions = values["command-options"] === "2" ? 2 : 4;
if (values.tasks !== undefined) settings.tasks = Number(values.tasks);

const port = createFakeTuiPort();
const control = createServer((req, res) => {
  let body = "";
  req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
  req.on("end", () => {
    if (req.method === "POST" && req.url === "/view") {
      const patch = JSON.parse(body) as Record<string, unknown>;
      // JSON has no undefined: null stands for "no pending step".
      if (patch.pending === null) patch.pending = undefined;
      port.setView(patch);
      res.end("{}");
    } else if (req.url === "/calls") {
      res.end(JSON.stringify(port.calls));
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
});
control.listen(0, "127.0.0.1", () => {
  const address = control.address();
  if (address === null || typeof address === "string") throw new Error("no control address");
  // Published atomically and before the first frame: a test that sees the TUI can read the port.
  writeFileSync(`${portFile}.tmp`, String(address.port));
  renameSync(`${portFile}.tmp`, portFile);
  const tui = createFakeTui({ port, input: process.stdin, output: process.stdout, ...settings });
  tui.start();
  void tui.closed.then(() => {
    control.close();
    process.exit(0);
  });
});
