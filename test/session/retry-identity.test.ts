/**
 * An answer reaches only the gate it was given for (docs/session.md,
 * "Which step an answer may reach"). After agy timed a prompt out, the only
 * other step that may take its answer is agy's retry of that prompt: a step
 * that asks the same request again (same command line, file or questions,
 * same tool call). The chaos suite found the answer to a timed-out
 * `git status` gate delivered to the chained `git log` gate (seeds 54, 64,
 * 70); these tests play that sequence without it: through a real
 * `AgySession` against the simulator, and through the delivery against a
 * loopback agy serving exact steps.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { isRequested, isTurnEnd, startWorld } from "./support/session-world.js";
import { ManualTimeouts } from "../sim/support/manual-timeouts.js";
import { createAgyRpcClient } from "../../src/rpc/client.js";
import { gateIdentity } from "../../src/session/gate-identity.js";
import { deliverVerdict, type CapturedInteraction, type DeliveryContext, type Verdict } from "../../src/session/interaction-delivery.js";
import { interactionIdFor, type MapperEvent } from "../../src/mapper/index.js";
import { STEP_STATUS } from "../../src/protocol/wire-names.js";
import { replyJson } from "../support/connect-replies.js";
import { startLoopbackServer, type LoopbackServer } from "../support/loopback-server.js";

type Requested = Extract<MapperEvent, { type: "interaction_requested" }>;

const asksCommand =
  (line: string) =>
  (e: MapperEvent): e is Requested =>
    isRequested(e) && e.request.kind === "permission" && e.request.target === line;

describe("the answer to a timed-out gate, through a session on the simulator", () => {
  it("never reaches the chained git log gate once agy's retry of git status was answered", async () => {
    // Prompt timeouts are held until the test fires them; scenario delays run on their own.
    const clock = new ManualTimeouts(60_000);
    const world = await startWorld({ clock, interactionTimeoutMs: 3_600_000 });
    try {
      const conv = world.sim.engine.conversation(world.sim.engine.activeConversationId)!;
      world.sim.engine.tuiPort().submitTurn("Show git status and recent commits");
      const status = await world.waitFor(asksCommand("git status"), "the git status gate");
      expect(clock.fireHeld()).toBe(1);
      const retry = (await world.waitFor(
        (e): e is Requested => asksCommand("git status")(e) && e.stepIndex > status.stepIndex,
        "agy's retry of the git status prompt",
      )) as Requested;
      expect(conv.steps[status.stepIndex]?.status).toBe(STEP_STATUS.ERROR);
      // The retry is answered under its own id (a second supervisor, a person's bot).
      expect(await world.session.approve(retry.interactionId)).toEqual({ result: "delivered", stepIndex: retry.stepIndex });
      const log = (await world.waitFor(asksCommand("git log -n 3 --oneline"), "the chained git log gate")) as Requested;
      expect(conv.steps[log.stepIndex]?.status).toBe(STEP_STATUS.WAITING);

      // The first answer to git status comes late (a call that failed on the wire, tried again).
      const late = await world.session.approve(status.interactionId);

      expect(late).toEqual({ result: "already_resolved", stepIndex: retry.stepIndex });
      expect(conv.steps[log.stepIndex]?.status).toBe(STEP_STATUS.WAITING);
      expect(conv.steps[log.stepIndex]?.["completedInteractions"]).toBeUndefined();
      // git log still gets its own answer.
      expect(await world.session.approve(log.interactionId)).toEqual({ result: "delivered", stepIndex: log.stepIndex });
      await world.waitFor(isTurnEnd, "the end of the turn");
    } finally {
      await world.close();
    }
  });

  it("still reaches agy's retry of the same prompt while it waits", async () => {
    const clock = new ManualTimeouts(60_000);
    const world = await startWorld({ clock, interactionTimeoutMs: 3_600_000 });
    try {
      world.sim.engine.tuiPort().submitTurn("Show git status and recent commits");
      const status = await world.waitFor(asksCommand("git status"), "the git status gate");
      expect(clock.fireHeld()).toBe(1);
      const retry = (await world.waitFor(
        (e): e is Requested => asksCommand("git status")(e) && e.stepIndex > status.stepIndex,
        "agy's retry of the git status prompt",
      )) as Requested;
      expect(await world.session.approve(status.interactionId)).toEqual({ result: "delivered", stepIndex: retry.stepIndex });
      const log = (await world.waitFor(asksCommand("git log -n 3 --oneline"), "the chained git log gate")) as Requested;
      expect(await world.session.approve(log.interactionId)).toEqual({ result: "delivered", stepIndex: log.stepIndex });
      await world.waitFor(isTurnEnd, "the end of the turn");
    } finally {
      await world.close();
    }
  });
});

// ---- A loopback agy serving exact steps ----

const CONV = "c-identity";
const { WAITING, ERROR, DONE } = STEP_STATUS;

type Step = Record<string, unknown> & { metadata: Record<string, unknown> & { sourceTrajectoryStepInfo: Record<string, unknown> } };

function fixture(name: string): Step {
  return JSON.parse(readFileSync(new URL(`../../fixtures/steps/${name}`, import.meta.url), "utf8")) as Step;
}

const TID = fixture("run_command_waiting.json").metadata.sourceTrajectoryStepInfo["trajectoryId"] as string;

/** A command gate for `line`, behind agy's tool call `toolCallId`, at `index`. */
function command(index: number, status: string, line: string, toolCallId: string): Step {
  const step = fixture("run_command_waiting.json");
  step.status = status;
  step.metadata.sourceTrajectoryStepInfo["stepIndex"] = index;
  (step.metadata["toolCall"] as Record<string, unknown>)["id"] = toolCallId;
  const permission = (step["requestedInteraction"] as { permission: Record<string, unknown> }).permission;
  permission["resource"] = { action: "command", target: line };
  permission["suggestedPersistPattern"] = line;
  return step;
}

/** A question gate asking `question`, at `index`. */
function question(index: number, status: string, text: string, toolCallId: string): Step {
  const step = fixture("ask_question_waiting.json");
  step.status = status;
  step.metadata.sourceTrajectoryStepInfo["stepIndex"] = index;
  (step.metadata["toolCall"] as Record<string, unknown>)["id"] = toolCallId;
  const asked = (step["requestedInteraction"] as { askQuestion: { questions: Record<string, unknown>[] } }).askQuestion;
  asked.questions[0]!["question"] = text;
  return step;
}

const filler = (index: number): Step => {
  const step = fixture("run_command_done.json");
  step.metadata.sourceTrajectoryStepInfo["stepIndex"] = index;
  return step;
};

interface Agy {
  ctx: DeliveryContext;
  /** The steps each HandleCascadeUserInteraction answered, in order. */
  answered(): number[];
  close(): Promise<void>;
}

/**
 * A loopback agy serving `steps()` (honouring `stepOffset`). `answer` decides
 * each HandleCascadeUserInteraction: true takes it, false refuses it as agy
 * does a step that no longer waits ("input not registered").
 */
async function loopbackAgy(steps: () => Step[], answer: (stepIndex: number) => boolean = () => true): Promise<Agy> {
  const server: LoopbackServer = await startLoopbackServer({
    kind: "http1",
    handler: ({ request, res }) => {
      const body = JSON.parse(request.body.toString("utf8") || "{}") as { stepOffset?: number; interaction?: { stepIndex?: number } };
      if (request.rpc === "GetCascadeTrajectorySteps") return replyJson(res, { steps: steps().slice(body.stepOffset ?? 0) });
      if (request.rpc === "HandleCascadeUserInteraction") {
        const index = body.interaction?.stepIndex ?? 0;
        if (answer(index)) return replyJson(res, {});
        return replyJson(res, { code: "unknown", message: `input not registered for step ${index}` }, 500);
      }
      replyJson(res, { code: "unimplemented", message: `${request.rpc} is not implemented` }, 404);
    },
  });
  const client = createAgyRpcClient({ baseUrl: server.url });
  return {
    ctx: { client: () => client },
    answered: () =>
      server.requests
        .filter((r) => r.rpc === "HandleCascadeUserInteraction")
        .map((r) => (JSON.parse(r.body.toString("utf8")) as { interaction: { stepIndex: number } }).interaction.stepIndex),
    async close() {
      await client.close();
      await server.close();
    },
  };
}

function captured(stepIndex: number, kind: CapturedInteraction["kind"], variant: string): CapturedInteraction {
  return { interactionId: interactionIdFor(CONV, TID, stepIndex), conversationId: CONV, trajectoryId: TID, stepIndex, kind, variant };
}

const approve: Verdict = { kind: "permission", allow: true };
const gitStatus = captured(1, "permission", "permission");

describe("which step the answer to a timed-out gate may reach", () => {
  it("goes to the retry of the same command, not to a later gate for another command waiting above it", async () => {
    const agy = await loopbackAgy(() => [
      filler(0),
      command(1, ERROR, "git status", "tc-a"),
      command(2, WAITING, "git status", "tc-a"),
      command(3, WAITING, "git log", "tc-b"),
    ]);
    try {
      expect(await deliverVerdict(agy.ctx, gitStatus, approve)).toEqual({ result: "delivered", stepIndex: 2 });
      expect(agy.answered()).toEqual([2]);
    } finally {
      await agy.close();
    }
  });

  it("is timed_out, with nothing sent, when only a gate for another command waits", async () => {
    const agy = await loopbackAgy(() => [filler(0), command(1, ERROR, "git status", "tc-a"), command(2, WAITING, "git log", "tc-b")]);
    try {
      expect(await deliverVerdict(agy.ctx, gitStatus, approve)).toEqual({ result: "timed_out", stepIndex: 1 });
      expect(agy.answered()).toEqual([]);
    } finally {
      await agy.close();
    }
  });

  it("is timed_out when the waiting gate runs the same command line for another tool call", async () => {
    const agy = await loopbackAgy(() => [filler(0), command(1, ERROR, "git status", "tc-a"), command(2, WAITING, "git status", "tc-c")]);
    try {
      expect(await deliverVerdict(agy.ctx, gitStatus, approve)).toEqual({ result: "timed_out", stepIndex: 1 });
      expect(agy.answered()).toEqual([]);
    } finally {
      await agy.close();
    }
  });

  it("is already_resolved when agy's retry was answered, though a gate for another command waits", async () => {
    const agy = await loopbackAgy(() => [
      filler(0),
      command(1, ERROR, "git status", "tc-a"),
      command(2, DONE, "git status", "tc-a"),
      command(3, WAITING, "git log", "tc-b"),
    ]);
    try {
      expect(await deliverVerdict(agy.ctx, gitStatus, approve)).toEqual({ result: "already_resolved", stepIndex: 2 });
      expect(agy.answered()).toEqual([]);
    } finally {
      await agy.close();
    }
  });

  it("follows a retry that timed out too, to the one that waits", async () => {
    const agy = await loopbackAgy(() => [
      filler(0),
      command(1, ERROR, "git status", "tc-a"),
      command(2, ERROR, "git status", "tc-a"),
      command(3, WAITING, "git log", "tc-b"),
      command(4, WAITING, "git status", "tc-a"),
    ]);
    try {
      expect(await deliverVerdict(agy.ctx, gitStatus, approve)).toEqual({ result: "delivered", stepIndex: 4 });
      expect(agy.answered()).toEqual([4]);
    } finally {
      await agy.close();
    }
  });

  it("when the timed-out step no longer says what it asked, goes by what it asked when first seen", async () => {
    const bare = command(1, ERROR, "git status", "tc-a");
    delete bare["requestedInteraction"];
    const agy = await loopbackAgy(() => [filler(0), bare, command(2, WAITING, "git status", "tc-a"), command(3, WAITING, "git log", "tc-b")]);
    try {
      const seen = { kind: "permission", action: "command", target: "git status", description: "" } as const;
      expect(await deliverVerdict(agy.ctx, { ...gitStatus, identity: gateIdentity(seen) }, approve)).toEqual({ result: "delivered", stepIndex: 2 });
      // Knowing neither, no step can be proven its retry.
      expect(await deliverVerdict(agy.ctx, gitStatus, approve)).toEqual({ result: "timed_out", stepIndex: 1 });
      expect(agy.answered()).toEqual([2]);
    } finally {
      await agy.close();
    }
  });

  it("never gives a question's answer to another question", async () => {
    const agy = await loopbackAgy(() => [
      filler(0),
      question(1, ERROR, "Which task should I start with?", "tc-q1"),
      question(2, WAITING, "Which branch should I use?", "tc-q2"),
    ]);
    try {
      const verdict: Verdict = { kind: "question", optionIds: ["2"] };
      expect(await deliverVerdict(agy.ctx, captured(1, "question", "askQuestion"), verdict)).toEqual({ result: "timed_out", stepIndex: 1 });
      expect(agy.answered()).toEqual([]);
    } finally {
      await agy.close();
    }
  });

  it("after 'input not registered', retargets only a retry of the same command", async () => {
    // The gate times out while the answer travels: agy refuses it, and by then a git log gate waits instead of a retry.
    let timedOut = false;
    const agy = await loopbackAgy(
      () =>
        timedOut
          ? [filler(0), command(1, ERROR, "git status", "tc-a"), command(2, WAITING, "git log", "tc-b")]
          : [filler(0), command(1, WAITING, "git status", "tc-a")],
      (index) => {
        if (index !== 1) return true;
        timedOut = true;
        return false;
      },
    );
    try {
      expect(await deliverVerdict(agy.ctx, gitStatus, approve)).toEqual({ result: "timed_out", stepIndex: 1 });
      expect(agy.answered()).toEqual([1]);
    } finally {
      await agy.close();
    }
  });
});
