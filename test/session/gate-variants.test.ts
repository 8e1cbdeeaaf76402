/**
 * Delivering verdicts to the gates agy's schema defines beyond
 * `permission`/`askQuestion` (spike-notes §11): `runCommand`, `filePermission`
 * and a gate of no answerable kind. A real RPC client talks to a loopback
 * server that serves the fixture steps and records every answer's bytes.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createAgyRpcClient } from "../../src/rpc/client.js";
import { deliverVerdict, findInteraction, type CapturedInteraction, type DeliveryContext, type Verdict } from "../../src/session/interaction-delivery.js";
import { interactionIdFor } from "../../src/mapper/index.js";
import { agyLikeHandler } from "../support/connect-replies.js";
import { startLoopbackServer, type LoopbackServer } from "../support/loopback-server.js";

const CONV = "c-1";
const WAITING = "CORTEX_STEP_STATUS_WAITING";
const ERROR = "CORTEX_STEP_STATUS_ERROR";

type Step = Record<string, unknown> & { metadata: { sourceTrajectoryStepInfo: Record<string, unknown> } };

function fixture(name: string): Step {
  return JSON.parse(readFileSync(new URL(`../../fixtures/steps/${name}`, import.meta.url), "utf8")) as Step;
}

const TID = fixture("run_command_interaction_waiting.json").metadata.sourceTrajectoryStepInfo["trajectoryId"] as string;

/** A fixture step placed at `index` with `status`. */
function at(name: string, index: number, status = WAITING): Step {
  const step = fixture(name);
  step.status = status;
  step.metadata.sourceTrajectoryStepInfo["stepIndex"] = index;
  return step;
}

interface GateWorld {
  server: LoopbackServer;
  ctx: DeliveryContext;
  /** The bodies of every HandleCascadeUserInteraction the server saw. */
  answers(): string[];
  close(): Promise<void>;
}

/** A loopback agy serving `steps` (honouring `stepOffset`), accepting every answer. */
async function gateWorld(steps: Step[]): Promise<GateWorld> {
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
  return {
    server,
    ctx: { client: () => client },
    answers: () => server.requests.filter((r) => r.rpc === "HandleCascadeUserInteraction").map((r) => r.body.toString("utf8")),
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
const deny: Verdict = { kind: "permission", allow: false };
const filler = (index: number) => at("run_command_done.json", index, "CORTEX_STEP_STATUS_DONE");

describe("runCommand gates", () => {
  it("approves with confirm true, echoing the proposed command line", async () => {
    const world = await gateWorld([filler(0), at("run_command_interaction_waiting.json", 1)]);
    try {
      expect(await deliverVerdict(world.ctx, captured(1, "permission", "runCommand"), approve)).toEqual({ result: "delivered", stepIndex: 1 });
      expect(world.answers()).toEqual([
        `{"cascadeId":"c-1","interaction":{"trajectoryId":"${TID}","stepIndex":1,` +
          '"runCommand":{"confirm":true,"proposedCommandLine":"rm -rf build","submittedCommandLine":"rm -rf build"}}}',
      ]);
    } finally {
      await world.close();
    }
  });

  it("denies with confirm false", async () => {
    const world = await gateWorld([filler(0), at("run_command_interaction_waiting.json", 1)]);
    try {
      expect(await deliverVerdict(world.ctx, captured(1, "permission", "runCommand"), deny)).toEqual({ result: "delivered", stepIndex: 1 });
      expect(JSON.parse(world.answers()[0] ?? "{}")).toMatchObject({ interaction: { stepIndex: 1, runCommand: { confirm: false } } });
    } finally {
      await world.close();
    }
  });

  it("refuses a scope, which the variant cannot carry, sending nothing", async () => {
    const world = await gateWorld([filler(0), at("run_command_interaction_waiting.json", 1)]);
    try {
      const gate = captured(1, "permission", "runCommand");
      await expect(deliverVerdict(world.ctx, gate, { ...approve, scope: "PERMISSION_SCOPE_CONVERSATION" })).rejects.toThrow(
        `Interaction ${gate.interactionId} is a runCommand gate, which takes no scope; approve it without one.`,
      );
      expect(world.answers()).toEqual([]);
    } finally {
      await world.close();
    }
  });
});

describe("filePermission gates", () => {
  it("approves with allow and the caller's scope", async () => {
    const world = await gateWorld([filler(0), filler(1), at("file_permission_waiting.json", 2)]);
    try {
      const verdict: Verdict = { ...approve, scope: "PERMISSION_SCOPE_WORKSPACE" };
      expect(await deliverVerdict(world.ctx, captured(2, "permission", "filePermission"), verdict)).toEqual({ result: "delivered", stepIndex: 2 });
      expect(world.answers()).toEqual([
        `{"cascadeId":"c-1","interaction":{"trajectoryId":"${TID}","stepIndex":2,"filePermission":{"allow":true,"scope":"PERMISSION_SCOPE_WORKSPACE"}}}`,
      ]);
    } finally {
      await world.close();
    }
  });

  it("finds an unannounced gate with its variant", async () => {
    const world = await gateWorld([filler(0), at("file_permission_waiting.json", 1)]);
    try {
      const id = interactionIdFor(CONV, TID, 1);
      expect(await findInteraction(world.ctx, CONV, id)).toEqual(captured(1, "permission", "filePermission"));
    } finally {
      await world.close();
    }
  });
});

describe("retargeting across variants", () => {
  it("takes a timed-out gate's retry of the same variant", async () => {
    const world = await gateWorld([
      filler(0),
      at("file_permission_waiting.json", 1, ERROR),
      at("run_command_interaction_waiting.json", 2),
      at("file_permission_waiting.json", 3),
    ]);
    try {
      expect(await deliverVerdict(world.ctx, captured(1, "permission", "filePermission"), approve)).toEqual({ result: "delivered", stepIndex: 3 });
      expect(JSON.parse(world.answers()[0] ?? "{}")).toMatchObject({ interaction: { stepIndex: 3, filePermission: { allow: true } } });
    } finally {
      await world.close();
    }
  });

  it("never hands a filePermission verdict to a runCommand or permission gate", async () => {
    const world = await gateWorld([
      filler(0),
      at("file_permission_waiting.json", 1, ERROR),
      at("run_command_interaction_waiting.json", 2),
      at("run_command_waiting.json", 3),
    ]);
    try {
      expect(await deliverVerdict(world.ctx, captured(1, "permission", "filePermission"), approve)).toEqual({ result: "timed_out", stepIndex: 1 });
      expect(world.answers()).toEqual([]);
    } finally {
      await world.close();
    }
  });
});

describe("a gate of no answerable kind", () => {
  it("is refused with the sentence to answer it in the TUI, for an approval and a deny alike", async () => {
    const world = await gateWorld([filler(0), at("elicitation_waiting.json", 1)]);
    try {
      const gate = captured(1, "other", "elicitation");
      const sentence = `Interaction ${gate.interactionId} waits on the elicitation gate, which agy-bridge cannot answer over RPC; answer it in the agy TUI.`;
      await expect(deliverVerdict(world.ctx, gate, approve)).rejects.toThrow(sentence);
      await expect(deliverVerdict(world.ctx, gate, { kind: "question", decline: true })).rejects.toThrow(sentence);
      expect(world.answers()).toEqual([]);
    } finally {
      await world.close();
    }
  });
});
