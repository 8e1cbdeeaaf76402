/**
 * Splits the client's side of an HTTP/1.1 connection into whole requests
 * (head and body, `content-length` or chunked), so the chaos proxy knows
 * which RPC each exchange is and can answer one itself (503, 500) without
 * breaking the next request on a kept-alive connection.
 */
export interface ParsedRequest {
  /** The RPC method: the last segment of the path (`GetCascadeTrajectorySteps`). */
  method: string;
  /** The whole request as the client sent it. */
  raw: Buffer;
  /** The body, de-chunked. */
  body: Buffer;
}

export class HttpRequestParser {
  #buffer = Buffer.alloc(0);

  /** Adds bytes; returns the requests they completed, in order. */
  push(chunk: Buffer): ParsedRequest[] {
    this.#buffer = Buffer.concat([this.#buffer, chunk]);
    const out: ParsedRequest[] = [];
    for (;;) {
      const request = this.#takeOne();
      if (request === undefined) return out;
      out.push(request);
    }
  }

  #takeOne(): ParsedRequest | undefined {
    const headEnd = this.#buffer.indexOf("\r\n\r\n");
    if (headEnd < 0) return undefined;
    const head = this.#buffer.subarray(0, headEnd).toString("latin1");
    const [requestLine = "", ...headerLines] = head.split("\r\n");
    const path = requestLine.split(" ")[1] ?? "";
    const method = path.split("?")[0]?.split("/").pop() ?? "";
    const headers = new Map(
      headerLines.map((line) => {
        const colon = line.indexOf(":");
        return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()] as const;
      }),
    );
    const bodyStart = headEnd + 4;
    if ((headers.get("transfer-encoding") ?? "").toLowerCase().includes("chunked")) {
      const parts: Buffer[] = [];
      let at = bodyStart;
      for (;;) {
        const lineEnd = this.#buffer.indexOf("\r\n", at);
        if (lineEnd < 0) return undefined;
        const size = Number.parseInt(this.#buffer.subarray(at, lineEnd).toString("latin1").split(";")[0] ?? "", 16);
        if (!Number.isFinite(size)) throw new Error(`bad chunk size in a ${method} request`);
        if (size === 0) {
          const trailerEnd = this.#buffer.indexOf("\r\n\r\n", lineEnd);
          if (trailerEnd < 0) return undefined;
          return this.#cut(trailerEnd + 4, method, Buffer.concat(parts));
        }
        if (this.#buffer.length < lineEnd + 2 + size + 2) return undefined;
        parts.push(this.#buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
      }
    }
    const length = Number(headers.get("content-length") ?? "0");
    if (this.#buffer.length < bodyStart + length) return undefined;
    return this.#cut(bodyStart + length, method, this.#buffer.subarray(bodyStart, bodyStart + length));
  }

  #cut(end: number, method: string, body: Buffer): ParsedRequest {
    const raw = Buffer.from(this.#buffer.subarray(0, end));
    const request = { method, raw, body: Buffer.from(body) };
    this.#buffer = this.#buffer.subarray(end);
    return request;
  }
}
