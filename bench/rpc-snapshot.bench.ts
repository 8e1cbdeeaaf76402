/**
 * Snapshot ingestion, RPC half: a 10,000-step `GetCascadeTrajectorySteps`
 * answer built from agy 1.0.10 captures, from bytes to validated steps.
 * Goal (issue 36, docs/architecture.md): snapshot ingestion — response bytes
 * to events — within 1.3× `JSON.parse` of the same bytes, the median of the
 * rounds' paired ratios (each round times every case once, so a ratio
 * compares runs taken moments apart); the RPC half (decode + validate) is
 * reported on its own too, with its earlier goal of 1.5×.
 *
 * The snapshot (bench/capture-snapshot.ts, 25 MB) repeats the 18 captured
 * steps in turn: 8,333 DONE, 556 ERROR and 1,111 WAITING steps, 4,444 of them
 * settled tool steps and 2,778 planners. That is pessimistic next to a real
 * trajectory: every WAITING step opens an interaction that nothing resolves
 * (1,111 `interaction_requested` events, a real conversation has at most a
 * few open), and most tool steps carry arguments and bodies to re-serialise.
 * The mapper's own time includes collecting the tail of the parse (the last
 * ~16 MB of parsed steps are still in V8's young generation when it starts),
 * which any consumer that allocates pays.
 * The Struct row measures the other shape docs/architecture.md describes (connect-es
 * high-level client with `google.protobuf.Struct` descriptors): JSON into a
 * Struct message and back out to plain values, before the same validation.
 */
import { fromJsonString, toJson } from "@bufbuild/protobuf";
import { StructSchema } from "@bufbuild/protobuf/wkt";
import { createAgyRpcClient } from "../src/rpc/client.js";
import { decodeStepsResponse, utf8, validateBody, validateStepsResponse } from "../src/rpc/response-decoding.js";
import { TrajectoryStepsResponseSchema } from "../src/protocol/wire-schemas.js";
import { createSelfSignedCertificate } from "../src/sim/server/certificate.js";
import { createTrajectoryTracker } from "../src/mapper/index.js";
import { startLoopbackServer } from "../test/support/loopback-server.js";
import { performance } from "node:perf_hooks";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { ratio, runsFor, summarize, type BenchRow, type BenchSuite } from "./harness.js";
import { loadNote, pairedRatio } from "./paired-ratio.js";
import { buildCaptureSnapshot } from "./capture-snapshot.js";

const STEP_COUNT = 10_000;

function buildSnapshot(): Buffer {
  return Buffer.from(buildCaptureSnapshot(STEP_COUNT));
}

// Each timed run starts from a collected heap, so no case pays for the garbage
// the previous one left (23 MB of parsed steps per run).
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

/**
 * Measures every case in the same rounds (one run of each per round), so load
 * from other processes falls on all of them alike.
 */
async function measureInterleaved(cases: ReadonlyArray<() => unknown>, rounds: number, warmup = runsFor(2)): Promise<number[][]> {
  const times = cases.map((): number[] => []);
  for (let round = -warmup; round < rounds; round++) {
    // Rotating the order spreads the garbage-collection debt each case leaves behind.
    for (let k = 0; k < cases.length; k++) {
      const slot = (k + round + warmup) % cases.length;
      const fn = cases[slot];
      if (fn === undefined) continue;
      collectGarbage();
      const start = performance.now();
      await fn();
      if (round >= 0) times[slot]?.push(performance.now() - start);
    }
  }
  return times;
}

const suite: BenchSuite = {
  title: `RPC snapshot ingestion (${STEP_COUNT} steps)`,
  async run() {
    const bytes = buildSnapshot();
    const parsed: unknown = JSON.parse(utf8(bytes));
    const certificate = await createSelfSignedCertificate();
    const transports = [
      { kind: "http1", httpVersion: "1.1", label: "plain, HTTP/1.1" },
      { kind: "tls", httpVersion: "1.1", label: "TLS, HTTP/1.1" },
      { kind: "tls", httpVersion: "2", label: "TLS, HTTP/2" },
    ] as const;
    const endpoints = await Promise.all(
      transports.map(async ({ kind, httpVersion, label }) => {
        const server = await startLoopbackServer({
          kind,
          certificate,
          handler: ({ res }) => {
            res.writeHead(200, { "content-type": "application/json" });
            (res as { end(b: Uint8Array): void }).end(bytes);
          },
        });
        const client = createAgyRpcClient({ baseUrl: server.url, httpVersion, maxFrameBytes: 256 * 1024 * 1024 });
        return { server, client, label };
      }),
    );
    try {
      const cases: Array<[string, () => unknown]> = [
        [`JSON.parse (${(bytes.byteLength / 1024 / 1024).toFixed(1)} MB)`, () => JSON.parse(utf8(bytes))],
        ["client decode + validate (bytes in memory)", () => decodeStepsResponse(bytes)],
        [
          "bytes → events: decode + validate + tracker.applySnapshot",
          () => createTrajectoryTracker({ conversationId: "c-1" }).applySnapshot(decodeStepsResponse(bytes)),
        ],
        ["of which validation alone (body already parsed)", () => validateStepsResponse(parsed)],
        [
          "Struct shape: fromJsonString + toJson + validate",
          () => {
            const struct = fromJsonString(StructSchema, utf8(bytes));
            return validateBody(toJson(StructSchema, struct), TrajectoryStepsResponseSchema, "GetCascadeTrajectorySteps");
          },
        ],
        ...endpoints.map(({ client, label }): [string, () => unknown] => [
          `full round trip over loopback (${label})`,
          () => client.getCascadeTrajectorySteps({ conversationId: "c-1" }),
        ]),
      ];
      const loadBefore = loadNote();
      const times = await measureInterleaved(
        cases.map(([, fn]) => fn),
        runsFor(14),
      );
      const load = `${loadBefore}, after ${loadNote()}`;
      const [baselineCase] = cases;
      const [baselineTimes] = times;
      if (baselineCase === undefined || baselineTimes === undefined) throw new Error("no baseline measured");
      const baseline = { name: baselineCase[0], sample: summarize(baselineTimes) };
      return cases.slice(1).map(([name], i): BenchRow => {
        const caseTimes = times[i + 1] ?? baselineTimes;
        const row: BenchRow = { name, sample: summarize(caseTimes), baseline, pairedRatio: pairedRatio(caseTimes, baselineTimes) };
        // The goal rows: the RPC half alone (1.5x), and the whole ingestion path (1.3x, issue 36).
        if (i > 1) return row;
        const limit = i === 0 ? 1.5 : 1.3;
        const goal = { ...row, name: i === 1 ? `${name}, capture-built (${load})` : name, goal: `<= ${limit}x JSON.parse (median pair)` };
        return { ...goal, met: (ratio(goal) ?? Infinity) <= limit, limit };
      });
    } finally {
      for (const { client, server } of endpoints) {
        await client.close();
        await server.close();
      }
    }
  },
};

export default suite;
