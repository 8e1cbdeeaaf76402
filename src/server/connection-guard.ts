/**
 * Bounds the sockets a server holds, so idle connections cannot use up its
 * file descriptors (every local process can open them, no token needed).
 * Over the per-address or the total cap, a new connection pushes out the
 * oldest *idle* one — connected without a request in progress: silent, half a
 * header, or kept alive between requests — and only when every held
 * connection is busy is the new one refused. On loopback every process
 * shares 127.0.0.1, so refusing new connections outright would let a flood
 * lock the real bot out; pushing out the oldest idle one lets it in.
 * Timeouts (`headersTimeout`, `keepAliveTimeout`) cut idle sockets anyway;
 * this holds the line until they do.
 */
import { readFile } from "node:fs/promises";
import type { Server } from "node:http";
import type { Socket } from "node:net";

export interface ConnectionLimits {
  /** Connections from one remote address (default 256). */
  perAddress?: number;
  /** Connections in all (default 1024). */
  total?: number;
}

export interface ConnectionGuard {
  /** Connections held now. */
  readonly open: number;
  /** Connections pushed out or refused so far. */
  readonly shed: number;
}

interface Tracked {
  address: string;
  /** Requests in progress on the socket. */
  busy: number;
}

export function guardConnections(server: Server, limits: ConnectionLimits = {}): ConnectionGuard {
  const perAddress = Math.max(1, limits.perAddress ?? 256);
  const total = Math.max(1, limits.total ?? 1024);
  // Insertion order is connection order, so the first idle entry is the oldest.
  const sockets = new Map<Socket, Tracked>();
  const byAddress = new Map<string, Set<Socket>>();
  let shed = 0;

  function forget(socket: Socket): void {
    const tracked = sockets.get(socket);
    if (tracked === undefined) return;
    sockets.delete(socket);
    const group = byAddress.get(tracked.address);
    group?.delete(socket);
    if (group?.size === 0) byAddress.delete(tracked.address);
  }

  function oldestIdle(among: Iterable<Socket>): Socket | undefined {
    for (const socket of among) if (sockets.get(socket)?.busy === 0) return socket;
    return undefined;
  }

  /** Makes room in `among` (already at its cap); false when every connection there is busy. */
  function makeRoom(among: Iterable<Socket>): boolean {
    const victim = oldestIdle(among);
    if (victim === undefined) return false;
    forget(victim);
    victim.destroy();
    shed++;
    return true;
  }

  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress ?? "unknown";
    const group = byAddress.get(address);
    const roomed = ((group?.size ?? 0) < perAddress || makeRoom(group ?? [])) && (sockets.size < total || makeRoom(sockets.keys()));
    if (!roomed) {
      shed++;
      socket.destroy();
      return;
    }
    sockets.set(socket, { address, busy: 0 });
    if (group === undefined) byAddress.set(address, new Set([socket]));
    else group.add(socket);
    socket.once("close", () => forget(socket));
  });

  server.on("request", (req, res) => {
    const tracked = sockets.get(req.socket);
    if (tracked === undefined) return;
    tracked.busy++;
    res.once("close", () => {
      tracked.busy = Math.max(0, tracked.busy - 1);
    });
  });

  return {
    get open() {
      return sockets.size;
    },
    get shed() {
      return shed;
    },
  };
}

/**
 * How many connections to hold: well under this process's descriptor limit
 * (`/proc/self/limits`), leaving room for discovery, agy's RPC connections
 * and files, so a flood of idle sockets is shed before anything else runs out.
 */
export async function connectionLimitsOfProcess(limitsFile = "/proc/self/limits"): Promise<Required<ConnectionLimits>> {
  let limit = 1024;
  try {
    const text = await readFile(limitsFile, "utf8");
    const soft = /^Max open files\s+(\d+|unlimited)/m.exec(text)?.[1];
    if (soft !== undefined) limit = soft === "unlimited" ? 65_536 : Number(soft);
  } catch {
    // Not Linux: keep the common default.
  }
  const total = Math.max(32, Math.min(4096, Math.floor(limit / 2) - 64));
  return { perAddress: Math.max(16, Math.min(256, total)), total };
}

/**
 * Errors of the listening socket, each kind said at most once a minute: a
 * flood of failing accepts must not become a flood of lines.
 */
export function listeningErrorReporter(say: (sentence: string) => void, now: () => number = Date.now): (error: NodeJS.ErrnoException) => void {
  const said = new Map<string, number>();
  return (error) => {
    const kind = error.code ?? "error";
    const at = now();
    const last = said.get(kind);
    if (last !== undefined && at - last < 60_000) return;
    said.set(kind, at);
    const hint = kind === "EMFILE" || kind === "ENFILE" ? " — too many open files: raise the limit (ulimit -n) or find who holds connections open" : "";
    say(`the listening socket reported ${kind} (${error.message}); still serving${hint}`);
  };
}
