/**
 * An INVOKE_SUBAGENT step: the parent's step names the sub-agents, a child
 * conversation is created on the same server (its own entry in
 * `GetAllCascadeTrajectories`, with `parentConversationId`), its id fills
 * `results` positionally as soon as it exists, and the step stays RUNNING
 * until the child is idle (spike-notes §3.11, §4.3, §4.11).
 */
import { TurnStopped } from "./conversation.js";
import type { SubagentScriptStep } from "./scenario-schema.js";
import { moveStep, type JsonObject, type WireStep } from "./step-factory.js";
import type { TurnScope } from "./turn-scope.js";
import { STEP_STATUS, STEP_TYPE } from "../../protocol/wire-names.js";

const S = STEP_STATUS;

export async function playSubagent(scope: TurnScope, script: SubagentScriptStep): Promise<void> {
  const conv = scope.conv;
  const index = await scope.toolStep(
    {
      name: "invoke_subagent",
      args: { TypeName: script.typeName, Role: script.role, Prompt: script.prompt },
      toolAction: `Starting the ${script.typeName} sub-agent`,
      toolSummary: "Invoke sub-agent",
    },
    STEP_TYPE.INVOKE_SUBAGENT,
    { invokeSubagent: { subagents: [{ typeName: script.typeName, role: script.role }] } },
  );
  const step = (): WireStep => conv.steps[index] as WireStep;
  moveStep(step(), S.RUNNING, scope.settings.stamp());
  conv.touched(index);
  await scope.sleep(10);
  const child = scope.spawnSubagent({ typeName: script.typeName, role: script.role, prompt: scope.fill(script.prompt), steps: script.steps });
  (step().invokeSubagent as JsonObject).results = [{ conversationId: child.id }];
  conv.touched(index);
  await new Promise<void>((resolve, reject) => {
    const off = scope.token.onStop(() => {
      child.forceStop({ dropQueued: true });
      reject(new TurnStopped());
    });
    void child.whenIdle().then(() => {
      off();
      resolve();
    });
  });
  step().metadata.completedAt = scope.settings.stamp();
  moveStep(step(), S.DONE, scope.settings.stamp());
  conv.touched(index);
}
