/**
 * The stdio transport on its own, over in-memory streams: what it waits for
 * when stdin ends, and how it cuts bytes into lines.
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { createStdioTransport } from "../../src/mcp/index.js";
import { until } from "../support/until.js";

function world(maxLineBytes?: number) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let written = "";
  stdout.setEncoding("utf8");
  stdout.on("data", (chunk: string) => (written += chunk));
  const transport = createStdioTransport({ stdin, stdout, ...(maxLineBytes === undefined ? {} : { maxLineBytes }) });
  const received: JSONRPCMessage[] = [];
  transport.onmessage = (message) => received.push(message);
  let drained = false;
  void transport.drained.then(() => (drained = true));
  return { stdin, transport, received, written: () => written, drained: () => drained };
}

describe("the stdio transport", () => {
  it("settles once stdin ended and every request read was answered, not before", async () => {
    const w = world();
    await w.transport.start();
    w.stdin.end(`${JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "x" } })}\n`);
    await until(() => w.received.length === 1 || undefined, "the request to be read");
    await new Promise((r) => setImmediate(r));
    expect(w.drained()).toBe(false);
    await w.transport.send({ jsonrpc: "2.0", id: 5, result: {} });
    await until(() => w.drained() || undefined, "the transport to settle after the reply");
    expect(w.written()).toBe('{"jsonrpc":"2.0","id":5,"result":{}}\n');
  });

  it("does not wait for a request the client cancelled (MCP sends it no reply)", async () => {
    const w = world();
    await w.transport.start();
    w.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: "a-1", method: "tools/call", params: { name: "x" } })}\n`);
    w.stdin.end(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "a-1" } })}\n`);
    await until(() => w.drained() || undefined, "the transport to settle with the cancelled request unanswered", {
      seen: () => `received ${w.received.length}`,
    });
    expect(w.written()).toBe("");
  });

  it("reads a character split between chunks, a CRLF line and a last line without its newline", async () => {
    const w = world();
    await w.transport.start();
    const bytes = Buffer.from(
      `${JSON.stringify({ jsonrpc: "2.0", method: "n/a", params: { text: "héllo €" } })}\r\n${JSON.stringify({ jsonrpc: "2.0", method: "n/b" })}`,
      "utf8",
    );
    const cut = bytes.indexOf(Buffer.from("€")) + 1;
    w.stdin.write(bytes.subarray(0, cut));
    w.stdin.write(bytes.subarray(cut));
    w.stdin.end();
    await until(() => w.drained() || undefined, "the transport to settle");
    expect(w.received).toEqual([
      { jsonrpc: "2.0", method: "n/a", params: { text: "héllo €" } },
      { jsonrpc: "2.0", method: "n/b" },
    ]);
  });
});
