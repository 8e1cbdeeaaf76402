/**
 * What `doctor --report` asks a live agy: only calls that change nothing (no
 * turn, no answer, no cancel, no new cascade). Each probe's outcome is kept
 * as data — an answer, or the HTTP status and message of a failure — for the
 * fact checks (`compat-facts.ts`) to judge. Never holds a token in what it
 * returns.
 */
import { RpcError, AgyBridgeError } from "../errors.js";
import type { AgyRpcClient } from "../rpc/client.js";
import type { ScreenModel } from "../tmux/screen-types.js";
import type { CaptureListener } from "./capture-format.js";

/** One call's outcome: the answer, or how it failed. */
export type Probe<T> = { ok: true; value: T; ms: number } | { ok: false; status?: number; message: string };

export interface Observations {
  agyVersion: string | null;
  /** Where the version came from (`process`, `screen`), null when unknown. */
  agyVersionSource?: "process" | "server" | "screen" | null;
  /** The agy is agy-bridge's simulator. */
  simulator?: boolean;
  /** How a person names the pane in a command (`%3 -L work`), when one is known. */
  paneLabel?: string;
  /** tmux's `#{pane_current_command}` for the pane (a read), when one is known. */
  paneCommand?: Probe<string>;
  listeners: CaptureListener[];
  /** Whether the URL probed is plain or TLS. */
  transport: "tls" | "plain";
  conversationId: string | null;
  heartbeat: Probe<void>;
  /** Heartbeat without the CSRF header (undefined when no token was in use: the plain Heartbeat already went without one). */
  heartbeatWithoutToken?: Probe<void>;
  tokenInUse: boolean;
  metadata?: Probe<unknown>;
  steps?: Probe<unknown[]>;
  /** Steps from `stepOffset` = last index (when there are at least two steps). */
  stepsFromOffset?: Probe<unknown[]> & { offset?: number };
  trajectory?: Probe<unknown>;
  summaries: Probe<unknown>;
  models: Probe<unknown>;
  /** The stream's first frame (the update inside `{"update":…}`), within the bound. */
  firstFrame?: Probe<unknown>;
  screen?: Probe<ScreenModel>;
}

export interface ProbeOptions {
  client: AgyRpcClient;
  /** A client without the CSRF header, to learn whether agy wants one; undefined when no token is in use. */
  clientWithoutToken?: AgyRpcClient | undefined;
  url: string;
  agyVersion: string | null;
  agyVersionSource?: Observations["agyVersionSource"];
  simulator?: boolean;
  paneLabel?: string | undefined;
  listeners: CaptureListener[];
  conversationId?: string | undefined;
  readScreen?: (() => Promise<ScreenModel>) | undefined;
  /** tmux's `display-message -p '#{pane_current_command}'`: a read, never a key. */
  readPaneCommand?: (() => Promise<string>) | undefined;
  /** Bound on waiting for the stream's first frame; default 3000 ms. */
  firstFrameMs?: number;
  now?: () => number;
}

export async function probeAgy(options: ProbeOptions): Promise<Observations> {
  const now = options.now ?? Date.now;
  const call = async <T>(work: () => Promise<T>): Promise<Probe<T>> => {
    const start = now();
    try {
      const value = await work();
      return { ok: true, value, ms: now() - start };
    } catch (error) {
      return failure(error);
    }
  };
  const { client } = options;
  const id = options.conversationId;
  const obs: Observations = {
    agyVersion: options.agyVersion,
    ...(options.agyVersionSource === undefined ? {} : { agyVersionSource: options.agyVersionSource }),
    ...(options.simulator === undefined ? {} : { simulator: options.simulator }),
    ...(options.paneLabel === undefined ? {} : { paneLabel: options.paneLabel }),
    listeners: options.listeners,
    transport: new URL(options.url).protocol === "https:" ? "tls" : "plain",
    conversationId: id ?? null,
    tokenInUse: options.clientWithoutToken !== undefined,
    heartbeat: await call(() => client.heartbeat({})),
    summaries: await call(() => client.getAllCascadeTrajectories({})),
    models: await call(() => client.getAvailableModels({})),
  };
  if (options.clientWithoutToken !== undefined) {
    const bare = options.clientWithoutToken;
    obs.heartbeatWithoutToken = await call(() => bare.heartbeat({}));
  }
  if (id !== undefined) {
    obs.metadata = await call(() => client.getConversationMetadata({ conversationId: id }));
    obs.steps = await call(async () => (await client.getCascadeTrajectorySteps({ conversationId: id })).steps);
    obs.trajectory = await call(() => client.getCascadeTrajectory({ conversationId: id }));
    const count = obs.steps.ok ? obs.steps.value.length : 0;
    if (count >= 2) {
      const offset = count - 1;
      obs.stepsFromOffset = { ...(await call(async () => (await client.getCascadeTrajectorySteps({ conversationId: id, stepOffset: offset })).steps)), offset };
    }
    obs.firstFrame = await call(() => firstFrame(client, id, options.firstFrameMs ?? 3_000));
  }
  if (options.readScreen !== undefined) obs.screen = await call(options.readScreen);
  if (options.readPaneCommand !== undefined) obs.paneCommand = await call(options.readPaneCommand);
  return obs;
}

/** The first data frame of a fresh subscription, then the stream is closed. */
async function firstFrame(client: AgyRpcClient, conversationId: string, boundMs: number): Promise<unknown> {
  const signal = AbortSignal.timeout(boundMs);
  try {
    for await (const update of client.streamAgentStateUpdates({ conversationId }, { signal, timeoutMs: 0 })) return update;
  } catch (error) {
    if (signal.aborted) throw new AgyBridgeError("timeout", `no frame within ${boundMs} ms`);
    throw error;
  }
  throw new AgyBridgeError("protocol", "the stream ended without a data frame");
}

function failure(error: unknown): { ok: false; status?: number; message: string } {
  if (error instanceof RpcError) {
    return { ok: false, ...(error.httpStatus === undefined ? {} : { status: error.httpStatus }), message: error.serverMessage ?? error.message };
  }
  return { ok: false, message: AgyBridgeError.from(error).message };
}
