/**
 * Discovery: every agy language server this process can reach, with its
 * listeners, transport, token and conversations, plus the step-by-step
 * account `agy-bridge doctor` prints. The phases are separate files; this
 * one runs them, in parallel wherever they are independent:
 *
 *   processes (`process-scan.ts`) → listeners (`listener-scan.ts`) and
 *   credentials (`credentials.ts`) per process → probes of every listener of
 *   every server at once (`server-probe.ts`) → tmux panes (`pane-lookup.ts`).
 */
import { platform as osPlatform } from "node:os";
import { join } from "node:path";
import type { AgyRpcClient, AgyRpcClientOptions } from "../rpc/client.js";
import { versionOfProcess, isNewerThanProbed, NEWEST_PROBED_AGY, type AgyVersionInfo } from "./agy-version.js";
import { childEnvironment, decideToken, tokenFromArgv, type TokenSighting } from "./credentials.js";
import {
  attributeListeners,
  hostWideListeners,
  listenerOwners,
  lsofListeners,
  MAX_FALLBACK_LISTENERS,
  type Attribution,
  type CandidateListener,
} from "./listener-scan.js";
import { parseLogPorts } from "./log-text.js";
import { listPanes, socketArgs, type TmuxServerRef } from "./pane-lookup.js";
import { parseEnviron, parseStatusUid } from "./proc-text.js";
import { createProcSource, type ProcSource } from "./proc-source.js";
import { agyInSubtree, descendants, scanProcesses, serverKindOf, type AgyProcess, type ProcessScan, type ScanIdentity } from "./process-scan.js";
import { parsePsList } from "./ps-text.js";
import { HINTS, type DiscoveryStep } from "./report.js";
import { spawnCommand, type RunCommand } from "./run-command.js";
import { createAbortFanout } from "./abort-fanout.js";
import { probeThroughCache, processIdentities } from "./cached-probe.js";
import type { DiscoveryCache } from "./discovery-cache.js";
import { clientFactory } from "./rpc-loader.js";
import type { ProbeCandidate } from "./server-probe.js";
import type { DiscoveredServer } from "./types.js";

export interface DiscoverOptions {
  /** Where `/proc` is (default `/proc`); ignored when `proc` is given. */
  procRoot?: string;
  proc?: ProcSource;
  /** Default: this machine's. `darwin` uses `ps` and `lsof` instead of `/proc`. */
  platform?: NodeJS.Platform;
  /** Runs tmux, lsof and ps (argv, never a shell). */
  run?: RunCommand;
  createClient?: (options: AgyRpcClientOptions) => AgyRpcClient;
  /** Look only at these pids (tests, or a caller that knows its agy). */
  pids?: readonly number[];
  /** A token the caller gave: used for every server instead of discovered ones. */
  csrfToken?: string;
  /** Per TLS handshake; default 1000 ms. */
  handshakeTimeoutMs?: number;
  /** Per probe RPC; default 2000 ms (the reference client's probe deadline, spike-notes §1.4). */
  rpcTimeoutMs?: number;
  /** Per tmux / lsof / ps run; default 5000 ms (spike-notes §1.4). */
  commandTimeoutMs?: number;
  /** tmux servers whose panes are matched to servers; default the default server only; `[]` skips tmux. */
  tmuxServers?: readonly TmuxServerRef[];
  /** agy's log; default `<agy's HOME>/.gemini/antigravity-cli/cli.log` (spike-notes §10.2); false skips it. */
  logPath?: string | false;
  signal?: AbortSignal;
  /**
   * What earlier discoveries learned of the same processes (`discovery-cache.ts`):
   * a process whose identity is unchanged is asked for its conversations on
   * the listener that answered before, without handshakes or Heartbeat.
   * Default none. `doctor` passes none: it explains a full pass.
   */
  cache?: DiscoveryCache;
}

export interface DiscoveryResult {
  servers: DiscoveredServer[];
  /** What each step found, in order, for `doctor`. */
  steps: DiscoveryStep[];
  /** Every visible pid's parent (for pane → agy walks). */
  parents: ReadonlyMap<number, number>;
}

interface Gathered {
  process: AgyProcess;
  attribution: Attribution;
  /** The uid agy's sockets belong to (`/proc/<pid>/status`), when readable. */
  uid?: number;
  candidates: CandidateListener[];
  sightings: TokenSighting[];
  version?: string;
  /** What the process says of its version (agy-version.ts) and whether it is agy-bridge's simulator. */
  agyVersion: AgyVersionInfo & { simulator: boolean };
  steps: DiscoveryStep[];
}

const LOG_TAIL_BYTES = 256 * 1024;
const MAX_CHILDREN_READ = 64;

/** Finds every server; never throws for what it could not see (that goes into `steps`). */
export async function discoverServers(options: DiscoverOptions = {}): Promise<DiscoveryResult> {
  const proc = options.proc ?? createProcSource(options.procRoot ?? "/proc");
  const platform = options.platform ?? osPlatform();
  const run = options.run ?? spawnCommand;
  const commandTimeoutMs = options.commandTimeoutMs ?? 5_000;
  const steps: DiscoveryStep[] = [];

  // The cache needs each process's stat identity, which the scan reads anyway.
  const scanned = options.cache === undefined || platform === "darwin" ? undefined : new Map<number, ScanIdentity>();
  const scan =
    platform === "darwin"
      ? await scanWithPs(run, options.pids, commandTimeoutMs)
      : await scanProcesses(proc, { ...(options.pids === undefined ? {} : { pids: options.pids }), ...(scanned === undefined ? {} : { identities: scanned }) });
  steps.push(...processSteps(scan, proc.root, platform));

  const gathered = await Promise.all(scan.processes.map((p) => gather(p, scan, proc, platform, run, commandTimeoutMs, options)));
  await addFallbacks(gathered, proc, steps);
  const probeCandidates = gathered.map(vetCandidates);

  // Nothing to probe, nothing to load: the RPC stack is loaded only for a listener to ask.
  const createClient = probeCandidates.some((c) => c.length > 0) ? await clientFactory(options.createClient) : unusedClient;
  const abort = createAbortFanout(options.signal);
  const settings = {
    createClient,
    handshakeTimeoutMs: options.handshakeTimeoutMs ?? 1_000,
    rpcTimeoutMs: options.rpcTimeoutMs ?? 2_000,
    signal: () => abort.child(),
  };
  const tmuxServers = options.tmuxServers ?? [{}];
  const decisions = gathered.map((g) => tokenOf(g, options.csrfToken));
  const cache = options.cache;
  const identities = cache === undefined || scanned === undefined ? new Map() : await processIdentities(proc, scanned);
  const context = (pid: number) => (cache === undefined ? undefined : { cache, identity: identities.get(pid) });
  const [probes, panes] = await Promise.all([
    Promise.all(gathered.map((g, i) => probeThroughCache(g.process.pid, probeCandidates[i] ?? [], decisions[i]?.token, settings, context(g.process.pid)))),
    Promise.all(tmuxServers.map((server) => listPanes(run, server, commandTimeoutMs).then((list) => ({ server, list })))),
  ]).finally(() => abort.close());
  if (cache !== undefined) {
    // A whole scan says which processes are gone; one narrowed to some pids says nothing of the rest.
    if (options.pids === undefined && scan.failure === undefined) await cache.keepOnly([...identities.values()]);
    await cache.flush();
  }

  const agyPids = new Set(scan.processes.map((p) => p.pid));
  const paneOf = new Map<number, string>();
  for (const { list } of panes) {
    for (const pane of list) {
      const pid = agyInSubtree(scan.parents, pane.pid, agyPids);
      if (pid !== undefined && !paneOf.has(pid)) paneOf.set(pid, pane.paneId);
    }
  }
  const paneCount = panes.reduce((n, p) => n + p.list.length, 0);
  if (tmuxServers.length > 0) {
    steps.push({
      step: "tmux",
      status: "info",
      detail: `${paneCount} tmux pane${paneCount === 1 ? "" : "s"} on ${tmuxServers.map((s) => socketArgs(s).join(" ") || "the default server").join(", ")}; ${paneOf.size} ${paneOf.size === 1 ? "holds" : "hold"} an agy`,
    });
  }

  const servers = gathered.map((g, i) => {
    const probe = probes[i] as (typeof probes)[number];
    const decision = decisions[i] as (typeof decisions)[number];
    steps.push(...g.steps, decision.step, ...probe.steps);
    const server: DiscoveredServer = {
      pid: g.process.pid,
      executable: g.process.executable,
      kind: g.process.kind,
      // Guessed (fallback) listeners that are not agy's say nothing about this server.
      listeners: probe.listeners.filter((l) => l.source !== "fallback" || l.heartbeatOk || l.httpStatus === 401),
      csrfTokenPresent: decision.token !== undefined,
      conversations: probe.conversations,
    };
    if (g.version !== undefined) server.version = g.version;
    if (g.agyVersion.agyVersion !== null) server.agyVersion = g.agyVersion.agyVersion;
    if (g.agyVersion.agyVersionSource !== null) server.agyVersionSource = g.agyVersion.agyVersionSource;
    if (g.agyVersion.simulator) server.simulator = true;
    if (probe.url !== undefined) server.url = probe.url;
    // The binding carries the token only to a listener that was proven to be agy's and took it.
    if (decision.token !== undefined && probe.urlTokenSent === true) server.csrfToken = decision.token;
    if (decision.sources.length > 0) server.csrfTokenSources = decision.sources;
    const pane = paneOf.get(g.process.pid);
    if (pane !== undefined) server.tmuxPane = pane;
    return server;
  });
  return { servers, steps, parents: scan.parents };
}

/** Stands in for the client factory when no listener is probed; never called. */
function unusedClient(): AgyRpcClient {
  throw new Error("discovery: no listener to probe, so no RPC client was loaded");
}

/** What `doctor` says of a process's version, and of a simulator. Never started agy to learn it. */
function versionStep(pid: number, found: AgyVersionInfo & { simulator: boolean }): DiscoveryStep {
  const sim = found.simulator ? `; it is agy-bridge's simulator (agy-bridge sim --as-agy), not a real agy` : "";
  if (found.agyVersion === null) {
    return {
      step: "version",
      status: "info",
      pid,
      detail: `pid ${pid}: agy's version is unknown (its children's environment names none, and agy is never started to ask it)${sim}`,
    };
  }
  const detail = `pid ${pid}: agy ${found.agyVersion} (from ${found.agyVersionDetail ?? "its process"})${sim}`;
  if (!isNewerThanProbed(found.agyVersion)) return { step: "version", status: "info", pid, detail };
  return {
    step: "version",
    status: "warn",
    pid,
    detail: `${detail}, newer than probed: agy-bridge's facts describe agy up to ${NEWEST_PROBED_AGY}`,
    hint: "Run `agy-bridge doctor --report --pane TARGET` and attach it to a bug report; until agy-bridge knows this version it presses only the keys that are safe on every version.",
  };
}

function processSteps(scan: ProcessScan, root: string, platform: NodeJS.Platform): DiscoveryStep[] {
  const steps: DiscoveryStep[] = [];
  const where = platform === "darwin" ? "ps" : root;
  if (scan.failure !== undefined) {
    steps.push({ step: "processes", status: "fail", detail: `${where} could not be read (${scan.failure})`, hint: HINTS.noProcess });
  } else if (scan.processes.length === 0) {
    steps.push({ step: "processes", status: "fail", detail: `no agy or language_server process found in ${where}`, hint: HINTS.noProcess });
  } else {
    const list = scan.processes.map((p) => `pid ${p.pid} (${p.executable})`).join(", ");
    steps.push({ step: "processes", status: "ok", detail: `found ${scan.processes.length} agy process${scan.processes.length === 1 ? "" : "es"}: ${list}` });
  }
  if (scan.otherNamespace.length > 0) {
    steps.push({
      step: "processes",
      status: "warn",
      detail: `agy pid${scan.otherNamespace.length === 1 ? "" : "s"} ${scan.otherNamespace.join(", ")} run${scan.otherNamespace.length === 1 ? "s" : ""} in another network namespace, so their listeners are unreachable from here`,
      hint: HINTS.otherNetns,
    });
  }
  return steps;
}

async function gather(
  p: AgyProcess,
  scan: ProcessScan,
  proc: ProcSource,
  platform: NodeJS.Platform,
  run: RunCommand,
  timeoutMs: number,
  options: DiscoverOptions,
): Promise<Gathered> {
  const pid = p.pid;
  const steps: DiscoveryStep[] = [];
  const attribution = platform === "darwin" ? await lsofListeners(run, pid, timeoutMs) : await attributeListeners(proc, pid);
  const sightings: TokenSighting[] = [];
  const argvToken = tokenFromArgv(p.argv);
  if (argvToken !== undefined) sightings.push({ where: "its first argument --csrf_token", token: argvToken });

  let version: string | undefined;
  let envPort: number | undefined;
  const children = descendants(scan.parents, pid, 4, MAX_CHILDREN_READ);
  const environs =
    platform === "darwin" ? [] : await Promise.all(children.map(async (child) => ({ child, env: await proc.read(`${child}/environ`, 256 * 1024) })));
  const childEnvs: Array<{ pid: number; env: Map<string, string> }> = [];
  for (const { child, env } of environs) {
    if (!env.ok) continue;
    const parsed = parseEnviron(env.value);
    childEnvs.push({ pid: child, env: parsed });
    const found = childEnvironment(parsed);
    if (found.token !== undefined) sightings.push({ where: `the environment of its child pid ${child}`, token: found.token });
    version ??= found.version;
    envPort ??= found.lsPort;
  }

  const candidates = [...attribution.listeners];
  const status = platform === "darwin" ? undefined : await proc.read(`${pid}/status`, 64 * 1024);
  const uid = status?.ok === true ? parseStatusUid(status.value) : undefined;
  if (attribution.attributed) {
    steps.push(
      attribution.listeners.length > 0
        ? {
            step: "listeners",
            status: "ok",
            pid,
            detail: `pid ${pid} holds loopback listener${attribution.listeners.length === 1 ? "" : "s"} on port${attribution.listeners.length === 1 ? "" : "s"} ${attribution.listeners.map((l) => l.port).join(", ")} (${platform === "darwin" ? "lsof" : "its fds matched to net/tcp"})`,
          }
        : { step: "listeners", status: "warn", pid, detail: `pid ${pid} holds no loopback listener yet`, hint: HINTS.noListener },
    );
  } else {
    steps.push({
      step: "listeners",
      status: "warn",
      pid,
      detail: `the listeners of pid ${pid} cannot be attributed (${platform === "darwin" ? "lsof" : "its fds are unreadable"}: ${attribution.failure ?? "unknown"})`,
      hint: HINTS.fdsUnreadable,
    });
    const leads: CandidateListener[] = [];
    if (envPort !== undefined) leads.push({ host: "127.0.0.1", port: envPort, source: "environ" });
    for (const port of await logPorts(proc, pid, options.logPath)) {
      if (!leads.some((c) => c.port === port)) leads.push({ host: "127.0.0.1", port, source: "log" });
    }
    const owners = leads.length === 0 ? new Map<number, number>() : await listenerOwners(proc);
    for (const lead of leads) {
      const owner = owners.get(lead.port);
      if (owner !== undefined) lead.uid = owner;
      // A socket of another user is not agy's, whatever agy's log or environment once said.
      if (owner !== undefined && uid !== undefined && owner !== uid) {
        steps.push({
          step: "listeners",
          status: "warn",
          pid,
          port: lead.port,
          detail: `port ${lead.port} (from agy's ${lead.source === "log" ? "log" : "environment"}) belongs to uid ${owner}, not to uid ${uid} that pid ${pid} runs as, so it is not probed`,
        });
        continue;
      }
      candidates.push(lead);
    }
  }
  const own = platform === "darwin" ? undefined : await proc.read(`${pid}/environ`, 256 * 1024);
  const agyVersion = versionOfProcess({ ...(own?.ok === true ? { ownEnv: parseEnviron(own.value) } : {}), childEnvs, executable: p.executable });
  steps.push(versionStep(pid, agyVersion));
  const gathered: Gathered = { process: p, attribution, candidates, sightings, agyVersion, steps };
  if (uid !== undefined) gathered.uid = uid;
  if (version !== undefined) gathered.version = version;
  return gathered;
}

/** Processes whose listeners could not be attributed and have no other lead get the bounded host-wide table. */
async function addFallbacks(gathered: Gathered[], proc: ProcSource, steps: DiscoveryStep[]): Promise<void> {
  const blind = gathered.filter((g) => !g.attribution.attributed && g.candidates.length === 0);
  if (blind.length === 0) return;
  const owned = new Set(gathered.flatMap((g) => g.attribution.listeners.map((l) => l.port)));
  let none = false;
  for (const g of blind) {
    const { listeners, total } = await hostWideListeners(proc, owned, g.uid);
    none ||= listeners.length === 0;
    g.candidates.push(...listeners);
    const whose = g.uid === undefined ? "" : ` owned by uid ${g.uid} (pid ${g.process.pid}'s user)`;
    g.steps.push({
      step: "listeners",
      status: "warn",
      pid: g.process.pid,
      detail:
        `guessing: probing ${listeners.length} of ${total} loopback listener${total === 1 ? "" : "s"}${whose} from the host-wide table for pid ${g.process.pid}` +
        (total > MAX_FALLBACK_LISTENERS ? ` (bounded to the lowest ${MAX_FALLBACK_LISTENERS})` : "") +
        (g.uid === undefined
          ? "; its user is unknown, so none of them is sent the CSRF token"
          : "; each is asked without the CSRF token first, and gets it only if it refuses that with 401 as agy does"),
      hint: HINTS.fdsUnreadable,
    });
  }
  if (none) steps.push({ step: "listeners", status: "fail", detail: "the host-wide table has no loopback listener to try", hint: HINTS.noListener });
}

/** Each candidate with how far it is proven to be the process's own (which decides who gets the token). */
function vetCandidates(g: Gathered): ProbeCandidate[] {
  return g.candidates.map((c) => {
    if (c.source === "fd" || c.source === "lsof") return { ...c, trust: "own" };
    if (c.uid !== undefined && g.uid !== undefined && c.uid === g.uid) {
      return { ...c, trust: "same_user", trustDetail: `owned by uid ${c.uid}, the user of pid ${g.process.pid}, but not among its fds` };
    }
    const trustDetail =
      c.uid === undefined
        ? "no socket in the host-wide table says who owns it"
        : g.uid === undefined
          ? `owned by uid ${c.uid}; pid ${g.process.pid}'s user is unknown`
          : `owned by uid ${c.uid}, not pid ${g.process.pid}'s uid ${g.uid}`;
    return { ...c, trust: "guess", trustDetail };
  });
}

async function logPorts(proc: ProcSource, pid: number, logPath: string | false | undefined): Promise<number[]> {
  if (logPath === false) return [];
  let path = logPath;
  if (path === undefined) {
    const env = await proc.read(`${pid}/environ`, 256 * 1024);
    const home = env.ok ? parseEnviron(env.value).get("HOME") : undefined;
    if (home === undefined || home === "") return [];
    path = join(home, ".gemini", "antigravity-cli", "cli.log");
  }
  const text = await proc.readTail(path, LOG_TAIL_BYTES);
  if (!text.ok) return [];
  const ports = parseLogPorts(text.value);
  return [ports.https, ports.http].filter((p): p is number => p !== undefined);
}

function tokenOf(g: Gathered, given: string | undefined): { token?: string; sources: string[]; step: DiscoveryStep } {
  const pid = g.process.pid;
  if (given !== undefined)
    return {
      token: given,
      sources: ["given by the caller"],
      step: { step: "credentials", status: "ok", pid, detail: `pid ${pid}: using the CSRF token given by the caller` },
    };
  const decision = decideToken(g.sightings);
  if (decision.kind === "conflict") {
    return { sources: [], step: { step: "credentials", status: "fail", pid, detail: `pid ${pid}: ${decision.reason}`, hint: HINTS.tokenConflict } };
  }
  if (decision.kind === "none") {
    return { sources: [], step: { step: "credentials", status: "info", pid, detail: `pid ${pid}: no CSRF token found (older agy builds need none)` } };
  }
  return {
    token: decision.token,
    sources: decision.where,
    step: { step: "credentials", status: "ok", pid, detail: `pid ${pid}: CSRF token found in ${decision.where.join(" and ")}` },
  };
}

async function scanWithPs(run: RunCommand, pids: readonly number[] | undefined, timeoutMs: number): Promise<ProcessScan> {
  const result = await run("ps", ["-axo", "pid=,ppid=,comm="], { timeoutMs });
  if (result.code !== 0) return { processes: [], otherNamespace: [], parents: new Map(), failure: result.failure ?? `ps exited ${result.code}` };
  const entries = parsePsList(result.stdout);
  const parents = new Map(entries.map((e) => [e.pid, e.ppid] as const));
  const processes: AgyProcess[] = [];
  for (const e of entries) {
    const kind = serverKindOf(e.command);
    if (kind === undefined || (pids !== undefined && !pids.includes(e.pid))) continue;
    // comm holds no arguments, so a macOS token comes only from --csrf-token.
    processes.push({ pid: e.pid, ppid: e.ppid, kind, executable: e.command, argv: [e.command] });
  }
  return { processes, otherNamespace: [], parents };
}
