/**
 * Answering a gate in agy's TUI (`answerInTui`): the step is re-read over
 * RPC first (a real client against a loopback agy serving fixture steps),
 * then the choice goes to the turn driver — a compiler-checked fake that
 * records it; the driver's own keys are tested against real tmux in
 * test/tmux/. Nothing is ever sent over RPC on this path.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createAgyRpcClient } from "../../src/rpc/client.js";
import type { CapturedInteraction, DeliveryContext } from "../../src/session/interaction-delivery.js";
import { answerInTui } from "../../src/session/tui-answer.js";
import type { TurnDriver } from "../../src/session/index.js";
import { interactionIdFor } from "../../src/mapper/index.js";
import type { TuiAnswerResult, TuiChoice } from "../../src/tmux/index.js";
import { agyLikeHandler } from "../support/connect-replies.js";
import { startLoopbackServer } from "../support/loopback-server.js";

const CONV = "c-1";
type Step = Record<string, unknown> & { metadata: { sourceTrajectoryStepInfo: Record<string, unknown> } };

function at(name: string, index: number, status = "CORTEX_STEP_STATUS_WAITING"): Step {
  const step = JSON.parse(readFileSync(new URL(`../../fixtures/steps/${name}`, import.meta.url), "utf8")) as Step;
  step.status = status;
  step.metadata.sourceTrajectoryStepInfo["stepIndex"] = index;
  return step;
}

/** A driver that answers as `outcome` says and records every choice it was given. */
function recordingDriver(outcome: TuiAnswerResult["result"] = "answered") {
  const choices: Array<{ choice: TuiChoice; kinds: readonly string[] | undefined }> = [];
  const versions: Array<string | null | undefined> = [];
  const driver = {
    deliverTurn: async () => ({ result: "failed" as const, reason: "not used" }),
    closePrompt: async () => ({ result: "none" as const, reason: "not used", keys: [] }),
    answerPrompt: async (_pane, choice, options) => {
      choices.push({ choice, kinds: options?.kinds });
      versions.push(options?.agyVersion);
      return { result: outcome, reason: outcome === "answered" ? "done" : "the pointer is on row 3, not 2; nothing more was pressed.", keys: ["Down"] };
    },
  } satisfies TurnDriver;
  return { driver, choices, versions };
}

async function world(steps: Step[]) {
  const server = await startLoopbackServer({
    kind: "http1",
    handler: agyLikeHandler({
      unary: {
        GetCascadeTrajectorySteps: (body) => ({ steps: steps.slice((body as { stepOffset?: number }).stepOffset ?? 0) }),
        HandleCascadeUserInteraction: () => ({}),
      },
    }),
  });
  const client = createAgyRpcClient({ baseUrl: server.url });
  const ctx: DeliveryContext = { client: () => client };
  const trajectoryId = steps[1]!.metadata.sourceTrajectoryStepInfo["trajectoryId"] as string;
  const captured = (stepIndex: number, kind: CapturedInteraction["kind"], variant: string): CapturedInteraction => ({
    interactionId: interactionIdFor(CONV, trajectoryId, stepIndex),
    conversationId: CONV,
    trajectoryId,
    stepIndex,
    kind,
    variant,
  });
  return {
    ctx,
    captured,
    rpcAnswers: () => server.requests.filter((r) => r.rpc === "HandleCascadeUserInteraction").length,
    async close() {
      await client.close();
      await server.close();
    },
  };
}

const PANE = { target: "%7", socketName: "work" };
const filler = (i: number) => at("run_command_done.json", i, "CORTEX_STEP_STATUS_DONE");

describe("answering in the TUI", () => {
  it("takes a gate RPC cannot answer to agy's dialog: approve moves to Yes, deny declines", async () => {
    const w = await world([filler(0), at("elicitation_waiting.json", 1)]);
    try {
      const { driver, choices } = recordingDriver();
      const gate = w.captured(1, "other", "elicitation");
      expect(await answerInTui(w.ctx, driver, PANE, gate, { kind: "permission", allow: true })).toEqual({ result: "delivered", stepIndex: 1, via: "tui" });
      expect(await answerInTui(w.ctx, driver, PANE, gate, { kind: "question", decline: true })).toEqual({ result: "delivered", stepIndex: 1, via: "tui" });
      expect(choices).toEqual([
        { choice: { kind: "approve" }, kinds: ["command", "file", "question", "other"] },
        { choice: { kind: "decline" }, kinds: ["command", "file", "question", "other"] },
      ]);
      expect(w.rpcAnswers()).toBe(0);
    } finally {
      await w.close();
    }
  });

  it("acts only on the dialog kind of the gate's variant", async () => {
    const w = await world([filler(0), at("file_permission_waiting.json", 1), at("run_command_interaction_waiting.json", 2)]);
    try {
      const { driver, choices } = recordingDriver();
      await answerInTui(w.ctx, driver, PANE, w.captured(1, "permission", "filePermission"), { kind: "permission", allow: false });
      await answerInTui(w.ctx, driver, PANE, w.captured(2, "permission", "runCommand"), { kind: "permission", allow: true });
      expect(choices).toEqual([
        { choice: { kind: "decline" }, kinds: ["file"] },
        { choice: { kind: "approve" }, kinds: ["command"] },
      ]);
    } finally {
      await w.close();
    }
  });

  it("hands the driver the session's agy version, so the keys come from that version's row of the key table", async () => {
    const w = await world([filler(0), at("run_command_interaction_waiting.json", 1)]);
    try {
      const { driver, versions } = recordingDriver();
      await answerInTui({ ...w.ctx, agyVersion: "1.2.10" }, driver, PANE, w.captured(1, "permission", "runCommand"), { kind: "permission", allow: false });
      await answerInTui(w.ctx, driver, PANE, w.captured(1, "permission", "runCommand"), { kind: "permission", allow: false });
      // Unknown stays unknown (null): the driver then uses the conservative row.
      expect(versions).toEqual(["1.2.10", null]);
    } finally {
      await w.close();
    }
  });

  it("throws the driver's failure with its keys, and reports a step that no longer waits without touching the pane", async () => {
    const w = await world([filler(0), at("run_command_interaction_waiting.json", 1), at("run_command_interaction_waiting.json", 2, "CORTEX_STEP_STATUS_DONE")]);
    try {
      const failing = recordingDriver("failed");
      await expect(
        answerInTui(w.ctx, failing.driver, PANE, w.captured(1, "permission", "runCommand"), { kind: "permission", allow: true }),
      ).rejects.toMatchObject({
        name: "TuiAnswerError",
        code: "tmux",
        keys: ["Down"],
        message: expect.stringContaining("not answered in the TUI: the pointer is on row 3"),
      });
      const idle = recordingDriver();
      expect(await answerInTui(w.ctx, idle.driver, PANE, w.captured(2, "permission", "runCommand"), { kind: "permission", allow: true })).toEqual({
        result: "already_resolved",
        stepIndex: 2,
      });
      expect(idle.choices).toEqual([]);
      expect(w.rpcAnswers()).toBe(0);
    } finally {
      await w.close();
    }
  });
});
