// The watchdog of one test run (test/support/run-world.ts starts it, one per
// run): it outlives the runner on purpose and, when the runner's pipe on its
// stdin closes — the run ended, or the runner was killed (Ctrl-C, a CI
// timeout, SIGKILL) — ends every world the run started, so no test's tmux
// server or simulator is left for discovery to list as an agy session:
//
// 1. every private tmux server the run registered (kill-server, then its
//    socket file removed);
// 2. every process that carries the run's mark in the environment it was
//    started with (AGY_BRIDGE_TEST_RUN=<id>, inherited by everything a test
//    starts unless it replaces the environment whole);
// 3. every process it saw descend from the runner (sampled twice a second),
//    for children started with an environment of their own.
//
// The run's vitest workers go too (a worker outlives a killed runner and
// would go on starting worlds), first, and the scan is repeated until it
// finds nothing new, for worlds that were being started meanwhile. Nothing
// of another run is touched, nor the runner itself.
// SIGTERM first; SIGKILL for what is still there 2 s later. Plain JavaScript
// run by node itself, so it needs no loader to do its one job. Linux reads
// /proc; elsewhere only the tmux servers are ended.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";

const [runId, runDir, runnerPidText] = process.argv.slice(2);
const runnerPid = Number(runnerPidText);
const mark = `AGY_BRIDGE_TEST_RUN=${runId}`;
/** pid → start time (field 22 of /proc/PID/stat), so a reused pid is never killed. */
const seen = new Map();

function procs() {
  try {
    return readdirSync("/proc").filter((name) => /^[0-9]+$/.test(name)).map(Number);
  } catch {
    return [];
  }
}

function stat(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { ppid: Number(fields[1]), start: fields[19] };
  } catch {
    return undefined;
  }
}

function read(pid, file) {
  try {
    return readFileSync(`/proc/${pid}/${file}`, "utf8");
  } catch {
    return "";
  }
}

function sample() {
  const children = new Map();
  for (const pid of procs()) {
    const s = stat(pid);
    if (s === undefined) continue;
    if (!children.has(s.ppid)) children.set(s.ppid, []);
    children.get(s.ppid).push({ pid, start: s.start });
  }
  const queue = [runnerPid];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()) ?? []) {
      if (child.pid === process.pid || seen.has(child.pid)) continue;
      seen.set(child.pid, child.start);
      queue.push(child.pid);
    }
  }
}

function targets() {
  const out = new Set();
  for (const pid of procs()) {
    if (pid === process.pid || pid === runnerPid) continue;
    const s = stat(pid);
    if (s === undefined) continue;
    const marked = read(pid, "environ").split("\0").includes(mark);
    const descended = seen.get(pid) === s.start;
    if (marked || descended) out.add(pid);
  }
  return out;
}

function signal(pids, name) {
  for (const pid of pids) {
    try {
      process.kill(pid, name);
    } catch {
      // Gone already.
    }
  }
}

function alive(pids) {
  return [...pids].filter((pid) => {
    try {
      process.kill(pid, 0);
      return stat(pid) !== undefined && !read(pid, "stat").includes(") Z ");
    } catch {
      return false;
    }
  });
}

const killedSockets = new Set();

function killTmuxServers() {
  let sockets = [];
  try {
    sockets = readFileSync(join(runDir, "tmux-sockets"), "utf8").split("\n").filter((line) => line !== "");
  } catch {
    // No tmux server was started.
  }
  for (const socket of sockets) {
    if (killedSockets.has(socket)) continue;
    killedSockets.add(socket);
    spawnSync("tmux", ["-S", socket, "kill-server"], { stdio: "ignore", timeout: 5_000 });
    rmSync(socket, { force: true });
  }
}

/** One round: the run's vitest workers first (they start worlds), then registered tmux servers, then every marked or descended process. */
function round(left, done) {
  sample();
  const pids = targets();
  const workers = [...pids].filter((pid) => /vitest/.test(read(pid, "cmdline")));
  signal(workers, "SIGKILL");
  killTmuxServers();
  signal(pids, "SIGTERM");
  const deadline = Date.now() + 2_000;
  const wait = () => {
    const alivePids = alive(pids);
    if (alivePids.length > 0 && Date.now() < deadline) return void setTimeout(wait, 50);
    signal(alivePids, "SIGKILL");
    // Worlds being started as the run ended show up now: go again, a bounded number of times.
    if (left > 0 && targets().size > 0) return void setTimeout(() => round(left - 1, done), 100);
    done();
  };
  wait();
}

function endRun() {
  clearInterval(sampler);
  round(5, () => {
    killTmuxServers();
    rmSync(runDir, { recursive: true, force: true });
    process.exit(0);
  });
}

const sampler = setInterval(sample, 500);
sample();
process.stdin.on("data", () => undefined);
process.stdin.on("end", endRun);
process.stdin.on("error", endRun);
// The runner's "ready" line: it waits for this before tests start.
process.stdout.write("watching\n");
