import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RpcError } from "../../src/errors.js";
import { decodeStepsResponse, isWireStep } from "../../src/rpc/response-decoding.js";
import { StepSchema, TrajectoryStepsResponseSchema } from "../../src/protocol/wire-schemas.js";

const loose = fc.oneof(
  fc.constant(undefined),
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom("12", "-3", "1.5", "", "x1", "00"),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }),
);

// Mostly well-formed fields with an occasional wrong one, so the generator
// reaches deep into steps that are almost right.
const maybe = <T>(valid: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: valid, weight: 6 }, { arbitrary: loose as fc.Arbitrary<unknown>, weight: 1 });
const text = maybe(fc.option(fc.string({ maxLength: 4 }), { nil: undefined }));
const wireInt = maybe(fc.oneof(fc.integer(), fc.integer().map(String), fc.constant(undefined)));

const info = maybe(
  fc.record({ trajectoryId: text, cascadeId: text, stepIndex: wireInt, metadataIndex: wireInt, extra: loose }, { requiredKeys: [] }),
);
const metadata = maybe(
  fc.record({ createdAt: text, executionId: text, sourceTrajectoryStepInfo: info, other: loose }, { requiredKeys: [] }),
);
const step = maybe(fc.record({ type: text, status: text, metadata, runCommand: loose }, { requiredKeys: [] }));

function strip(value: unknown): unknown {
  // JSON has no undefined: drop such keys the way the wire would.
  return JSON.parse(JSON.stringify(value ?? null)) as unknown;
}

const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

describe("isWireStep", () => {
  it("never accepts a step the zod schema refuses", () => {
    fc.assert(
      fc.property(step, (raw) => {
        const value = strip(raw);
        if (isWireStep(value)) expect(StepSchema.safeParse(value).success).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it("accepts the shapes agy sends", () => {
    expect(isWireStep({ type: "T", status: "S", metadata: { sourceTrajectoryStepInfo: { stepIndex: 3, trajectoryId: "t" } } })).toBe(true);
    expect(isWireStep({ metadata: { sourceTrajectoryStepInfo: { stepIndex: "3" } } })).toBe(true);
    expect(isWireStep({})).toBe(true);
  });
});

describe("decodeStepsResponse", () => {
  it("returns what the zod schema returns, fast path or not", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 4 }), (raw) => {
        const body = strip({ steps: raw, trajectoryId: "kept" });
        const expected = TrajectoryStepsResponseSchema.safeParse(body);
        if (expected.success) {
          expect(decodeStepsResponse(bytes(body))).toEqual({ ...expected.data, steps: expected.data.steps ?? [] });
        } else {
          expect(() => decodeStepsResponse(bytes(body))).toThrow(RpcError);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("keeps fields the schema does not name", () => {
    const body = { steps: [{ type: "T", runCommand: { commandLine: "ls" }, metadata: { toolCall: { name: "x" } } }] };
    expect(decodeStepsResponse(bytes(body)).steps).toEqual(body.steps);
  });

  it("reads an absent steps list as no steps", () => {
    expect(decodeStepsResponse(bytes({})).steps).toEqual([]);
  });
});
