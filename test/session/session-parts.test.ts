/**
 * The parts `AgySession` is built from, each on its own with plain data: one
 * delivery per interaction (answer-once.ts), the policy's two stages
 * (policy-stage.ts, with a real parsed policy), the gate lookup and the
 * ledger feed. The session tests run them through a real simulator; these
 * pin what each promises when used alone.
 */
import { describe, expect, it } from "vitest";
import { MapperEventSchema, type EventOf, type MapperEvent } from "../../src/mapper/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { AnswerOnce } from "../../src/session/answer-once.js";
import { GateLookup } from "../../src/session/gate-lookup.js";
import type { CapturedInteraction } from "../../src/session/interaction-delivery.js";
import { LedgerFeed } from "../../src/session/ledger-feed.js";
import { loadPolicyJudge } from "../../src/session/policy-runner.js";
import { PolicyStage } from "../../src/session/policy-stage.js";
import type { AnswerResult, ApproveOptions, DenyOptions } from "../../src/session/types.js";

function requested(stepIndex: number, target: string, kind: "permission" | "question" = "permission"): EventOf<"interaction_requested"> {
  const request =
    kind === "permission"
      ? { kind, variant: "runCommand", action: "command", target, description: "" }
      : { kind, questions: [{ question: target, options: [{ id: "1", text: "yes" }], multiSelect: false }] };
  return MapperEventSchema.parse({
    type: "interaction_requested",
    conversationId: "conv-a",
    trajectoryId: "traj-1",
    stepIndex,
    interactionId: `int_${stepIndex}`,
    stepType: kind === "permission" ? "RUN_COMMAND" : "ASK_USER_QUESTION",
    callId: `agy_call_traj-1_${stepIndex}`,
    request,
  }) as EventOf<"interaction_requested">;
}

function resolved(stepIndex: number): MapperEvent {
  return MapperEventSchema.parse({
    type: "interaction_resolved",
    conversationId: "conv-a",
    trajectoryId: "traj-1",
    stepIndex,
    interactionId: `int_${stepIndex}`,
    kind: "permission",
    outcome: "approved",
    stepStatus: "DONE",
  });
}

/** A promise and the hands that settle it. */
function deferred<T>(): { promise: Promise<T>; resolve(value: T): void; reject(error: Error): void } {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("AnswerOnce", () => {
  it("runs one attempt per interaction: a second one meanwhile waits and is already_resolved, a later one too", async () => {
    const once = new AnswerOnce();
    const first = deferred<AnswerResult>();
    let runs = 0;
    const a = once.run("int_1", () => {
      runs++;
      return first.promise;
    });
    const b = once.run("int_1", async () => {
      runs++;
      return { result: "delivered", stepIndex: 9 };
    });
    first.resolve({ result: "delivered", stepIndex: 4 });
    expect(await a).toEqual({ result: "delivered", stepIndex: 4 });
    expect(await b).toEqual({ result: "already_resolved", stepIndex: 4 });
    expect(await once.run("int_1", async () => ({ result: "not_found" }))).toEqual({ result: "already_resolved", stepIndex: 4 });
    expect(runs).toBe(1);
  });

  it("lets the waiting answer run itself when the first failed, and keeps nothing of an answer that did not go through", async () => {
    const once = new AnswerOnce();
    const first = deferred<AnswerResult>();
    const a = once.run("int_2", () => first.promise);
    const b = once.run("int_2", async () => ({ result: "delivered", stepIndex: 7 }));
    first.reject(new Error("socket closed"));
    await expect(a).rejects.toThrow("socket closed");
    expect(await b).toEqual({ result: "delivered", stepIndex: 7 });
    const other = new AnswerOnce();
    expect(await other.run("int_3", async () => ({ result: "not_found" }))).toEqual({ result: "not_found" });
    expect(await other.run("int_3", async () => ({ result: "delivered", stepIndex: 1 }))).toEqual({ result: "delivered", stepIndex: 1 });
  });
});

describe("PolicyStage", () => {
  const POLICY = parsePolicy(
    `version: 1
default: ask
rules:
  - id: no-delete
    kind: command
    commands: ["rm *"]
    action: deny
  - id: read-only
    kind: command
    commands: ["pwd"]
    action: approve
`,
    "policy.yaml",
  );

  /** Approves whatever no rule denies, and so would approve a question if it were let. */
  const APPROVING = parsePolicy(
    `version: 1
default: approve
rules:
  - id: no-delete
    kind: command
    commands: ["rm *"]
    action: deny
`,
    "approving.yaml",
  );

  async function stage(policy = POLICY): Promise<{ stage: PolicyStage; answers: string[]; delivered: Array<EventOf<"policy_delivered">> }> {
    const stage = new PolicyStage();
    stage.use(await loadPolicyJudge({ policy, context: { workspace: "/w", home: "/h" } }));
    return { stage, answers: [], delivered: [] };
  }

  it("writes the verdict on the request, delivers an approve itself and reports it as policy_delivered", async () => {
    const world = await stage();
    const own = {
      approve: async (id: string, options: ApproveOptions): Promise<AnswerResult> => {
        world.answers.push(`approve ${id} by ${options.decidedBy}`);
        return { result: "delivered", stepIndex: 1 };
      },
      deny: async (id: string, _options: DenyOptions): Promise<AnswerResult> => {
        world.answers.push(`deny ${id}`);
        return { result: "delivered", stepIndex: 1 };
      },
    };
    const event = requested(1, "pwd");
    const done = new Promise<void>((resolve) =>
      world.stage.decide(event, own, (outcome) => {
        world.delivered.push(outcome);
        resolve();
      }),
    );
    expect(event.policy).toEqual({ decision: "approve", rule: "read-only" });
    // Not yet delivered: that comes after the event is published.
    expect(world.answers).toEqual([]);
    await done;
    expect(world.answers).toEqual(["approve int_1 by policy:read-only"]);
    expect(world.delivered).toMatchObject([{ type: "policy_delivered", interactionId: "int_1", decision: "approve", result: "delivered" }]);
    expect(world.stage.refusal("int_1")).toMatchObject({ result: "decided_by_policy", decision: "approve", rule: "read-only" });
    // Decided once: the same request seen again gets the same verdict and no second delivery.
    const again = requested(1, "pwd");
    world.stage.decide(again, own, () => world.answers.push("second delivery"));
    expect(again.policy).toEqual({ decision: "approve", rule: "read-only" });
    await new Promise<void>((resolve) => queueMicrotask(resolve));
    expect(world.answers).toEqual(["approve int_1 by policy:read-only"]);
  });

  it("leaves ask and a question it would approve to a person, refusing nobody, and pending shows only those", async () => {
    const world = await stage();
    const own = {
      approve: async (): Promise<AnswerResult> => ({ result: "delivered", stepIndex: 0 }),
      deny: async (): Promise<AnswerResult> => ({ result: "delivered", stepIndex: 0 }),
    };
    const ask = requested(2, "make");
    const denied = requested(4, "rm -rf build");
    for (const event of [ask, denied]) world.stage.decide(event, own, () => undefined);
    const approving = await stage(APPROVING);
    const question = requested(3, "Proceed?", "question");
    approving.stage.decide(question, own, () => undefined);
    expect(ask.policy).toEqual({ decision: "ask", rule: null });
    expect(question.policy).toEqual({ decision: "ask", rule: null });
    expect(approving.stage.refusal("int_3")).toBeUndefined();
    expect(denied.policy).toEqual({ decision: "deny", rule: "no-delete" });
    expect(world.stage.refusal("int_2")).toBeUndefined();
    expect(world.stage.refusal("int_4")).toMatchObject({ result: "decided_by_policy", reason: expect.stringContaining("rule no-delete") });
    const pending = [2, 4, 5].map((i) => ({ interactionId: `int_${i}` }) as never);
    const left = await world.stage.leftToPerson(Promise.resolve(pending));
    // int_5 is not decided yet: a request the policy has not seen is not a person's either.
    expect(left.map((p: { interactionId: string }) => p.interactionId)).toEqual(["int_2"]);
  });

  it("without a policy changes nothing: no verdict, no refusal, pending and events as they are", async () => {
    const stage = new PolicyStage();
    const event = requested(5, "rm -rf /");
    stage.decide(event, { approve: () => Promise.reject(new Error("no")), deny: () => Promise.reject(new Error("no")) }, () => undefined);
    expect(event.policy).toBeUndefined();
    expect(stage.refusal("int_5")).toBeUndefined();
    const source: AsyncIterable<MapperEvent> = { [Symbol.asyncIterator]: async function* () {} };
    expect(stage.withVerdicts(source)).toBe(source);
  });

  it("puts the verdict on a request a consumer is handed without one (rebuilt from the tracker)", async () => {
    const world = await stage();
    world.stage.decide(
      requested(6, "rm -rf dist"),
      { approve: async () => ({ result: "not_found" }), deny: async () => ({ result: "not_found" }) },
      () => undefined,
    );
    const bare = requested(6, "rm -rf dist");
    const seen: MapperEvent[] = [];
    for await (const event of world.stage.withVerdicts({
      [Symbol.asyncIterator]: async function* () {
        yield bare;
      },
    }))
      seen.push(event);
    expect(seen).toMatchObject([{ interactionId: "int_6", policy: { decision: "deny", rule: "no-delete" } }]);
    expect(bare.policy).toBeUndefined();
  });
});

describe("GateLookup and LedgerFeed", () => {
  it("reads the gate off the ledger's request, and re-reads the conversation only for one the ledger lost, once", async () => {
    const feed = new LedgerFeed();
    feed.fold(requested(1, "pwd"));
    const finds: string[] = [];
    const found: CapturedInteraction = {
      interactionId: "int_old",
      conversationId: "conv-a",
      trajectoryId: "traj-1",
      stepIndex: 0,
      kind: "permission",
      variant: "runCommand",
    };
    const gates = new GateLookup({
      request: (id) => feed.request(id),
      find: async (id) => {
        finds.push(id);
        return id === "int_old" ? found : undefined;
      },
    });
    expect(await gates.get("int_1")).toMatchObject({ interactionId: "int_1", stepIndex: 1, kind: "permission", variant: "runCommand" });
    expect(await gates.get("int_old")).toBe(found);
    expect(await gates.get("int_old")).toBe(found);
    expect(await gates.get("int_missing")).toBeUndefined();
    expect(finds).toEqual(["int_old", "int_missing"]);
  });

  it("tells each subscriber every change, and one that throws costs the others nothing", () => {
    const feed = new LedgerFeed();
    const heard: string[] = [];
    feed.view.subscribe(() => {
      throw new Error("a bad subscriber");
    });
    const stop = feed.view.subscribe((change) => heard.push(change.kind));
    feed.fold(requested(1, "pwd"));
    feed.fold(resolved(1));
    stop();
    feed.fold(requested(2, "ls"));
    expect(heard).toEqual(["opened", "resolved"]);
    expect(feed.view.snapshot().open.map((r) => r.interactionId)).toEqual(["int_2"]);
  });
});
