/**
 * A fault-injecting loopback TCP proxy between the session and the
 * simulator's plain HTTP/1.1 listener. It forwards real bytes and, for the
 * exchanges its fault list names, tears connections down (mid-frame, mid
 * unary call, after agy got a request), stalls a direction, writes a
 * response one byte at a time, answers 503 / 500 itself, or restarts agy on
 * new ports (and moves itself to a new port too, so only discovery finds it
 * again). It never reorders, duplicates or corrupts bytes: TCP would not.
 *
 * When a fault fires is fixed by the conversation, not by the clock: a fault
 * is armed once the conversation holds its `atStep` steps, and fires on the
 * next exchange of its method (a stream's response faults on the stream
 * open then, from the bytes that follow); an exchange that ends before its
 * fault could fire hands the fault on to the next one, and a unary
 * response's byte offsets are held within its first chunk. So a seed fires
 * the same faults on every run, whatever the timing of polls and retries.
 */
import { createServer, connect, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { HttpRequestParser, type ParsedRequest } from "./http-request-parser.js";
import { STREAM, type Fault } from "./fault-plan.js";

export interface ChaosProxyOptions {
  /** Transport faults (agy-side ones are the harness's). */
  faults: readonly Fault[];
  /** The simulator's plain port now. */
  targetPort: () => number;
  /** How far the conversation is: the steps the simulator holds, every conversation counted. */
  position: () => number;
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
  /** Every request's method and the conversation's position when it arrived, in order. */
  readonly trace: Array<{ method: string; position: number }>;
  close(): Promise<void>;
}

interface Exchange {
  method: string;
  /** The response-side faults this exchange took, each with the response byte it was taken at. */
  faults: Map<Fault, number>;
  responseBytes: number;
  /** Response chunks forwarded so far. */
  chunks: number;
}

/** Faults that act on the response bytes of an exchange. */
const RESPONSE_SIDE = (f: Fault): boolean =>
  f.kind === "drop" || f.kind === "split" || (f.kind === "stall" && f.dir === "response") || (f.kind === "cut" && f.phase !== "before");

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
  readonly trace: Array<{ method: string; position: number }> = [];
  readonly #o: ChaosProxyOptions;
  /** Response-side faults an open exchange has taken (not yet fired). */
  readonly #taken = new Set<Fault>();
  readonly #sockets = new Set<Socket>();
  #server: Server | undefined;
  #closed = false;
  #restarting: Promise<void> | undefined;

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
    let exchange: Exchange | undefined;
    const both = (): void => {
      client.destroy();
      upstream.destroy();
      this.#release(exchange);
    };
    client.on("close", both);
    upstream.on("close", both);
    const parser = new HttpRequestParser();
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
          this.#release(exchange);
          exchange = await this.#forwardRequest(request, client, upstream, both);
        });
      }
    });
    upstream.on("data", (chunk: Buffer) => {
      responses = responses.then(() => this.#forwardResponse(chunk, exchange, client, both));
    });
  }

  /** Faults armed for `method` now: the conversation reached their step, and they have not fired or been taken. */
  #armed(method: string, position: number): Fault[] {
    return this.#o.faults.filter((f) => "method" in f && f.method === method && f.atStep <= position && !this.fired.includes(f) && !this.#taken.has(f));
  }

  /** An exchange that ended: the faults it took and never fired go to the next exchange of their method. */
  #release(exchange: Exchange | undefined): void {
    if (exchange === undefined) return;
    for (const fault of exchange.faults.keys()) this.#taken.delete(fault);
    exchange.faults.clear();
  }

  /** Takes the armed response-side faults of `exchange`'s method, from its current response byte on. */
  #take(exchange: Exchange, faults: readonly Fault[]): void {
    for (const fault of faults) {
      if (!RESPONSE_SIDE(fault) || this.#taken.has(fault)) continue;
      this.#taken.add(fault);
      exchange.faults.set(fault, exchange.responseBytes);
    }
  }

  /** Applies the request-side faults of one exchange; returns the exchange, or undefined when it ended here. */
  async #forwardRequest(request: ParsedRequest, client: Socket, upstream: Socket, both: () => void): Promise<Exchange | undefined> {
    const keepReply = this.#o.observe?.(request) === true;
    const nth = (this.requests.get(request.method) ?? 0) + 1;
    this.requests.set(request.method, nth);
    const position = this.#o.position();
    this.trace.push({ method: request.method, position });
    const armed = keepReply ? [] : this.#armed(request.method, position);
    const restart = armed.find((f) => f.kind === "restart");
    if (restart !== undefined && !this.#closed) {
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
    const faults = armed;
    const fire = (f: Fault): void => void this.fired.push(f);
    const refused = faults.find((f) => f.kind === "http_503" || f.kind === "http_500");
    if (refused !== undefined) {
      fire(refused);
      const body =
        refused.kind === "http_503"
          ? "upstream connect error or disconnect/reset before headers\n"
          : JSON.stringify({ code: "internal", message: "chaos: injected failure" });
      const type = refused.kind === "http_503" ? "text/plain" : "application/json";
      const status = refused.kind === "http_503" ? "503 Service Unavailable" : "500 Internal Server Error";
      await write(
        client,
        Buffer.from(`HTTP/1.1 ${status}\r\ncontent-type: ${type}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`),
      );
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
    const exchange: Exchange = { method: request.method, faults: new Map(), responseBytes: 0, chunks: 0 };
    this.#take(exchange, faults);
    return exchange;
  }

  async #forwardResponse(chunk: Buffer, exchange: Exchange | undefined, client: Socket, both: () => void): Promise<void> {
    if (client.destroyed) return;
    if (exchange === undefined) {
      await write(client, chunk);
      return;
    }
    // A stream open when the conversation reaches a fault's step takes it from here on.
    if (exchange.method === STREAM) this.#take(exchange, this.#armed(STREAM, this.#o.position()));
    const start = exchange.responseBytes;
    exchange.responseBytes += chunk.length;
    exchange.chunks += 1;
    const first = exchange.chunks === 1;
    /** A byte offset of `fault` as an offset in this exchange's response: a unary reply's within its first chunk. */
    const offset = (fault: Fault, bytes: number): number => {
      const base = exchange.faults.get(fault) ?? 0;
      if (exchange.method === STREAM || !first) return base + bytes;
      // Past the end of a short reply's first chunk: its middle, so the reply is still cut mid-way.
      return bytes < chunk.length ? bytes : Math.floor(chunk.length / 2);
    };
    const faults = [...exchange.faults.keys()];
    let end = chunk.length;
    const ending = faults.find((f) => f.kind === "drop" || (f.kind === "cut" && f.phase !== "before"));
    let limit: number | undefined;
    if (ending?.kind === "drop") limit = offset(ending, ending.afterBytes);
    if (ending?.kind === "cut") limit = ending.phase === "after_request" ? 0 : offset(ending, ending.afterBytes);
    if (limit !== undefined && start + chunk.length >= limit) end = Math.max(0, limit - start);
    const stall = faults.find((f) => f.kind === "stall" && f.dir === "response");
    const split = faults.find((f) => f.kind === "split");
    const splitUntil = split === undefined ? undefined : (exchange.faults.get(split) ?? 0) + SPLIT_LIMIT;
    let at = 0;
    const stallAt = stall?.kind === "stall" ? offset(stall, stall.atByte) : undefined;
    if (stall?.kind === "stall" && stallAt !== undefined && stallAt >= start && stallAt < start + end && !this.fired.includes(stall)) {
      await this.#send(client, chunk.subarray(0, stallAt - start), splitUntil, start);
      this.#fire(stall);
      await sleep(stall.ms);
      at = stallAt - start;
    }
    if (split !== undefined && splitUntil !== undefined && start < splitUntil) this.#fire(split);
    await this.#send(client, chunk.subarray(at, end), splitUntil, start + at);
    if (end < chunk.length && ending !== undefined) {
      this.#fire(ending);
      both();
    }
  }

  #fire(fault: Fault): void {
    if (!this.fired.includes(fault)) this.fired.push(fault);
    this.#taken.delete(fault);
  }

  /** Writes `bytes`; one byte per write while the exchange is split (every split position of its frames, up to SPLIT_LIMIT bytes). */
  async #send(client: Socket, bytes: Buffer, splitUntil: number | undefined, offset: number): Promise<void> {
    if (splitUntil === undefined) return write(client, bytes);
    for (let i = 0; i < bytes.length; i++) {
      if (client.destroyed) return;
      if (offset + i >= splitUntil) return write(client, bytes.subarray(i));
      await write(client, bytes.subarray(i, i + 1));
    }
  }
}
