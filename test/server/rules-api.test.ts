/**
 * Learned rules over HTTP (issue 37 §2): the proposal for a pending
 * interaction, `remember` on an answer (the response carries `rule`),
 * `GET /v1/rules` and `DELETE /v1/rules/{id}` — over a real loopback
 * server, with the CLI's rules file store in a temporary directory.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAuditLog, readAuditLog } from "../../src/audit/index.js";
import { createLearnedStore, type LearnedStore } from "../../src/audit/learned-store.js";
import { decide, parsePolicy } from "../../src/policy/index.js";
import { until } from "../support/until.js";
import { startApiHarness, type ApiHarness } from "./support/api-harness.js";
import { permissionRequested } from "./support/scripted-session.js";

describe("learned rules over HTTP", () => {
  let dir: string;
  let store: LearnedStore;
  let h: ApiHarness;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "agy-rules-api-"));
    store = createLearnedStore({ file: join(dir, "learned.yaml"), audit: createAuditLog({ path: join(dir, "audit.jsonl") }) });
    h = await startApiHarness({ rules: store, describe: () => ({ workspace: "/home/me/project" }) });
  });
  afterEach(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function pendingCommand(command: string, stepIndex = 5): Promise<string> {
    const session = h.sessions.get("conv-a") ?? h.addSession("conv-a");
    await h.hub.refresh();
    const event = permissionRequested("conv-a", stepIndex, command) as { interactionId: string };
    session.push(event as never);
    await until(
      async () =>
        h.hub
          .get("conv-a")
          ?.pending()
          .some((p) => p.interactionId === event.interactionId),
      "the request to be pending",
      {
        ms: 10_000,
        everyMs: 20,
        errors: "throw",
      },
    );
    return event.interactionId;
  }
  const post = (path: string, body: unknown) => h.fetch(path, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });

  it("proposes the narrowest rule for a pending interaction, exactly as it would be saved", async () => {
    const iid = await pendingCommand("npm test -- --watch");
    const proposed = await h.fetch(`/v1/sessions/conv-a/interactions/${iid}/proposed-rule`);
    expect(proposed.status).toBe(200);
    expect(await proposed.json()).toEqual({ match: "npm test -- --watch", scope: "workspace", kind: "command", alternatives: ["npm test *"] });
    const approve = await h.fetch(`/v1/sessions/conv-a/interactions/${iid}/proposed-rule?decision=approve&scope=everywhere`);
    expect(await approve.json()).toMatchObject({ decision: "approve", scope: "everywhere" });
    expect((await h.fetch(`/v1/sessions/conv-a/interactions/${iid}/proposed-rule?scope=galaxy`)).status).toBe(400);
    expect((await h.fetch(`/v1/sessions/conv-a/interactions/int_none/proposed-rule`)).status).toBe(404);
    const two = await pendingCommand("npm ci && npm test", 7);
    const refused = await h.fetch(`/v1/sessions/conv-a/interactions/${two}/proposed-rule`);
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as { detail: string }).detail).toMatch(/runs 2 commands/);
  });

  it("saves the rule an answer remembers, lists it, and revokes it so it stops matching at once", async () => {
    const iid = await pendingCommand("rm -rf build");
    const answered = await post(`/v1/sessions/conv-a/interactions/${iid}`, { action: "approve", remember: { scope: "workspace" } });
    expect(answered.status).toBe(200);
    const body = (await answered.json()) as { result: string; rule: { id: string } };
    expect(body).toMatchObject({ result: "delivered", stepIndex: 6, rule: { decision: "approve", match: "rm -rf build", scope: "workspace" } });
    expect(h.sessions.get("conv-a")?.answers).toEqual([{ interactionId: iid, action: { action: "approve" } }]);

    const listed = (await (await h.fetch("/v1/rules")).json()) as { rules: Array<Record<string, unknown>> };
    expect(listed.rules).toEqual([expect.objectContaining({ id: body.rule.id, addedBy: "http:default", fromRequest: iid, fired: 0, lastFired: null })]);

    // The saved rule decides through the policy: this command, not a wider one.
    const team = { ...parsePolicy("version: 1\n", "team.yaml"), learned: store.source };
    const context = { workspace: "/home/me/project", conversationId: "conv-a" };
    expect(decide(team, { kind: "command", commandLine: "rm -rf build" }, context).rule).toBe(body.rule.id);
    expect(decide(team, { kind: "command", commandLine: "rm -rf /" }, context).decision).toBe("ask");

    const revoked = await h.fetch(`/v1/rules/${body.rule.id}`, { method: "DELETE", headers: { "x-agy-bridge-client": "page" } });
    expect(revoked.status).toBe(200);
    expect(await revoked.json()).toMatchObject({ revoked: { id: body.rule.id } });
    expect(decide(team, { kind: "command", commandLine: "rm -rf build" }, context).decision).toBe("ask");
    expect((await h.fetch(`/v1/rules/${body.rule.id}`, { method: "DELETE" })).status).toBe(404);
    expect(await (await h.fetch("/v1/rules")).json()).toEqual({ rules: [] });
    const logged = (await readAuditLog(join(dir, "audit.jsonl"))).records.map((r) => [r.delivery, r.decidedBy]);
    expect(logged).toEqual([
      ["rule_created", "http:default"],
      ["rule_revoked", "page"],
    ]);
  });

  it("checks an edited rule before answering, and saves nothing for an answer that was not delivered", async () => {
    const iid = await pendingCommand("npm test -- --watch");
    const wide = await post(`/v1/sessions/conv-a/interactions/${iid}`, { action: "deny", remember: { scope: "everywhere", rule: "npm *" } });
    expect(wide.status).toBe(200);
    expect(await wide.json()).toMatchObject({ rule: { decision: "deny", match: "npm *", scope: "everywhere" } });
    const other = await pendingCommand("npm test -- --watch", 9);
    const uncovered = await post(`/v1/sessions/conv-a/interactions/${other}`, { action: "approve", remember: { scope: "workspace", rule: "yarn *" } });
    expect(uncovered.status).toBe(422);
    expect(((await uncovered.json()) as { detail: string }).detail).toMatch(/does not cover the command/);
    expect(h.sessions.get("conv-a")?.answers.map((a) => a.interactionId)).toEqual([iid]);
    expect((await post(`/v1/sessions/conv-a/interactions/${other}`, { action: "approve", remember: { scope: "nowhere" } })).status).toBe(400);
    expect(readFileSync(join(dir, "learned.yaml"), "utf8").match(/- id: learned-/g)?.length).toBe(1);
  });

  it("proposes a file request's path inside the workspace serve knows, limited to its operation", async () => {
    const session = h.addSession("conv-a");
    await h.hub.refresh();
    session.push({
      type: "interaction_requested",
      conversationId: "conv-a",
      trajectoryId: "traj-1",
      stepIndex: 8,
      interactionId: "int_file",
      stepType: "CODE_ACTION",
      callId: "c8",
      request: { kind: "permission", variant: "filePermission", action: "file", target: "file:///home/me/project/src/a.ts", description: "edit" },
    } as never);
    await until(async () => h.hub.get("conv-a")?.pending().length === 1, "the file request to be pending", { ms: 10_000, everyMs: 20, errors: "throw" });
    expect(await (await h.fetch("/v1/sessions/conv-a/interactions/int_file/proposed-rule")).json()).toEqual({
      match: "{workspace}/src/a.ts",
      scope: "workspace",
      kind: "file",
      operation: "edit",
      alternatives: ["{workspace}/src/**"],
    });
    const saved = await post("/v1/sessions/conv-a/interactions/int_file", { action: "approve", remember: { scope: "workspace", rule: "/etc/**" } });
    expect(saved.status).toBe(422);
    expect(((await saved.json()) as { detail: string }).detail).toMatch(/must start with \{workspace\}\//);
    expect(h.sessions.get("conv-a")?.answers).toEqual([]);
  });

  it("scopes a workspace rule to the workspace the policy decides with, not agy's process directory", async () => {
    await h.close();
    h = await startApiHarness({ rules: store, describe: () => ({ workspace: "/home/me/started-here" }), ruleWorkspace: () => "/home/me/project" });
    const iid = await pendingCommand("make lint");
    const answered = await post(`/v1/sessions/conv-a/interactions/${iid}`, { action: "approve", remember: { scope: "workspace" } });
    const body = (await answered.json()) as { rule: { id: string } };
    const team = { ...parsePolicy("version: 1\n", "team.yaml"), learned: store.source };
    expect(decide(team, { kind: "command", commandLine: "make lint" }, { workspace: "/home/me/project", conversationId: "conv-a" }).rule).toBe(body.rule.id);
    expect(decide(team, { kind: "command", commandLine: "make lint" }, { workspace: "/home/me/started-here", conversationId: "conv-a" }).decision).toBe("ask");
  });

  it("answers 404 on the rules routes when serve keeps no rules file", async () => {
    const bare = await startApiHarness();
    try {
      expect((await bare.fetch("/v1/rules")).status).toBe(404);
    } finally {
      await bare.close();
    }
  });
});

describe("learned rules' paths on a server that keeps none", () => {
  it("answers 404 saying how to keep rules, whatever the method, while a server with rules answers 405 to a wrong method", async () => {
    const bare = await startApiHarness({});
    const dir = mkdtempSync(join(tmpdir(), "agy-rules-none-"));
    const kept = await startApiHarness({
      rules: createLearnedStore({ file: join(dir, "learned.yaml"), audit: createAuditLog({ path: join(dir, "audit.jsonl") }) }),
    });
    try {
      for (const [method, path] of [
        ["GET", "/v1/rules"],
        ["POST", "/v1/rules"],
        ["DELETE", "/v1/rules"],
        ["GET", "/v1/rules/r1"],
        ["DELETE", "/v1/rules/r1"],
      ] as const) {
        const res = await bare.fetch(path, { method });
        const problem = (await res.json()) as { detail: string };
        expect([method, path, res.status]).toEqual([method, path, 404]);
        expect(problem.detail).toContain("start serve with --policy FILE");
      }
      const wrong = await kept.fetch("/v1/rules", { method: "POST" });
      expect(wrong.status).toBe(405);
      await wrong.body?.cancel();
    } finally {
      await bare.close();
      await kept.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
