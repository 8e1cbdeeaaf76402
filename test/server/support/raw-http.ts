/**
 * Raw HTTP/1.1 over a TCP socket, for tests that need exact header bytes
 * (a foreign Host, an Origin, no Host at all) that fetch would not send.
 */
import { connect } from "node:net";

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export function rawRequest(port: number, head: string, timeoutMs = 10_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${timeoutMs} ms; got ${JSON.stringify(text.slice(0, 300))}`));
    }, timeoutMs);
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
      const cut = text.indexOf("\r\n\r\n");
      if (cut < 0) return;
      const lines = text.slice(0, cut).split("\r\n");
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(":");
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(headers["content-length"] ?? "0");
      const body = text.slice(cut + 4);
      if (Buffer.byteLength(body) < length) return;
      clearTimeout(timer);
      socket.destroy();
      resolve({ status: Number(lines[0]?.split(" ")[1]), headers, body });
    });
    socket.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.write(head.endsWith("\r\n\r\n") ? head : `${head}\r\n\r\n`);
  });
}
