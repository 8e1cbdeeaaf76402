/**
 * What the fake TUI shows of a conversation: the transcript as agy draws it
 * (user turns, reasoning, tool rows with their results, replies) and the
 * dialog a WAITING step asks (spike-notes §5.4, §13).
 */
import type { SimConversation } from "../engine/conversation.js";
import { CODE_ACTION_TYPE, WRITE_TO_FILE_TYPE } from "../engine/gated-steps.js";
import type { JsonObject, WireStep } from "../engine/step-factory.js";
import type { TuiPending, TuiQuestion, TuiTranscriptEntry, TuiView } from "./tui-port.js";
import { asObject, asString } from "../../protocol/json.js";
import { STEP_STATUS, STEP_TYPE } from "../../protocol/wire-names.js";

export function buildTuiView(conversation: SimConversation): TuiView {
  const transcript: TuiTranscriptEntry[] = [];
  let pending: TuiPending | undefined;
  conversation.steps.forEach((step, index) => {
    if (step.status === STEP_STATUS.WAITING) {
      pending ??= pendingOf(conversation, step, index);
      return;
    }
    transcript.push(...entriesOf(step));
  });
  const view: TuiView = { conversationId: conversation.id, running: conversation.running, transcript, model: conversation.model };
  if (pending !== undefined) view.pending = pending;
  return view;
}

const DECLINED = "User declined the tool call";
/** The simulator's workspace (what its scenarios and GetConversationMetadata use by default). */
const SIM_WORKSPACE = "/home/sim/project";

/** A tool row `● Name(arg)` with its result under `⎿`. */
function tool(name: string, arg: string, text: string, extra: { expandable?: boolean; header?: string } = {}): TuiTranscriptEntry {
  const entry: TuiTranscriptEntry = { role: "tool", text, call: { name, arg, expandable: extra.expandable ?? true } };
  if (extra.header !== undefined) entry.header = extra.header;
  return entry;
}

function entriesOf(step: WireStep): TuiTranscriptEntry[] {
  const failed = step.status === STEP_STATUS.ERROR;
  switch (step.type) {
    case STEP_TYPE.USER_INPUT:
      return [{ role: "user", text: String((step.userInput as JsonObject).userResponse ?? "") }];
    case STEP_TYPE.PLANNER_RESPONSE: {
      const planner = step.plannerResponse as JsonObject;
      if (failed) return [{ role: "error", text: asString(asObject(step.error)?.userErrorMessage) ?? "The model returned an error." }];
      const out: TuiTranscriptEntry[] = [];
      const thinking = asString(planner.thinking);
      if (thinking !== undefined && thinking !== "") out.push({ role: "reasoning", text: thoughtFor(step, thinking) });
      const text = planner.modifiedResponse ?? planner.response;
      if (typeof text === "string" && text !== "") out.push({ role: "assistant", text });
      return out;
    }
    case STEP_TYPE.RUN_COMMAND: {
      const run = step.runCommand as JsonObject;
      const command = String(run.commandLine);
      // agy's tool row names only the command's first line (agy 1.1.27, spike-notes §13).
      const arg = command.split("\n")[0] ?? "";
      if (failed) return [tool("Bash", arg, "Prompt timed out")];
      if (step.status === STEP_STATUS.CANCELED) return [tool("Bash", arg, "Interrupted")];
      if (run.exitCode === undefined) {
        return step.status === STEP_STATUS.DONE ? [tool("Bash", arg, DECLINED, { header: "Command" })] : [tool("Bash", arg, "Running…")];
      }
      const output = (asString(asObject(run.combinedOutput)?.full) ?? "").replace(/\s+$/, "");
      return [tool("Bash", arg, output)];
    }
    case STEP_TYPE.ASK_QUESTION: {
      if (step.status !== STEP_STATUS.DONE && !failed) return [];
      const questions = ((step.askQuestion as JsonObject).questions ?? []) as JsonObject[];
      return questions.map((q) => {
        const options = (q.options ?? []) as { id: string; text: string }[];
        const ids = (q.selectedOptionIds ?? []) as string[];
        const chosen = options.filter((o) => ids.includes(o.id)).map((o) => o.text);
        return tool("Question", String(q.question), chosen.length > 0 ? chosen.join(", ") : failed ? "Timed out" : "Skipped", { expandable: false });
      });
    }
    case STEP_TYPE.LIST_DIRECTORY:
      return [tool("List", pathOf(asString(asObject(step.listDirectory)?.directoryPathUri)), "")];
    case STEP_TYPE.VIEW_FILE: {
      const uri = asString(asObject(step.viewFile)?.absolutePathUri);
      if (uri !== undefined) return [tool("Read", pathOf(uri), "")];
      const asked = pathOf(asString(asObject(asObject(step.requestedInteraction)?.filePermission)?.absolutePathUri));
      if (step.status === STEP_STATUS.CANCELED) return [tool("Read", asked, "Interrupted")];
      return step.status === STEP_STATUS.DONE ? [tool("Read", asked, DECLINED, { header: "Read file" })] : [];
    }
    case CODE_ACTION_TYPE:
    case WRITE_TO_FILE_TYPE: {
      const edit = step.type === CODE_ACTION_TYPE;
      const path =
        pathOf(asString(asObject(asObject(step.requestedInteraction)?.filePermission)?.absolutePathUri)) || (asString(toolArgs(step).TargetFile) ?? "");
      const name = edit ? "Edit" : "Create";
      if (failed) return [tool(name, path, "Prompt timed out")];
      if (step.status === STEP_STATUS.CANCELED) return [tool(name, path, "Interrupted")];
      if (step.status !== STEP_STATUS.DONE) return [];
      return [wrote(step) ? tool(name, path, edit ? "Edited" : "Created") : tool(name, path, DECLINED, { header: edit ? "Pending edit" : "Create file" })];
    }
    case STEP_TYPE.ERROR_MESSAGE: {
      const body = asObject(step.errorMessage);
      if (body?.shouldShowUser !== true) return [];
      return [{ role: "error", text: asString(asObject(body.error)?.userErrorMessage) ?? "agy reported an error." }];
    }
    case STEP_TYPE.INVOKE_SUBAGENT: {
      const names = ((asObject(step.invokeSubagent)?.subagents ?? []) as JsonObject[]).map((a) => String(a.typeName)).join(", ");
      return [tool("Subagent", names, step.status === STEP_STATUS.DONE ? "Finished" : "Working…", { expandable: false })];
    }
    case STEP_TYPE.GENERIC: {
      const name = asString(asObject(step.metadata.toolCall)?.name) ?? "tool";
      return [tool(name, "", asString(asObject(asObject(step.generic)?.result)?.result) ?? "", { expandable: false })];
    }
    default:
      return [];
  }
}

/** agy's reasoning row text; the simulator has no wall clock to report, so seconds follow the token count. */
function thoughtFor(step: WireStep, thinking: string): string {
  const usage = asObject(step.metadata.modelUsage);
  const tokens = Number(asString(usage?.thinkingOutputTokens) ?? Math.ceil(thinking.length / 4));
  return `Thought for ${Math.max(1, Math.round(tokens / 250))}s, ${tokens} tokens`;
}

function pathOf(uri: string | undefined): string {
  return (uri ?? "").replace(/^file:\/\//, "");
}

function pendingOf(conversation: SimConversation, step: WireStep, stepIndex: number): TuiPending | undefined {
  const request = asObject(step.requestedInteraction);
  if (request === undefined) return undefined;
  const permission = asObject(request.permission);
  if (permission !== undefined) {
    const pending: TuiPending = {
      kind: "permission",
      trajectoryId: conversation.trajectoryId,
      stepIndex,
      target: asString(asObject(permission.resource)?.target) ?? "",
      description: String(permission.actionDescription ?? ""),
    };
    const pattern = asString(permission.suggestedPersistPattern);
    if (pattern !== undefined) pending.suggestedPersistPattern = pattern;
    if (pending.target !== "" && deniedBefore(conversation, stepIndex, pending.target)) pending.deniedBefore = true;
    return pending;
  }
  const file = asObject(request.filePermission);
  if (file !== undefined) return filePending(conversation, step, stepIndex, pathOf(asString(file.absolutePathUri)));
  const ask = asObject(request.askQuestion);
  if (ask === undefined) return undefined;
  const multi = multiSelectFlags(step);
  const questions: TuiQuestion[] = ((ask.questions ?? []) as JsonObject[]).map((q, i) => ({
    question: String(q.question),
    options: ((q.options ?? []) as { id: string; text: string }[]).map((o) => ({ id: o.id, text: o.text })),
    multiSelect: multi[i] === true,
  }));
  return { kind: "question", trajectoryId: conversation.trajectoryId, stepIndex, questions };
}

/**
 * The dialog of a file-permission gate, told by the step's type: a
 * CODE_ACTION is an edit (`Pending edit`, its diff from the tool call's
 * `TargetContent` / `ReplacementContent`), a WRITE_TO_FILE a new file
 * (`Create file`, its lines from `CodeContent`), anything else a read
 * (`File access`). A path outside the workspace adds `Reason: outside
 * workspace` and the "always allow non-workspace access" option to a create
 * or a read (spike-notes §13 #32, K8).
 */
function filePending(conversation: SimConversation, step: WireStep, stepIndex: number, path: string): TuiPending {
  const base = { kind: "permission" as const, trajectoryId: conversation.trajectoryId, stepIndex, target: path };
  const outside = !path.startsWith(`${SIM_WORKSPACE}/`);
  const args = toolArgs(step);
  if (step.type === CODE_ACTION_TYPE) {
    return { ...base, description: `Edit ${path}`, action: "edit-file", removed: linesOf(args.TargetContent), preview: linesOf(args.ReplacementContent) };
  }
  if (step.type === WRITE_TO_FILE_TYPE) {
    return {
      ...base,
      description: `Create ${path}`,
      action: "create-file",
      preview: linesOf(args.CodeContent),
      ...(outside ? { outsideWorkspace: true } : {}),
    };
  }
  // agy asks for file access only outside the workspace (spike-notes §13 #32, K8).
  return { ...base, description: `Read ${path}`, action: "read-file", ...(outside ? { outsideWorkspace: true } : {}) };
}

/** A settled edit or creation that ran: its echoed answer allowed it. */
function wrote(step: WireStep): boolean {
  const done = (step.completedInteractions ?? []) as JsonObject[];
  return done.some((c) => asObject(asObject(c.response)?.filePermission)?.allow === true);
}

/** The tool call's arguments (`argumentsJson`), or {} when they do not parse. */
function toolArgs(step: WireStep): JsonObject {
  try {
    return asObject(JSON.parse(asString(asObject(step.metadata.toolCall)?.argumentsJson) ?? "{}")) ?? {};
  } catch {
    return {};
  }
}

function linesOf(text: unknown): string[] {
  return typeof text === "string" && text !== "" ? text.split("\n") : [];
}

/** An earlier command step with the same command line was declined (agy then offers "always deny", agy 1.1.27). */
function deniedBefore(conversation: SimConversation, stepIndex: number, commandLine: string): boolean {
  return conversation.steps.slice(0, stepIndex).some((step) => {
    if (step.type !== STEP_TYPE.RUN_COMMAND || step.status !== STEP_STATUS.DONE) return false;
    const run = step.runCommand as JsonObject;
    return run.commandLine === commandLine && run.exitCode === undefined;
  });
}

/** `is_multi_select` lives only in the tool call's argumentsJson (agy 1.0.10). */
function multiSelectFlags(step: WireStep): boolean[] {
  try {
    const args = asObject(JSON.parse(asString(asObject(step.metadata.toolCall)?.argumentsJson) ?? "{}")) ?? {};
    return ((args.questions ?? []) as JsonObject[]).map((q) => q.is_multi_select === true);
  } catch {
    return [];
  }
}
