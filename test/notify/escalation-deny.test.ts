/**
 * `--escalate-action deny` as serve wires it: the escalation answers through
 * serve's hub, so the session gets one deny with the instruction — and a
 * gate someone answered in time is left alone. In-process, over scripted
 * sessions (the end-to-end tests do not deny: serve there sees other tests'
 * agy too).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createAuditLog } from "../../src/audit/index.js";
import { prepareNotifications, type Notifications } from "../../src/cli/notify-options.js";
import type { MapperEvent } from "../../src/mapper/index.js";
import { startApiHarness } from "../server/support/api-harness.js";
import { permissionRequested } from "../server/support/scripted-session.js";
import { captureIo } from "../support/cli-io.js";
import { until } from "../support/until.js";

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

describe("the escalation's deny, as serve wires it", () => {
  it("denies a permission nobody answered, once, with the instruction, and leaves an answered one alone", async () => {
    const dir = await mkdtemp(join(tmpdir(), "agyb-escalate-"));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const harness = await startApiHarness();
    cleanup.push(() => harness.close());
    const session = harness.addSession("conv-a");
    await harness.hub.refresh();
    const captured = captureIo([]);
    const prepared = await prepareNotifications(
      captured.io,
      { "escalate-after": "1s", "escalate-action": "deny", "escalate-instruction": "Nobody was around." },
      { configDir: join(dir, "agy-bridge"), auditLog: createAuditLog({ path: join(dir, "audit.jsonl") }), policy: false },
    );
    expect(typeof prepared).not.toBe("string");
    const notifications = prepared as Notifications;
    cleanup.push(() => notifications.close());
    notifications.start({ hub: harness.hub, pageUrl: harness.url });
    session.push({ type: "history_end", conversationId: "conv-a" } as MapperEvent);
    session.push(permissionRequested("conv-a", 6, "rm -rf build"));
    const answered = permissionRequested("conv-a", 7, "ls");
    session.push(answered);
    // Answered in time: resolved before the escalation.
    session.push({
      ...(answered as Extract<MapperEvent, { type: "interaction_requested" }>),
      type: "interaction_resolved",
      kind: "permission",
      outcome: "approved",
      stepStatus: "DONE",
    } as unknown as MapperEvent);
    await until(() => session.answers.length >= 1, "the escalation's deny", { ms: 10_000, seen: () => JSON.stringify(session.answers) });
    const requested = harness.hub
      .get("conv-a")!
      .log.since(0)
      .map((e) => e.event)
      .find((e) => e.type === "interaction_requested" && e.stepIndex === 6) as { interactionId: string };
    expect(session.answers).toEqual([{ interactionId: requested.interactionId, action: { action: "deny", instruction: "Nobody was around." } }]);
    expect(captured.stderr()).toBe("");
  });

  it("refuses an instruction without the deny action, and an escalation action it does not know", async () => {
    const dir = await mkdtemp(join(tmpdir(), "agyb-escalate-"));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const options = { configDir: dir, auditLog: createAuditLog({ path: join(dir, "audit.jsonl") }), policy: false };
    expect(await prepareNotifications(captureIo([]).io, { "escalate-after": "1m", "escalate-instruction": "x" }, options)).toBe(
      "--escalate-instruction goes with --escalate-action deny",
    );
    expect(await prepareNotifications(captureIo([]).io, { "escalate-after": "1m", "escalate-action": "approve" }, options)).toBe(
      "--escalate-action is notify or deny, not approve",
    );
    expect(await prepareNotifications(captureIo([]).io, { "escalate-action": "deny" }, options)).toBe(
      "--escalate-action and --escalate-instruction need --escalate-after DURATION",
    );
  });
});
