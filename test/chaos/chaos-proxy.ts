/**
 * A fault-injecting loopback TCP proxy between the session and the
 * simulator's plain HTTP/1.1 listener. It forwards real bytes and, for the
 * exchanges its fault list names, tears connections down (mid-frame, mid
 * unary call, after agy got a request), stalls a direction, writes a
 * response one byte at a time, answers 503 / 500 itself, or restarts agy on
 * new ports (and moves itself to a new port too, so only discovery finds it
 * again). It never reorders, duplicates or corrupts bytes: TCP would not.
 */
import { createServer, connect, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { HttpRequestParser, type ParsedRequest } from "./http-request-parser.js";
import type { Fault } from "./fault-plan.js";

export interface ChaosProxyOptions {
  /** Transport faults (agy-side ones are the harness's). */
  faults: readonly Fault[];
  /** The simulator's plain port now. */
  targetPort: () => number;
  /** Restarts the simulator on new ports; the proxy then moves to a new port of its own. */
  restartAgy: () => Promise<void>;
  /** Runs before a request is forwarded (the agy-side harness may hold it there). */
  beforeForward?: (request: ParsedRequest) => Promise<void>;
  /**
   * Sees every request as it arrives, before any fault. True: a person
   * answered the gate this call answers while it was on its way, so the
   * call must reach agy and its reply must not be lost — otherwise no client
   * could tell whose answer agy took (docs/chaos.md) — and no transport
   * fault is injected on it (a restart due then waits for the next call).
   */
  observe?: (request: ParsedRequest) => boolean;
}

export interface ChaosProxy {
  readonly url: string;
  /** The faults that fired, in order. */
  readonly fired: Fault[];
  /** Requests seen so far, by method. */
  readonly requests: Map<string, number>;
  close(): Promise<void>;
}

interface Exchange {
  faults: Fault[];
  responseBytes: number;
}

/** Split writes stop after this many response bytes of one exchange (a long stream stays fast). */
const SPLIT_LIMIT = 16 * 1024;

export async function startChaosProxy(options: ChaosProxyOptions): Promise<ChaosProxy> {
  const proxy = new Proxy(options);
  await proxy.listen();
  return proxy;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function write(socket: Socket, bytes: Buffer): Promise<void> {
  if (socket.destroyed || bytes.length === 0) return Promise.resolve();
  return new Promise((resolve) => socket.write(bytes, () => resolve()));
}

class Proxy implements ChaosProxy {
  readonly fired: Fault[] = [];
  readonly requests = new Map<string, number>();
  readonly #o: ChaosProxyOptions;
  readonly #sockets = new Set<Socket>();
  #server: Server | undefined;
  #total = 0;
  #closed = false;
  #restarting: Promise<void> | undefined;
  #restartDue: Fault | undefined;

  constructor(options: ChaosProxyOptions) {
    this.#o = options;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server?.address() as AddressInfo | null)?.port ?? 0}`;
  }

  async listen(): Promise<void> {
    const server = createServer((client) => this.#accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    this.#server = server;
  }

  async #closeListener(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const socket of this.#sockets) socket.destroy();
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#restarting;
    await this.#closeListener();
  }

  #track(socket: Socket): void {
    this.#sockets.add(socket);
    socket.on("close", () => this.#sockets.delete(socket));
    socket.on("error", () => undefined);
  }

  #accept(client: Socket): void {
    const upstream = connect(this.#o.targetPort(), "127.0.0.1");
    for (const socket of [client, upstream]) {
      socket.setNoDelay(true);
      this.#track(socket);
    }
    const both = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on("close", both);
    upstream.on("close", both);
    const parser = new HttpRequestParser();
    let exchange: Exchange | undefined;
    let requests = Promise.resolve();
    let responses = Promise.resolve();
    client.on("data", (chunk: Buffer) => {
      let parsed: ParsedRequest[];
      try {
        parsed = parser.push(chunk);
      } catch {
        both();
        return;
      }
      for (const request of parsed) {
        requests = requests.then(async () => {
          if (client.destroyed) return;
          exchange = await this.#forwardRequest(request, client, upstream, both);
        });
      }
    });
    upstream.on("data", (chunk: Buffer) => {
      responses = responses.then(() => this.#forwardResponse(chunk, exchange, client, both));
    });
  }

  /** Applies the request-side faults of one exchange; returns the exchange, or undefined when it ended here. */
  async #forwardRequest(request: ParsedRequest, client: Socket, upstream: Socket, both: () => void): Promise<Exchange | undefined> {
    this.#total += 1;
    const keepReply = this.#o.observe?.(request) === true;
    const nth = (this.requests.get(request.method) ?? 0) + 1;
    this.requests.set(request.method, nth);
    this.#restartDue ??= this.#o.faults.find((f) => f.kind === "restart" && f.atRequest === this.#total);
    const restart = keepReply ? undefined : this.#restartDue;
    if (restart !== undefined && !this.#closed) {
      this.#restartDue = undefined;
      this.fired.push(restart);
      both();
      this.#restarting = (async () => {
        await this.#o.restartAgy();
        await this.#closeListener();
        if (!this.#closed) await this.listen();
      })();
      await this.#restarting;
      return undefined;
    }
    const faults = keepReply ? [] : this.#o.faults.filter((f) => "method" in f && f.method === request.method && f.nth === nth);
    const fire = (f: Fault): void => void this.fired.push(f);
    const refused = faults.find((f) => f.kind === "http_503" || f.kind === "http_500");
    if (refused !== undefined) {
      fire(refused);
      const body =
        refused.kind === "http_503" ? "upstream connect error or disconnect/reset before headers\n" : JSON.stringify({ code: "internal", message: "chaos: injected failure" });
      const type = refused.kind === "http_503" ? "text/plain" : "application/json";
      const status = refused.kind === "http_503" ? "503 Service Unavailable" : "500 Internal Server Error";
      await write(client, Buffer.from(`HTTP/1.1 ${status}\r\ncontent-type: ${type}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`));
      both();
      return undefined;
    }
    const cut = faults.find((f) => f.kind === "cut");
    if (cut?.kind === "cut" && cut.phase === "before") {
      fire(cut);
      both();
      return undefined;
    }
    await this.#o.beforeForward?.(request);
    if (client.destroyed) return undefined;
    const stall = faults.find((f) => f.kind === "stall" && f.dir === "request");
    if (stall?.kind === "stall") {
      fire(stall);
      const at = Math.min(stall.atByte, request.raw.length);
      await write(upstream, request.raw.subarray(0, at));
      await sleep(stall.ms);
      await write(upstream, request.raw.subarray(at));
    } else {
      await write(upstream, request.raw);
    }
    return { faults, responseBytes: 0 };
  }

  async #forwardResponse(chunk: Buffer, exchange: Exchange | undefined, client: Socket, both: () => void): Promise<void> {
    if (client.destroyed) return;
    if (exchange === undefined) {
      await write(client, chunk);
      return;
    }
    const start = exchange.responseBytes;
    exchange.responseBytes += chunk.length;
    let end = chunk.length;
    const ending = exchange.faults.find(
      (f) => f.kind === "drop" || (f.kind === "cut" && f.phase !== "before"),
    );
    let limit: number | undefined;
    if (ending?.kind === "drop") limit = ending.afterBytes;
    if (ending?.kind === "cut") limit = ending.phase === "after_request" ? 0 : ending.afterBytes;
    if (limit !== undefined && start + chunk.length >= limit) end = Math.max(0, limit - start);
    const stall = exchange.faults.find((f) => f.kind === "stall" && f.dir === "response");
    const split = exchange.faults.find((f) => f.kind === "split");
    let at = 0;
    if (stall?.kind === "stall" && stall.atByte >= start && stall.atByte < start + end) {
      await this.#send(client, chunk.subarray(0, stall.atByte - start), split !== undefined, start);
      if (!this.fired.includes(stall)) this.fired.push(stall);
      await sleep(stall.ms);
      at = stall.atByte - start;
    }
    if (split !== undefined && start < SPLIT_LIMIT && !this.fired.includes(split)) this.fired.push(split);
    await this.#send(client, chunk.subarray(at, end), split !== undefined, start + at);
    if (end < chunk.length && ending !== undefined) {
      if (!this.fired.includes(ending)) this.fired.push(ending);
      both();
    }
  }

  /** Writes `bytes`; one byte per write while the exchange is split (every split position of its frames). */
  async #send(client: Socket, bytes: Buffer, split: boolean, offset: number): Promise<void> {
    if (!split) return write(client, bytes);
    for (let i = 0; i < bytes.length; i++) {
      if (client.destroyed) return;
      if (offset + i >= SPLIT_LIMIT) return write(client, bytes.subarray(i));
      await write(client, bytes.subarray(i, i + 1));
    }
  }
}
