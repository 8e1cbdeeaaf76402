import { describe, expect, it } from "vitest";
import { AgyBridgeError, RpcError } from "../../src/errors.js";
import { isServerGone, ServerHealth, type RelocateOutcome } from "../../src/session/server-health.js";

/** A health counter whose relocations resolve when the test says so. */
function world(options: { relocateAfterFailures: number; goneAfterFailures?: number }) {
  const said: string[] = [];
  const pending: ((outcome: RelocateOutcome) => void)[] = [];
  const stop = new AbortController();
  const health = new ServerHealth({
    relocate: () => {
      said.push("relocate");
      return new Promise((resolve) => pending.push(resolve));
    },
    moved: () => said.push("moved"),
    serverGone: () => said.push("gone"),
    signal: stop.signal,
    ...options,
  });
  const settle = async (outcome: RelocateOutcome) => {
    const resolve = pending.shift();
    if (resolve === undefined) throw new Error(`no relocation is in flight; said so far: ${said.join(", ")}`);
    resolve(outcome);
    // then → finally: two turns of the microtask queue, then one more for good measure.
    for (let i = 0; i < 3; i++) await Promise.resolve();
  };
  return { health, said, settle, stop };
}

describe("ServerHealth", () => {
  it("asks to relocate after the set number of failures, once while a relocation is in flight", async () => {
    const { health, said, settle } = world({ relocateAfterFailures: 3, goneAfterFailures: 100 });
    health.failed();
    health.failed();
    expect(said).toEqual([]);
    health.failed();
    expect(said).toEqual(["relocate"]);
    for (let i = 0; i < 5; i++) health.failed();
    expect(said).toEqual(["relocate"]);
    await settle("moved");
    expect(said).toEqual(["relocate", "moved"]);
  });

  it("says gone once per outage, after the failures in a row, and again after agy was reached", () => {
    const { health, said } = world({ relocateAfterFailures: 1000, goneAfterFailures: 4 });
    for (let i = 0; i < 3; i++) health.failed();
    expect(said).toEqual([]);
    for (let i = 0; i < 6; i++) health.failed();
    expect(said).toEqual(["gone"]);
    health.reached();
    for (let i = 0; i < 3; i++) health.failed();
    expect(said).toEqual(["gone"]);
    health.failed();
    expect(said).toEqual(["gone", "gone"]);
  });

  it("says gone at once when relocating finds no server, and nothing once stopped", async () => {
    const { health, said, settle, stop } = world({ relocateAfterFailures: 1, goneAfterFailures: 100 });
    health.failed();
    await settle("missing");
    expect(said).toEqual(["relocate", "gone"]);
    health.reached();
    health.failed();
    stop.abort();
    await settle("missing");
    expect(said).toEqual(["relocate", "gone", "relocate"]);
  });

  it("counts transport failures and refused tokens as the server's loss, and nothing else", () => {
    expect(isServerGone(new AgyBridgeError("transport", "connection refused"))).toBe(true);
    expect(isServerGone(new RpcError("http_status", "HTTP 401", { method: "GetCascadeTrajectorySteps", httpStatus: 401 }))).toBe(true);
    expect(
      isServerGone(new RpcError("http_status", "HTTP 500", { method: "GetCascadeTrajectorySteps", httpStatus: 500, serverMessage: "trajectory not found" })),
    ).toBe(false);
    expect(isServerGone(new AgyBridgeError("timeout", "deadline passed"))).toBe(false);
    expect(isServerGone(new Error("boom"))).toBe(false);
  });
});
