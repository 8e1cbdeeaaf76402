/**
 * `serve --policy` decides before it publishes (issue 34, item 3): a bot that
 * polls `/pending` and reads the SSE stream as fast as it can never sees a
 * request the policy approves or denies as pending, and when it answers one
 * anyway (its id is on the stream, with the verdict) it is refused with 409
 * `decided_by_policy` — by construction, whatever the timing. A request the
 * policy leaves to a person reaches the bot, which answers it.
 *
 * A real serve process, the simulator as agy in a private tmux server.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openSse, type SseClient } from "./support/sse-client.js";
import { startServeWorld, type ServeWorld } from "./support/serve-world.js";
import { until } from "../support/until.js";

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

interface Requested {
  interactionId: string;
  request: { target?: string };
  policy?: { decision: string; rule: string | null };
}

interface Resolved {
  interactionId: string;
  outcome: string;
  decidedBy?: string;
}

function requestedOf(events: SseClient): Requested[] {
  return events.messages.filter((m) => m.event === "interaction_requested").map((m) => JSON.parse(m.data) as Requested);
}

function resolvedOf(events: SseClient): Resolved[] {
  return events.messages.filter((m) => m.event === "interaction_resolved").map((m) => JSON.parse(m.data) as Resolved);
}

function idles(events: SseClient): number {
  return events.messages.filter((m) => m.event === "status" && (JSON.parse(m.data) as { status: string }).status === "idle").length;
}

/**
 * The bot: polls `/pending` back to back and, for every interaction it sees
 * (listed there or requested on the stream), posts an approve at once —
 * the answer a careless bot would give to everything.
 */
function startBot(w: ServeWorld, events: SseClient) {
  const seenPending = new Set<string>();
  const answers = new Map<string, { status: number; code?: string }>();
  let stopped = false;
  const tried = new Set<string>();
  const attempt = async (interactionId: string) => {
    if (tried.has(interactionId)) return;
    tried.add(interactionId);
    const res = await w.api(`/v1/sessions/${w.conversationId}/interactions/${interactionId}`, { method: "POST", body: JSON.stringify({ action: "approve" }) });
    const body = (await res.json()) as { code?: string; result?: string };
    answers.set(interactionId, {
      status: res.status,
      ...(body.code === undefined ? (body.result === undefined ? {} : { code: body.result }) : { code: body.code }),
    });
  };
  const pendingLoop = (async () => {
    while (!stopped) {
      const res = await w.api(`/v1/sessions/${w.conversationId}/pending`);
      const list = ((await res.json()) as { pending: { interactionId: string }[] }).pending;
      for (const p of list) {
        seenPending.add(p.interactionId);
        void attempt(p.interactionId);
      }
    }
  })();
  const streamLoop = (async () => {
    while (!stopped) {
      for (const r of requestedOf(events)) void attempt(r.interactionId);
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  return {
    seenPending,
    answers,
    async stop() {
      stopped = true;
      await Promise.all([pendingLoop, streamLoop]);
    },
  };
}

describe("agy-bridge serve --policy decides before it publishes", { timeout: 120_000 }, () => {
  it("never lists a request the policy decides, refuses a bot's answer to it, and lets an asked one through", async () => {
    dir = await mkdtemp(join(tmpdir(), "agyb-policy-first-"));
    const policyFile = join(dir, "policy.yaml");
    let socket = "";
    world = await startServeWorld({ serveArgs: (tmux) => ((socket = tmux.socketName), ["-L", socket, "--refresh-ms", "300"]) });
    const w = world;
    await writeFile(policyFile, policyFor(w.conversationId));
    await w.restartServe(["-L", socket, "--refresh-ms", "300", "--policy", policyFile, "--workspace", "/home/sim/project"]);
    const events = await openSse(`${w.url}/v1/sessions/${w.conversationId}/events`, { authorization: `Bearer ${w.token}` });
    const bot = startBot(w, events);
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
      await events.until(() => resolvedOf(events).length === 3, "the bot to approve the asked file read", 30_000);
      await bot.stop();

      const requested = requestedOf(events);
      expect(requested.map((r) => [r.request.target, r.policy])).toEqual([
        ["pwd", { decision: "approve", rule: "read-only" }],
        ["rm -rf build", { decision: "deny", rule: "no-delete" }],
        ["file:///home/sim/.bashrc", { decision: "ask", rule: "files-elsewhere" }],
      ]);
      const [pwd, rmRf, read] = requested.map((r) => r.interactionId) as [string, string, string];
      // The bot read /pending back to back the whole time: only the asked request was ever in it.
      expect([...bot.seenPending]).toEqual([read]);
      // It tried to approve all three (the ids were on the stream): the policy's two are refused, whatever the timing.
      await until(() => (bot.answers.size === 3 ? true : undefined), "the bot's three answers", { ms: 10_000, everyMs: 20 });
      expect(bot.answers.get(pwd)).toEqual({ status: 409, code: "decided_by_policy" });
      expect(bot.answers.get(rmRf)).toEqual({ status: 409, code: "decided_by_policy" });
      expect(bot.answers.get(read)).toEqual({ status: 200, code: "delivered" });
      expect(resolvedOf(events).map((r) => [r.interactionId, r.outcome, r.decidedBy])).toEqual([
        [pwd, "approved", "policy:read-only"],
        [rmRf, "denied", "policy:no-delete"],
        [read, "approved", "http:default"],
      ]);
    } finally {
      await bot.stop();
      events.close();
    }
  });
});
