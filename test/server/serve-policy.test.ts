/**
 * `agy-bridge serve --policy` end to end: the simulator running as agy in a
 * real tmux pane, found by discovery; the policy answers what it decides,
 * a bot or the page answers the rest, and the audit log holds every
 * decision in order.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readAuditLog } from "../../src/audit/index.js";
import { openSse, type SseClient } from "./support/sse-client.js";
import { startServeWorld, type ServeWorld } from "./support/serve-world.js";
import { until } from "../support/until.js";

/**
 * serve supervises every agy on the machine — other tests' simulators too —
 * so every rule that acts is limited to this test's own conversation.
 */
function policyFor(conversationId: string): string {
  return `version: 1
default: ask
rules:
  - id: no-delete
    kind: command
    conversations: ["${conversationId}"]
    commands: ["rm *"]
    action: deny
    instruction: Keep the build directory.
  - id: read-only
    kind: command
    conversations: ["${conversationId}"]
    commands: ["pwd"]
    action: approve
  - id: reads-in-workspace
    kind: file
    conversations: ["${conversationId}"]
    operations: [read]
    paths: ["{workspace}/**"]
    action: approve
  - id: files-elsewhere
    kind: file
    action: ask
`;
}

let world: ServeWorld | undefined;
let dir: string | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

interface Resolved {
  interactionId: string;
  outcome: string;
  decidedBy?: string;
}

function resolvedOf(events: SseClient): Resolved[] {
  return events.messages.filter((m) => m.event === "interaction_resolved").map((m) => JSON.parse(m.data) as Resolved);
}

function idles(events: SseClient): number {
  return events.messages.filter((m) => m.event === "status" && (JSON.parse(m.data) as { status: string }).status === "idle").length;
}

describe("agy-bridge serve --policy", { timeout: 120_000 }, () => {
  it("answers by policy, leaves the asked request to the page, and logs all of it in order", async () => {
    dir = await mkdtemp(join(tmpdir(), "agyb-policy-"));
    const policyFile = join(dir, "policy.yaml");
    // First without a policy, to learn which conversation is ours; then with one limited to it.
    let socket = "";
    world = await startServeWorld({ serveArgs: (tmux) => ((socket = tmux.socketName), ["-L", socket, "--refresh-ms", "300"]) });
    const w = world;
    await writeFile(policyFile, policyFor(w.conversationId));
    await w.restartServe(["-L", socket, "--refresh-ms", "300", "--policy", policyFile, "--workspace", "/home/sim/project"]);
    const events = await openSse(`${w.url}/v1/sessions/${w.conversationId}/events`, { authorization: `Bearer ${w.token}` });
    const turn = async (text: string) => {
      const idleBefore = idles(events);
      const answer = await w.api(`/v1/sessions/${w.conversationId}/turns`, { method: "POST", body: JSON.stringify({ text }) });
      expect(await answer.json(), w.stderr()).toMatchObject({ result: "delivered" });
      return idleBefore;
    };
    try {
      let before = await turn("Run pwd");
      await events.until(() => resolvedOf(events).length === 1 && idles(events) > before, "the policy to approve pwd and the turn to end", 30_000);
      before = await turn("Delete the build directory");
      await events.until(() => resolvedOf(events).length === 2 && idles(events) > before, "the policy to deny rm and the turn to end", 30_000);
      await turn("Read my shell profile");
      const pending = await until(
        async () => {
          const list = ((await (await w.api(`/v1/sessions/${w.conversationId}/pending`)).json()) as { pending: { interactionId: string }[] }).pending;
          return list.length === 1 ? list[0] : undefined;
        },
        "the file request the policy asks about",
        { ms: 30_000, everyMs: 100 },
      );
      const approve = await w.api(`/v1/sessions/${w.conversationId}/interactions/${pending.interactionId}`, {
        method: "POST",
        headers: { "x-agy-bridge-client": "page" },
        body: JSON.stringify({ action: "approve" }),
      });
      expect(await approve.json()).toMatchObject({ result: "delivered" });
      await events.until(() => resolvedOf(events).length === 3, "the page's approval", 30_000);
      expect(resolvedOf(events).map((r) => [r.outcome, r.decidedBy])).toEqual([
        ["approved", "policy:read-only"],
        ["denied", "policy:no-delete"],
        ["approved", "page"],
      ]);

      const audit = join(w.stateDir, "agy-bridge", "audit.jsonl");
      const records = await until(
        async () => {
          // serve follows every agy on the machine: other tests' conversations may be logged too.
          const records = (await readAuditLog(audit)).records.filter((r) => r.conversationId === w.conversationId);
          return records.length >= 4 ? records : undefined;
        },
        "four audit records",
        { ms: 30_000, everyMs: 100 },
      );
      expect(records.map((r) => [r.decision, r.decidedBy, r.delivery, r.request.commandLine ?? r.request.path])).toEqual([
        ["approve", "policy:read-only", "delivered", "pwd"],
        ["deny", "policy:no-delete", "delivered", "rm -rf build"],
        ["ask", "policy:files-elsewhere", "pending", "file:///home/sim/.bashrc"],
        ["approve", "page", "delivered", "file:///home/sim/.bashrc"],
      ]);
      expect(JSON.stringify(records)).not.toContain(w.token);
    } finally {
      events.close();
    }
  });

  it("refuses to start on a policy with an error, naming its line and column", async () => {
    dir = await mkdtemp(join(tmpdir(), "agyb-policy-"));
    const policyFile = join(dir, "policy.yaml");
    await writeFile(policyFile, "version: 1\nrules:\n  - id: q\n    kind: question\n    action: approve\n");
    const { startServeProcess } = await import("./support/serve-process.js");
    await expect(startServeProcess({ configHome: dir, args: ["--policy", policyFile] })).rejects.toThrow(
      `${policyFile}:5:13: rules[0].action: approve is not valid for kind question (a rule cannot pick an answer); write deny or ask`,
    );
  });
});
