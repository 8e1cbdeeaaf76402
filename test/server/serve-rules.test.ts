/**
 * Rules learned from answers through a real `agy-bridge serve --policy`: the
 * simulator as agy in a private tmux server asks to run a command, the
 * answer is given with `remember`, the rule lands in the learned file
 * ($XDG_CONFIG_HOME/agy-bridge/learned.yaml), the next identical request is
 * approved by it without asking, and a revoked rule stops matching. A serve
 * without --policy keeps no rules and says so.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startServeWorld, type ServeWorld } from "./support/serve-world.js";
import { until } from "../support/until.js";

let world: ServeWorld | undefined;
const files: string[] = [];
afterEach(async () => {
  await world?.close();
  world = undefined;
  for (const file of files.splice(0)) await rm(file, { force: true });
});

interface Pending {
  interactionId: string;
  request: { kind: string; action?: string; target?: string };
}

async function pendingOf(w: ServeWorld): Promise<Pending[]> {
  return ((await (await w.api(`/v1/sessions/${w.conversationId}/pending`)).json()) as { pending: Pending[] }).pending;
}

describe("learned rules through serve", { timeout: 180_000 }, () => {
  it("saves the remembered rule, applies it to the next identical request, and stops applying it once revoked", async () => {
    const policyFile = join(process.env.TMPDIR || "/tmp", `agyb-rules-policy-${process.pid}-${Date.now()}.yaml`);
    files.push(policyFile);
    await writeFile(policyFile, "version: 1\ndefault: ask\nrules: []\n");
    world = await startServeWorld({ serveArgs: (tmux) => ["-L", tmux.socketName, "--refresh-ms", "300", "--policy", policyFile] });
    const w = world;
    expect(await (await w.api("/v1/rules")).json(), w.stderr()).toEqual({ rules: [] });

    const ask = async () => {
      const turn = await w.api(`/v1/sessions/${w.conversationId}/turns`, { method: "POST", body: JSON.stringify({ text: "Run pwd" }) });
      expect(await turn.json(), w.stderr()).toMatchObject({ result: "delivered" });
    };
    await ask();
    const [first] = await until(async () => ((await pendingOf(w)).length > 0 ? pendingOf(w) : undefined), "the first request in /pending", {
      ms: 60_000,
      everyMs: 200,
      seen: () => w.stderr(),
    });
    const base = `/v1/sessions/${w.conversationId}/interactions/${first!.interactionId}`;
    const proposal = (await (await w.api(`${base}/proposed-rule`)).json()) as { match: string; scope: string; kind: string };
    expect(proposal).toMatchObject({ kind: "command", match: first!.request.target });

    const answer = await w.api(base, { method: "POST", body: JSON.stringify({ action: "approve", remember: { scope: "conversation" } }) });
    const answered = (await answer.json()) as { result: string; rule?: { id: string; decision: string; match: string; scope: string } };
    expect(answered, w.stderr()).toMatchObject({ result: "delivered", rule: { decision: "approve", match: proposal.match, scope: "conversation" } });
    const learned = await readFile(join(w.stateDir, "agy-bridge", "learned.yaml"), "utf8");
    expect(learned).toContain(answered.rule!.id);
    expect(learned).toContain(proposal.match);

    // The same command again: the learned rule approves it, nobody is asked.
    await ask();
    const listed = await until(
      async () => {
        const { rules } = (await (await w.api("/v1/rules")).json()) as { rules: Array<{ id: string; fired: number }> };
        return rules.find((r) => r.id === answered.rule!.id && r.fired >= 1);
      },
      "the learned rule to fire on the second request",
      { ms: 60_000, everyMs: 200, seen: () => w.stderr() },
    );
    expect(listed.fired).toBe(1);
    expect(await pendingOf(w)).toEqual([]);

    expect((await w.api(`/v1/rules/${answered.rule!.id}`, { method: "DELETE" })).status).toBe(200);
    expect(await (await w.api("/v1/rules")).json()).toEqual({ rules: [] });
    // Revoked: the third identical request waits for a person again.
    await ask();
    const third = await until(async () => ((await pendingOf(w)).length > 0 ? pendingOf(w) : undefined), "the third request to wait for a person", {
      ms: 60_000,
      everyMs: 200,
      seen: () => w.stderr(),
    });
    expect(third[0]!.request.target).toBe(first!.request.target);
  });

  it("keeps no rules without --policy, and says how to get them", async () => {
    world = await startServeWorld();
    const res = await world.api("/v1/rules");
    expect(res.status).toBe(404);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/--policy/);
  });
});
