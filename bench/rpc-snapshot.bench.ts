/**
 * Snapshot ingestion, RPC half: a 10,000-step `GetCascadeTrajectorySteps`
 * answer built from agy 1.0.10 captures, from bytes to validated steps.
 * Goal (design.md): decode + validate ≤ 1.5× `JSON.parse` of the same bytes.
 * The Struct row measures the other shape design.md describes (connect-es
 * high-level client with `google.protobuf.Struct` descriptors): JSON into a
 * Struct message and back out to plain values, before the same validation.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { fromJsonString, toJson } from "@bufbuild/protobuf";
import { StructSchema } from "@bufbuild/protobuf/wkt";
import { createAgyRpcClient } from "../src/rpc/client.js";
import { decodeStepsResponse, utf8, validateBody } from "../src/rpc/response-decoding.js";
import { TrajectoryStepsResponseSchema } from "../src/rpc/wire-schemas.js";
import { createSelfSignedCertificate } from "../src/sim/certificate.js";
import { startLoopbackServer } from "../test/support/loopback-server.js";
import { performance } from "node:perf_hooks";
import { measure, ratio, type BenchRow, type BenchSuite, type Sample } from "./harness.js";

const STEP_COUNT = 10_000;
const here = dirname(fileURLToPath(import.meta.url));
const capturesDir = join(here, "..", "..", "shared", "captures", "agy-1.0.10-steps");

interface CapturedStep {
  metadata?: { sourceTrajectoryStepInfo?: { stepIndex?: number } };
  [key: string]: unknown;
}

/** Cycles through the captures, giving each copy its own step index. */
function buildSnapshot(): Buffer {
  const captures = readdirSync(capturesDir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => {
      const { _fixtureProvenance: _, ...step } = JSON.parse(readFileSync(join(capturesDir, f), "utf8")) as CapturedStep;
      return step;
    });
  const steps = Array.from({ length: STEP_COUNT }, (_, index) => {
    const step = structuredClone(captures[index % captures.length]) as CapturedStep;
    const info = step.metadata?.sourceTrajectoryStepInfo;
    // Proto-JSON omits a zero stepIndex, as agy does.
    if (info !== undefined) {
      if (index === 0) delete info.stepIndex;
      else info.stepIndex = index;
    }
    return step;
  });
  return Buffer.from(JSON.stringify({ steps }));
}

/**
 * Measures two functions alternately, run by run, so that load from other
 * processes and garbage-collector state fall on both alike.
 */
async function measurePair(a: () => unknown, b: () => unknown, runs: number): Promise<[Sample, Sample]> {
  const times: [number[], number[]] = [[], []];
  for (let i = -2; i < runs; i++) {
    for (const [slot, fn] of [a, b].entries()) {
      const start = performance.now();
      await fn();
      if (i >= 0) times[slot as 0 | 1].push(performance.now() - start);
    }
  }
  const sample = (list: number[]): Sample => {
    list.sort((x, y) => x - y);
    const at = (q: number) => list[Math.min(list.length - 1, Math.floor(q * list.length))] ?? Number.NaN;
    return { medianMs: at(0.5), p90Ms: at(0.9), runs };
  };
  return [sample(times[0]), sample(times[1])];
}

const suite: BenchSuite = {
  title: `RPC snapshot ingestion (${STEP_COUNT} steps)`,
  async run() {
    const bytes = buildSnapshot();
    const runs = { warmup: 2, runs: 9 };
    const sizeMb = (bytes.byteLength / 1024 / 1024).toFixed(1);
    const baselineName = `JSON.parse (${sizeMb} MB)`;
    const [baselineSample, decodeSample] = await measurePair(
      () => JSON.parse(utf8(bytes)),
      () => decodeStepsResponse(bytes),
      15,
    );
    const baseline = { name: baselineName, sample: baselineSample };
    const rows: BenchRow[] = [];
    const decodeRow: BenchRow = {
      name: "client decode + validate (bytes in memory)",
      sample: decodeSample,
      baseline,
      goal: "<= 1.5x JSON.parse",
    };
    rows.push({ ...decodeRow, met: (ratio(decodeRow) ?? Infinity) <= 1.5 });
    rows.push({
      name: "Struct shape: fromJsonString + toJson + validate",
      sample: await measure(() => {
        const struct = fromJsonString(StructSchema, utf8(bytes));
        return validateBody(toJson(StructSchema, struct), TrajectoryStepsResponseSchema, "GetCascadeTrajectorySteps");
      }, { warmup: 1, runs: 5 }),
      baseline,
    });

    const certificate = await createSelfSignedCertificate();
    for (const kind of ["http1", "tls"] as const) {
      for (const httpVersion of kind === "http1" ? (["1.1"] as const) : (["1.1", "2"] as const)) {
        const server = await startLoopbackServer({
          kind,
          certificate,
          handler: ({ res }) => {
            res.writeHead(200, { "content-type": "application/json" });
            (res as { end(b: Uint8Array): void }).end(bytes);
          },
        });
        const client = createAgyRpcClient({ baseUrl: server.url, httpVersion, maxFrameBytes: 256 * 1024 * 1024 });
        try {
          const sample = await measure(() => client.getCascadeTrajectorySteps({ cascadeId: "c-1" }), runs);
          rows.push({ name: `full round trip over loopback (${kind === "tls" ? "TLS" : "plain"}, HTTP/${httpVersion})`, sample, baseline });
        } finally {
          await client.close();
          await server.close();
        }
      }
    }
    return rows;
  },
};

export default suite;
