/**
 * The plain checks of unary answers accept exactly what the zod schemas of
 * `protocol/wire-schemas.ts` accept, on generated bodies that are mostly
 * right with a wrong field here and there (synthesized), and hand the body
 * through as it came.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { RpcError } from "../../src/errors.js";
import { checkAllTrajectories, checkConversationMetadata, checkJsonObject, checkModelCatalog, checkTrajectory } from "../../src/rpc/answer-shapes.js";
import {
  AllTrajectoriesResponseSchema,
  AvailableModelsResponseSchema,
  ConversationMetadataResponseSchema,
  JsonObjectSchema,
  TrajectoryResponseSchema,
} from "../../src/protocol/wire-schemas.js";

const loose = fc.oneof(
  fc.constant(undefined),
  fc.string({ maxLength: 3 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom("12", "-3", "1.5", "", "x1"),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }),
);

const maybe = <T>(valid: fc.Arbitrary<T>) => fc.oneof({ arbitrary: valid, weight: 6 }, { arbitrary: loose as fc.Arbitrary<unknown>, weight: 1 });
const text = maybe(fc.option(fc.string({ maxLength: 4 }), { nil: undefined }));
const wireInt = maybe(fc.oneof(fc.integer(), fc.integer().map(String), fc.constant(undefined), fc.constant(2 ** 53)));
const fields = <T extends Record<string, fc.Arbitrary<unknown>>>(model: T) => maybe(fc.record({ ...model, extra: loose }, { requiredKeys: [] }));
const info = fields({ trajectoryId: text, stepIndex: wireInt });
const step = fields({ type: text, status: text, metadata: fields({ createdAt: text, sourceTrajectoryStepInfo: info }) });
const steps = maybe(fc.array(step, { maxLength: 3 }));
const names = fc.constantFrom("a", "b", "c");

const bodies = {
  metadata: fields({ metadata: fields({ rootConversationId: text }) }),
  trajectory: fields({ trajectory: fields({ trajectoryId: text, cascadeId: text, steps }), status: text, numTotalSteps: wireInt }),
  all: fields({
    trajectorySummaries: maybe(
      fc.dictionary(
        names,
        fields({
          trajectoryId: text,
          status: text,
          stepCount: wireInt,
          lastModifiedTime: text,
          lastUserInputTime: text,
          trajectoryType: text,
          waitingSteps: maybe(fc.array(fields({ step, stepIndex: wireInt }), { maxLength: 2 })),
        }),
        { maxKeys: 2 },
      ),
    ),
  }),
  catalog: fields({ models: maybe(fc.dictionary(names, fields({ model: text }), { maxKeys: 2 })) }),
};

/** JSON has no undefined: keys holding it are dropped the way the wire would. */
function strip(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value ?? null)) as unknown;
}

function verdict(check: () => unknown): boolean {
  try {
    check();
    return true;
  } catch (error) {
    expect(error).toBeInstanceOf(RpcError);
    expect((error as RpcError).message).toMatch(/^M answered with an unexpected shape at .+: expected /);
    return false;
  }
}

function agrees(
  arbitrary: fc.Arbitrary<unknown>,
  check: (value: unknown, method: string) => unknown,
  schema: (value: unknown) => z.ZodSafeParseResult<unknown>,
) {
  fc.assert(
    fc.property(arbitrary, (raw) => {
      const value = strip(raw);
      let out: unknown;
      const accepted = verdict(() => {
        out = check(value, "M");
      });
      expect(accepted, JSON.stringify(value)).toBe(schema(value).success);
      if (accepted) expect(out).toBe(value);
    }),
    { numRuns: 2000 },
  );
}

describe("answer checks", () => {
  it("accept the GetConversationMetadata answers the zod schema accepts, and only those", () => {
    agrees(bodies.metadata, checkConversationMetadata, (v) => ConversationMetadataResponseSchema.safeParse(v));
  });

  it("accept the GetCascadeTrajectory answers the zod schema accepts, and only those", () => {
    agrees(bodies.trajectory, checkTrajectory, (v) => TrajectoryResponseSchema.safeParse(v));
  });

  it("accept the GetAllCascadeTrajectories answers the zod schema accepts, and only those", () => {
    agrees(bodies.all, checkAllTrajectories, (v) => AllTrajectoriesResponseSchema.safeParse(v));
  });

  it("accept the model catalogs the zod schema accepts inside its response wrapper, and only those", () => {
    agrees(bodies.catalog, checkModelCatalog, (v) => AvailableModelsResponseSchema.safeParse({ response: v }));
  });

  it("accept any JSON object as an empty answer, and nothing else", () => {
    agrees(loose, checkJsonObject, (v) => JsonObjectSchema.safeParse(v));
  });

  it("name the first field that broke the shape", () => {
    const body = { trajectorySummaries: { c1: { waitingSteps: [{ stepIndex: 2 }, { stepIndex: "x" }] } } };
    expect(() => checkAllTrajectories(body, "GetAllCascadeTrajectories")).toThrow(
      "GetAllCascadeTrajectories answered with an unexpected shape at trajectorySummaries.c1.waitingSteps.1.stepIndex: expected an integer",
    );
    expect(() => checkJsonObject([], "M")).toThrow("M answered with an unexpected shape at (root): expected an object");
  });
});
