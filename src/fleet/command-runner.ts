/**
 * Takes commands from `agy:commands:<host>` through the consumer group
 * `agy-relay` and answers each in `agy:results:<host>`.
 *
 * Exactly one execution per command, as far as a crash allows:
 * - the result entry and the `XACK` are one script, so a command is never
 *   acknowledged without its result, nor has a result and stays pending;
 * - a relay that dies between reading and that MULTI leaves the command
 *   pending; any relay of the host claims it with `XAUTOCLAIM` once it has
 *   been idle `claimIdleMs`, and runs it again. Answers are idempotent in the
 *   session (`already_resolved`); a turn whose typing may have started is not
 *   typed again (the executor is told `retry`);
 * - a `requestId` is bound to the first entry that carried it (`SET NX`), so
 *   a caller that sends the same request twice gets `duplicate`, not a second
 *   execution.
 */
import type { Redis } from "ioredis";
import { fieldMap, parseCommand, type FleetCommand } from "./fleet-command.js";
import { COMMAND_GROUP, commandsStream, requestKey, resultsStream } from "./stream-names.js";

/** A result as the CLI's `--json` prints it for the same action, plus `reason` where there is one. */
export type CommandResult = Record<string, unknown> & { result: string };

export interface CommandRunnerOptions {
  redis: Redis;
  /** A connection of its own for the blocking `XREADGROUP` (closed by `stop`). */
  reader: Redis;
  host: string;
  /** The consumer name in the group: this relay instance's id. */
  consumer: string;
  /** Idle time after which a pending command of any consumer is claimed (ms). */
  claimIdleMs: number;
  /** How long one `XREADGROUP` blocks (ms); default 1000. */
  blockMs?: number;
  /** Approximate length of the results stream; default 10,000. */
  resultsMaxLen?: number;
  /** How long a requestId stays bound to its command (s); default 7 days. */
  requestTtlSeconds?: number;
  /** `retry`: this command was taken before (by this or another relay) and may have run. */
  execute(command: FleetCommand, context: { retry: boolean; commandId: string }): Promise<CommandResult>;
  now?: () => Date;
  onProblem?: (message: string) => void;
  /** After a command's result is written and acknowledged (for tests and logs). */
  onResult?: (commandId: string, result: CommandResult) => void;
}

export interface CommandRunner {
  /** Creates the group if needed and starts taking commands. */
  start(): Promise<void>;
  /** Stops taking commands; one in flight is finished first. */
  stop(): Promise<void>;
}

type Entry = [id: string, fields: string[] | null];

/**
 * The result entry, then the acknowledgement, in one script: Redis runs it
 * without interleaving, and a failed XADD (an error raised by `redis.call`)
 * stops it before the XACK — a MULTI would acknowledge anyway.
 */
const FINISH = `
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'requestId', ARGV[4], 'commandId', ARGV[3], 'result', ARGV[5], 'time', ARGV[6])
return redis.call('XACK', KEYS[2], ARGV[2], ARGV[3])
`;

export function createCommandRunner(options: CommandRunnerOptions): CommandRunner {
  const { redis, reader, host, consumer, claimIdleMs } = options;
  const key = commandsStream(host);
  const now = options.now ?? (() => new Date());
  const blockMs = options.blockMs ?? 1000;
  let stopped = false;
  let loop: Promise<void> | undefined;

  const finish = async (commandId: string, requestId: string, result: CommandResult): Promise<void> => {
    for (let attempt = 0; ; attempt++) {
      try {
        await redis.eval(
          FINISH,
          2,
          resultsStream(host),
          key,
          options.resultsMaxLen ?? 10_000,
          COMMAND_GROUP,
          commandId,
          requestId,
          JSON.stringify(result),
          now().toISOString(),
        );
        options.onResult?.(commandId, result);
        return;
      } catch (error) {
        // Left pending: this relay or another claims it after claimIdleMs, and the retry is safe.
        if (stopped || attempt >= 5) {
          options.onProblem?.(
            `the result of command ${commandId} could not be written (${(error as Error).message}); it stays pending and will be claimed again`,
          );
          return;
        }
        await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
      }
    }
  };

  const handle = async (commandId: string, flat: string[] | null, claimed: boolean): Promise<void> => {
    if (flat === null) {
      // Trimmed from the stream while pending: nothing left to run.
      await redis.xack(key, COMMAND_GROUP, commandId);
      return;
    }
    const parsed = parseCommand(fieldMap(flat));
    if (!parsed.ok) {
      await finish(commandId, parsed.requestId, { result: "rejected", reason: parsed.reason });
      return;
    }
    const { command } = parsed;
    const marker = requestKey(host, command.requestId);
    const fresh = await redis.set(marker, commandId, "EX", options.requestTtlSeconds ?? 7 * 24 * 3600, "NX");
    let retry = false;
    if (fresh === null) {
      const owner = await redis.get(marker);
      if (owner !== commandId) {
        await finish(commandId, command.requestId, {
          result: "duplicate",
          reason: `request ${command.requestId} was already taken as command ${owner ?? "(expired)"}; its result is in ${resultsStream(host)} — give each command a new requestId`,
          ...(owner === null ? {} : { firstCommandId: owner }),
        });
        return;
      }
      retry = true;
    }
    let result: CommandResult;
    try {
      result = await options.execute(command, { retry, commandId });
    } catch (error) {
      result = { result: "failed", reason: `the relay could not run the command: ${(error as Error).message}` };
    }
    if (claimed || retry) result = { ...result, claimed: true };
    await finish(commandId, command.requestId, result);
  };

  const claimPending = async (): Promise<void> => {
    let cursor = "0-0";
    do {
      const reply = (await redis.xautoclaim(key, COMMAND_GROUP, consumer, claimIdleMs, cursor, "COUNT", 20)) as [string, Entry[], string[]?];
      cursor = reply[0];
      for (const [id, fields] of reply[1]) {
        if (stopped) return;
        await handle(id, fields, true);
      }
      // Redis 7 lists entries deleted while pending separately: acknowledge them.
      for (const id of reply[2] ?? []) await redis.xack(key, COMMAND_GROUP, id);
    } while (cursor !== "0-0" && !stopped);
  };

  const run = async (): Promise<void> => {
    let lastClaim = -Infinity;
    let failures = 0;
    while (!stopped) {
      try {
        if (Date.now() - lastClaim >= Math.max(50, claimIdleMs / 2)) {
          lastClaim = Date.now();
          await claimPending();
        }
        const block = Math.max(10, Math.min(blockMs, claimIdleMs / 2));
        const reply = (await reader.xreadgroup("GROUP", COMMAND_GROUP, consumer, "COUNT", 10, "BLOCK", block, "STREAMS", key, ">")) as
          | [string, Entry[]][]
          | null;
        for (const [, entries] of reply ?? []) {
          for (const [id, fields] of entries) {
            if (stopped) return;
            await handle(id, fields, false);
          }
        }
        failures = 0;
      } catch (error) {
        if (stopped) return;
        const message = (error as Error).message;
        // The stream or its group was deleted under us: make them again.
        if (/NOGROUP/.test(message)) await ensureGroup().catch(() => undefined);
        else options.onProblem?.(`reading commands failed (${message}); retrying`);
        failures++;
        await new Promise((r) => setTimeout(r, Math.min(2000, 50 * 2 ** Math.min(failures, 6))));
      }
    }
  };

  const ensureGroup = async (): Promise<void> => {
    try {
      // From 0: commands written before any relay of this host started are taken too.
      await redis.xgroup("CREATE", key, COMMAND_GROUP, "0", "MKSTREAM");
    } catch (error) {
      if (!/BUSYGROUP/.test((error as Error).message)) throw error;
    }
  };

  return {
    async start() {
      await ensureGroup();
      loop = run();
    },
    async stop() {
      stopped = true;
      // Ends a blocking read at once; a command being handled finishes on `redis`.
      reader.disconnect();
      await loop;
    },
  };
}
