import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RpcError } from "../../src/errors.js";
import { decodeDataFrame, decodeStepsResponse, isWireStep } from "../../src/rpc/response-decoding.js";
import { StepSchema, StreamUpdateSchema, TrajectoryStepsResponseSchema } from "../../src/protocol/wire-schemas.js";

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
const maybe = <T>(valid: fc.Arbitrary<T>) => fc.oneof({ arbitrary: valid, weight: 6 }, { arbitrary: loose as fc.Arbitrary<unknown>, weight: 1 });
const text = maybe(fc.option(fc.string({ maxLength: 4 }), { nil: undefined }));
const wireInt = maybe(fc.oneof(fc.integer(), fc.integer().map(String), fc.constant(undefined)));

const info = maybe(fc.record({ trajectoryId: text, cascadeId: text, stepIndex: wireInt, metadataIndex: wireInt, extra: loose }, { requiredKeys: [] }));
const metadata = maybe(fc.record({ createdAt: text, executionId: text, sourceTrajectoryStepInfo: info, other: loose }, { requiredKeys: [] }));
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
  it("hands every step through as it came, and agrees with zod whenever zod accepts", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 4 }), (raw) => {
        const body = strip({ steps: raw, trajectoryId: "kept" }) as { steps: unknown[] };
        const decoded = decodeStepsResponse(bytes(body));
        expect(decoded).toEqual(body);
        const expected = TrajectoryStepsResponseSchema.safeParse(body);
        if (expected.success) expect(decoded).toEqual({ ...expected.data, steps: expected.data.steps ?? [] });
      }),
      { numRuns: 1000 },
    );
  });

  it("still reads a snapshot in which one step has fields of the wrong type", () => {
    const good = { type: "CORTEX_STEP_TYPE_USER_INPUT", status: "CORTEX_STEP_STATUS_DONE" };
    const bad = { type: 7, status: ["DONE"], metadata: "yesterday" };
    expect(decodeStepsResponse(bytes({ steps: [good, bad, null, good] })).steps).toEqual([good, bad, null, good]);
  });

  it("refuses a body whose steps are not a list, or that is not an object", () => {
    for (const body of [{ steps: "many" }, { steps: { 0: {} } }, [1, 2], "text"]) {
      expect(() => decodeStepsResponse(bytes(body)), JSON.stringify(body)).toThrow(/unexpected shape at (steps|\(root\))/);
    }
  });

  it("keeps fields the schema does not name", () => {
    const body = { steps: [{ type: "T", runCommand: { commandLine: "ls" }, metadata: { toolCall: { name: "x" } } }] };
    expect(decodeStepsResponse(bytes(body)).steps).toEqual(body.steps);
  });

  it("reads an absent steps list as no steps", () => {
    expect(decodeStepsResponse(bytes({})).steps).toEqual([]);
  });
});

describe("decodeDataFrame", () => {
  const frameOf = (update: unknown) => bytes({ update });

  it("still reads a frame in which one step or one index is of the wrong type", () => {
    const update = {
      conversationId: "c-1",
      mainTrajectoryUpdate: {
        stepsUpdate: {
          indices: [0, "x", -1, "12345678901234567890"],
          steps: [{ type: "T" }, { status: 3 }, "not a step", { metadata: [] }],
          totalLength: "4",
        },
      },
    };
    expect(decodeDataFrame(frameOf(update), "M")).toEqual(update);
  });

  it("refuses a frame whose envelope fields have the wrong shape", () => {
    const cases: Array<[unknown, string]> = [
      [{ status: 1 }, "status"],
      [{ fullyIdle: "yes" }, "fullyIdle"],
      [{ mainTrajectoryUpdate: [] }, "mainTrajectoryUpdate"],
      [{ mainTrajectoryUpdate: { stepsUpdate: { steps: {} } } }, "mainTrajectoryUpdate.stepsUpdate.steps"],
      [{ mainTrajectoryUpdate: { stepsUpdate: { indices: "0,1" } } }, "mainTrajectoryUpdate.stepsUpdate.indices"],
      [{ mainTrajectoryUpdate: { stepsUpdate: { totalLength: 1.5 } } }, "mainTrajectoryUpdate.stepsUpdate.totalLength"],
    ];
    for (const [update, at] of cases) {
      expect(() => decodeDataFrame(frameOf(update), "M"), at).toThrow(new RegExp(`unexpected shape at ${at.replace(/\./g, "\\.")}:`));
    }
  });

  it("accepts every update StreamUpdateSchema accepts, and refuses the same envelopes", () => {
    const envelope = fc.record(
      {
        conversationId: maybe(fc.string({ maxLength: 3 })),
        status: maybe(fc.string({ maxLength: 3 })),
        fullyIdle: maybe(fc.boolean()),
        mainTrajectoryUpdate: maybe(
          fc.record(
            {
              status: maybe(fc.string({ maxLength: 3 })),
              stepsUpdate: maybe(
                fc.record(
                  { indices: maybe(fc.array(fc.nat(), { maxLength: 2 })), steps: maybe(fc.constant([{}])), totalLength: wireInt },
                  { requiredKeys: [] },
                ),
              ),
            },
            { requiredKeys: [] },
          ),
        ),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(envelope, (raw) => {
        const update = strip(raw);
        if (typeof update !== "object" || update === null || Array.isArray(update)) return;
        const zodSays = StreamUpdateSchema.safeParse(update).success;
        let decoded = true;
        try {
          decodeDataFrame(frameOf(update), "M");
        } catch (error) {
          expect(error).toBeInstanceOf(RpcError);
          decoded = false;
        }
        // Steps and index entries are judged by the tracker, one by one; zod judges the whole list.
        const inner = (update as { mainTrajectoryUpdate?: { stepsUpdate?: { steps?: unknown; indices?: unknown } } }).mainTrajectoryUpdate?.stepsUpdate;
        const entriesFine =
          (!Array.isArray(inner?.steps) || inner.steps.every(isWireStep)) &&
          (!Array.isArray(inner?.indices) || inner.indices.every((i) => Number.isInteger(i)));
        if (zodSays) expect(decoded).toBe(true);
        if (entriesFine) expect(decoded).toBe(zodSays);
      }),
      { numRuns: 2000 },
    );
  });
});
