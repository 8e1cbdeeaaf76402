/**
 * Reading a client call's failure: the RpcError a call rejects with, and a
 * stream read through to its end (or its failure).
 */
import { expect } from "vitest";
import { RpcError } from "../../src/errors.js";

/** The RpcError `promise` rejects with; the test fails when it resolves or rejects with anything else. */
export async function rpcFailure(promise: Promise<unknown>): Promise<RpcError> {
  const reason = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(reason).toBeInstanceOf(RpcError);
  return reason as RpcError;
}

/** Reads `iterable` to its end, keeping every item. */
export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}
