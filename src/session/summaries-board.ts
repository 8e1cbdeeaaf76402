/**
 * One `GetAllCascadeTrajectories` reading shared by every session on the same
 * agy server (issue 23, docs/scale.md). Each session's run-status backstop and
 * `/clear` check want the server's summaries every few seconds; a hundred
 * sessions on one agy asking on their own would make a hundred calls per
 * interval, each listing all hundred conversations. Through the board they
 * share one reading per server per interval.
 *
 * Sharing must not make a reading look fresher than it is: the backstop closes
 * a turn on two IDLE readings in a row, and a reading requested before the
 * session's latest events may predate a turn that began since. So every
 * reading carries a ticket from {@link nextTicket}, the same counter the
 * reader stamps its events with, and a session asks for a reading whose
 * ticket is later than its latest events (`after`) and that is at most
 * `maxAgeMs` old. A reading that satisfies both is shared; otherwise a new
 * one is requested (joined by whoever asks while it is in flight).
 */
import type { Summaries } from "./rotation.js";

/** One reading of a server's summaries. */
export interface SummariesReading {
  readonly summaries: Summaries;
  /** Taken from {@link nextTicket} when the reading was requested. */
  readonly ticket: number;
  /** When it was requested (`performance.now()` clock of the board). */
  readonly requestedAt: number;
}

export interface ReadingWanted {
  /** Only a reading requested after this ticket will do. */
  after: number;
  /** Nor one requested longer ago than this. */
  maxAgeMs: number;
  /** Stops waiting (the shared call itself goes on for the others). */
  signal?: AbortSignal;
}

export interface SummariesBoard {
  /**
   * A reading of the server `server` (its base URL) that satisfies `want`,
   * shared when one does, else read through `fetch`.
   */
  read(server: string, fetch: () => Promise<Summaries>, want: ReadingWanted): Promise<SummariesReading>;
}

/** A server whose latest reading is older than this, with none in flight, is forgotten. */
const FORGET_AFTER_MS = 60_000;

let tickets = 0;

/** The next ticket of the process-wide counter that orders readings against events. */
export function nextTicket(): number {
  return ++tickets;
}

interface ServerReadings {
  latest: SummariesReading | undefined;
  inFlight: { ticket: number; requestedAt: number; promise: Promise<SummariesReading> } | undefined;
}

export function createSummariesBoard(clock: () => number = () => performance.now()): SummariesBoard {
  const servers = new Map<string, ServerReadings>();
  let sweptAt = 0;
  /** Servers nobody asked about for a while (an agy that exited) are forgotten with their readings. */
  const forgetStale = (now: number) => {
    if (now - sweptAt < FORGET_AFTER_MS) return;
    sweptAt = now;
    for (const [server, readings] of servers) {
      if (readings.inFlight === undefined && (readings.latest === undefined || now - readings.latest.requestedAt > FORGET_AFTER_MS)) servers.delete(server);
    }
  };
  return {
    read(server, fetch, want) {
      forgetStale(clock());
      let readings = servers.get(server);
      if (readings === undefined) {
        readings = { latest: undefined, inFlight: undefined };
        servers.set(server, readings);
      }
      const now = clock();
      const fits = (ticket: number, requestedAt: number) => ticket > want.after && now - requestedAt <= want.maxAgeMs;
      const latest = readings.latest;
      if (latest !== undefined && fits(latest.ticket, latest.requestedAt)) return Promise.resolve(latest);
      const flying = readings.inFlight;
      if (flying !== undefined && fits(flying.ticket, flying.requestedAt)) return abandonable(flying.promise, want.signal);
      const ticket = nextTicket();
      const own = readings;
      const promise = fetch().then((summaries) => {
        const reading: SummariesReading = { summaries, ticket, requestedAt: now };
        if (own.latest === undefined || own.latest.ticket < ticket) own.latest = reading;
        return reading;
      });
      own.inFlight = { ticket, requestedAt: now, promise };
      const settle = () => {
        if (own.inFlight?.ticket === ticket) own.inFlight = undefined;
      };
      promise.then(settle, settle);
      return abandonable(promise, want.signal);
    },
  };
}

/** `promise`, or a rejection as soon as `signal` aborts (the promise itself runs on). */
function abandonable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error as Error);
      },
    );
  });
}

/** The board sessions share unless given their own: one per process. */
export const processBoard: SummariesBoard = createSummariesBoard();
