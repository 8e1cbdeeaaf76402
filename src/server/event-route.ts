/**
 * `GET /v1/sessions/{conversationId}/events`: the session's log as Server-Sent
 * Events, resumed from `Last-Event-ID` (`event-stream.ts` says how), ended
 * when the session goes, the server closes, or the device that opened it is
 * revoked.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ApiContext, ApiServerOptions } from "./api-options.js";
import { followLog, neverIssued, resumeFrom } from "./event-stream.js";
import { HttpProblem, notFound } from "./http-problem.js";
import type { Principal } from "./pairing-routes.js";
import type { HubSession } from "./session-hub.js";
import { createSseStream, type SseStream } from "./sse-stream.js";

/** `GET /v1/sessions/{id}/events`: an SSE stream following the session's log from `Last-Event-ID`. */
export async function openEvents(context: ApiContext, req: IncomingMessage, res: ServerResponse, id: string, principal: Principal): Promise<void> {
  const { options, streams } = context;
  const session = options.hub.get(id);
  if (session === undefined) throw notFound();
  const raw = req.headers["last-event-id"];
  const header = Array.isArray(raw) ? raw[0] : raw;
  const start = await startOf(context, req, res, session, id, header);
  // The client left while the source was asked: no stream to open.
  if (start === undefined) return;
  const closed = new AbortController();
  const streamOptions: Parameters<typeof createSseStream>[1] = {
    onClose: () => cleanup(),
    onDrain: () => follower.drained(),
  };
  if (options.heartbeatMs !== undefined) streamOptions.heartbeatMs = options.heartbeatMs;
  if (options.timers !== undefined) streamOptions.timers = options.timers;
  const stream = createSseStream(res, streamOptions);
  streams.add(stream);
  stream.write("retry: 2000\n\n");
  // The cursor walks the shared log: a client that stops reading holds no queue.
  const follower = followLog({
    source: session,
    sink: stream,
    lastEventId: header,
    start,
    signal: closed.signal,
    onProblem: (message) => options.log?.(message),
  });
  const flush = () => follower.flush();
  // The end of a sourced log's history is no append: it flushes too (the client's id-less `history_end`).
  const unsubscribe = session.log.subscribe(flush, flush);
  const unwatch = options.hub.onChange(() => {
    if (options.hub.get(id) !== session) stream.end("session ended");
  });
  flush();
  const unwatchDevices = endWhenRevoked(options, principal, stream);
  function cleanup(): void {
    unwatchDevices();
    unsubscribe();
    unwatch();
    closed.abort();
    streams.delete(stream);
  }
}

/**
 * Where a stream resumes from `Last-Event-ID`; `undefined` when the client
 * left while a fleet source was asked about an id this serve has not read up to.
 */
async function startOf(
  context: ApiContext,
  req: IncomingMessage,
  res: ServerResponse,
  session: HubSession,
  id: string,
  header: string | undefined,
): Promise<ReturnType<typeof resumeFrom> | undefined> {
  const { options } = context;
  // A position the window no longer covers is rebuilt from a snapshot, announced by `resync` (event-stream.ts).
  const start = resumeFrom(header, session.log);
  if (!("ahead" in start && session.newestEntryId !== undefined)) return start;
  // A stream id this serve has not read up to: one the stream issued is waited for, one it never issued is refused.
  // When the source cannot say (Redis away), the client waits: it was most likely sent.
  const newest = await askBriefly((signal) => session.newestEntryId!(signal), 5_000);
  if (newest !== undefined) {
    const refused = neverIssued(start.ahead, newest.value);
    if (refused !== undefined) throw refused;
  }
  if (options.hub.get(id) !== session) throw notFound();
  if (context.closing) throw new HttpProblem(503, "Service Unavailable", "the server is shutting down");
  if (res.destroyed || req.socket.destroyed) return undefined;
  // The log read on meanwhile.
  return resumeFrom(header, session.log);
}

/**
 * A revoked device loses its open streams too, not only its next request: at once when the
 * device file changes (watched), and by a periodic check where no watch is possible.
 * Returns what stops watching.
 */
function endWhenRevoked(options: ApiServerOptions, principal: Principal, stream: SseStream): () => void {
  const devices = options.devices;
  if (principal === "owner" || devices === undefined) return () => undefined;
  const checkPaired = () => {
    devices.list().then(
      (paired) => {
        if (!paired.some((d) => d.id === principal.id)) stream.end("device revoked");
      },
      () => undefined,
    );
  };
  const recheck = setInterval(checkPaired, options.revocationCheckMs ?? 5_000);
  recheck.unref();
  const unwatchDevices = devices.onChange(checkPaired);
  return () => {
    clearInterval(recheck);
    unwatchDevices();
  };
}

/** What `ask` answers within `ms`, or undefined when it fails or takes longer (it is told to stop then). */
async function askBriefly<T>(ask: (signal: AbortSignal) => Promise<T>, ms: number): Promise<{ value: T } | undefined> {
  const stop = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => {
      stop.abort();
      resolve(undefined);
    }, ms);
  });
  try {
    return await Promise.race([
      ask(stop.signal).then(
        (value) => ({ value }),
        () => undefined,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
