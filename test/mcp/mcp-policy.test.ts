/**
 * `agy-bridge mcp --policy`: an agent's approve is a decision like a
 * person's, except that the team's policy binds it — an agent cannot approve
 * what the policy denies, and the refusal is in the audit log.
 */
import { writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMcpWorld, structured, textOf, type McpWorld } from "./support/mcp-world.js";

let world: McpWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const POLICY = `version: 1
default: ask
rules:
  - id: no-pwd
    kind: command
    commands: ["pwd"]
    action: deny
    instruction: "Do not print the directory."
`;

async function auditRecords(file: string, complete: (records: Array<Record<string, unknown>>) => boolean): Promise<Array<Record<string, unknown>>> {
  const deadline = Date.now() + 30_000;
  let records: Array<Record<string, unknown>> = [];
  while (Date.now() < deadline) {
    const text = await readFile(file, "utf8").catch(() => "");
    records =
      text.trim() === ""
        ? []
        : text
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l) as Record<string, unknown>);
    if (complete(records)) return records;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the audit log never held the expected records; it held ${JSON.stringify(records)}`);
}

describe("agy-bridge mcp --policy", { timeout: 120_000 }, () => {
  it("refuses an agent's approve of a request the policy denies, and records the refusal", async () => {
    world = await startMcpWorld({
      transport: "stdio",
      clientName: "eager-agent",
      args: (dir) => {
        const file = join(dir, "policy.yaml");
        writeFileSync(file, POLICY);
        return ["--policy", file];
      },
    });
    const w = world;
    const turn = structured<{ cursor: string }>(await w.call("send_turn", { text: "Run pwd" }));
    const requested = structured<{ outcome: string; event: { interactionId: string; request: { target: string } } }>(
      await w.call("wait_for", { until: "event", eventType: "interaction_requested", since: turn.cursor, timeoutMs: 30_000 }),
    );
    expect(requested.event.request.target).toBe("pwd");
    const interactionId = requested.event.interactionId;

    const approve = await w.call("approve", { interactionId });
    expect(approve.isError).toBe(true);
    expect(textOf(approve)).toMatch(/^The team's policy denies this request \(rule no-pwd\), so an agent may not approve it; deny it, or ask a person/);

    // The policy itself denies it, whoever is faster: never the agent's approve.
    const resolved = structured<{ event: { outcome: string; decidedBy?: string } }>(
      await w.call("wait_for", { until: "event", eventType: "interaction_resolved", since: turn.cursor, timeoutMs: 30_000 }),
    );
    expect(resolved.event).toMatchObject({ outcome: "denied", decidedBy: "policy:no-pwd" });

    // The policy's own record is written once its deny is delivered: wait for it (bounded).
    const records = await auditRecords(w.auditFile, (all) => all.some((r) => r["decidedBy"] === "policy:no-pwd"));
    expect(records).toContainEqual(
      expect.objectContaining({ interactionId, decision: "approve", decidedBy: "mcp:eager-agent", delivery: "refused_by_policy" }),
    );
    expect(records).toContainEqual(expect.objectContaining({ interactionId, decision: "deny", decidedBy: "policy:no-pwd" }));
    expect(records.filter((r) => r["delivery"] === "delivered" && r["decidedBy"] === "mcp:eager-agent")).toEqual([]);
  });
});
