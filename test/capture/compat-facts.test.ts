/**
 * The fact checks of `doctor --report` on observations built by hand: a fact
 * recorded only for newer builds is held against an agy only when its
 * version is known to be that new; a screen the model cannot read
 * contradicts 13#2; without a conversation the conversation's facts are not
 * checked, saying why.
 */
import { describe, expect, it } from "vitest";
import { atLeast, checkFacts } from "../../src/capture/compat-facts.js";
import type { Observations } from "../../src/capture/compat-probes.js";
import type { ScreenModel } from "../../src/tmux/screen-types.js";

function observations(over: Partial<Observations> = {}): Observations {
  return {
    agyVersion: null,
    listeners: [{ role: "rpc", transport: "tls", port: 40001 }],
    transport: "tls",
    conversationId: "c-1",
    tokenInUse: false,
    heartbeat: { ok: true, value: undefined, ms: 1 },
    summaries: { ok: true, value: { trajectorySummaries: { "c-1": { trajectoryId: "t-1", status: "CASCADE_RUN_STATUS_IDLE" } } }, ms: 1 },
    models: { ok: true, value: { models: { a: {} } }, ms: 1 },
    metadata: { ok: true, value: { metadata: { rootConversationId: "c-1" } }, ms: 1 },
    steps: {
      ok: true,
      value: [
        { type: "T", status: "S" },
        { type: "T", status: "S" },
      ],
      ms: 1,
    },
    stepsFromOffset: {
      ok: true,
      value: [
        { type: "T", status: "S" },
        { type: "T", status: "S" },
      ],
      ms: 1,
      offset: 1,
    },
    trajectory: { ok: false, status: 404, message: "404 page not found" },
    ...over,
  };
}

const status = (obs: Observations, id: string) => checkFacts(obs).find((f) => f.id === id);

describe("compatibility facts", () => {
  it("reads versions as agy and discovery spell them", () => {
    expect(atLeast("1.2.4", "1.1")).toBe(true);
    expect(atLeast("cli-1.1.0", "1.1")).toBe(true);
    expect(atLeast("1.0.10", "1.1")).toBe(false);
    expect(atLeast("sim", "1.1")).toBe(false);
    expect(atLeast(null, "1.1")).toBe(false);
  });

  it("contradicts a newer-build fact only when agy's version is known to be that new", () => {
    expect(status(observations({ agyVersion: "1.0.10" }), "10.4#4")).toMatchObject({ status: "not_checked" });
    expect(status(observations({ agyVersion: "1.2.4" }), "10.4#4")).toMatchObject({
      status: "contradicted",
      seen: "GetCascadeTrajectory HTTP 404: 404 page not found",
    });
    // A stepOffset that is ignored: the whole list comes back.
    expect(status(observations({ agyVersion: "1.2.4" }), "10.4#3")).toMatchObject({ status: "contradicted" });
    expect(status(observations({ agyVersion: "1.0.10" }), "10.4#3")?.status).toBe("not_checked");
  });

  it("says a screen the model reads as unknown contradicts 13#2, and leaves it unchecked without a pane", () => {
    const unknown = { state: "unknown", composer: "absent", draft: null, mode: null, model: null, prompt: null } as const;
    expect(status(observations({ screen: { ok: true, value: unknown, ms: 1 } }), "13#2")).toMatchObject({
      status: "contradicted",
      seen: "state unknown, composer absent, mode none, model none",
    });
    expect(status(observations(), "13#2")).toMatchObject({ status: "not_checked", seen: "no tmux pane known; pass --pane TARGET" });
  });

  it("leaves the conversation's facts unchecked without a conversation, and says how to give one", () => {
    const { metadata: _m, steps: _s, stepsFromOffset: _o, trajectory: _t, ...rest } = observations();
    const facts = checkFacts({ ...rest, conversationId: null });
    for (const id of ["3.2", "3.3#1", "1.5", "3.4#2", "3.11#3"]) {
      expect(
        facts.find((f) => f.id === id),
        id,
      ).toMatchObject({ status: "not_checked" });
      expect(facts.find((f) => f.id === id)?.seen, id).toContain("--conversation ID");
    }
  });

  it("names the fields a metadata answer carries beyond the 1.0.10 shape", () => {
    const obs = observations({ metadata: { ok: true, value: { metadata: { rootConversationId: "c-1", workspaceUris: [] }, extra: 1 }, ms: 1 } });
    expect(status(obs, "3.2")).toMatchObject({ status: "contradicted", seen: "also extra, metadata.workspaceUris (newer builds add the workspaces, §10.4)" });
  });

  it("says where the version came from, and that an agy past 1.2.17 is newer than probed", () => {
    expect(status(observations({ agyVersion: "1.2.10", agyVersionSource: "screen" }), "14#2")).toMatchObject({
      status: "confirmed",
      seen: "agy 1.2.10, from its banner on screen",
    });
    expect(status(observations(), "14#2")?.status).toBe("not_checked");
    expect(status(observations({ agyVersion: "1.2.17" }), "14#4")?.status).toBe("confirmed");
    expect(status(observations({ agyVersion: "1.3.2" }), "14#4")).toMatchObject({ status: "contradicted" });
    expect(status(observations({ agyVersion: "1.3.2" }), "14#4")?.seen).toContain("newer than probed");
    expect(status(observations(), "14#4")?.status).toBe("not_checked");
  });

  it("never judges what only a key press shows (digits, Escape, LF), and names the pane in the one thing to do", () => {
    for (const id of ["14#6", "14#7", "14#9"]) {
      const fact = status(observations({ agyVersion: "1.2.10", paneLabel: "%7 -L work" }), id);
      expect(fact?.status, id).toBe("not_checked");
      expect(fact?.seen, id).toContain("this report presses none");
      expect(fact?.seen, id).toContain("--pane %7 -L work");
    }
  });

  it("reads the pane's command from tmux: agy confirms, anything else contradicts on 1.2.x", () => {
    expect(status(observations({ agyVersion: "1.2.10", paneCommand: { ok: true, value: "agy\n", ms: 1 } }), "14#10")).toMatchObject({
      status: "confirmed",
      seen: "agy",
    });
    expect(status(observations({ agyVersion: "1.2.10", simulator: true, paneCommand: { ok: true, value: "node", ms: 1 } }), "14#10")).toMatchObject({
      status: "contradicted",
      seen: 'tmux reports "node" (this is agy-bridge\'s simulator)',
    });
    expect(status(observations({ agyVersion: "1.1.27", paneCommand: { ok: true, value: "node", ms: 1 } }), "14#10")?.status).toBe("not_checked");
    expect(status(observations(), "14#10")).toMatchObject({ status: "not_checked", seen: "no tmux pane known; pass --pane TARGET" });
  });

  it("confirms a stale dialog only when a dialog is on screen and no step waits, and reads the task strip as not busy", () => {
    const dialog: ScreenModel = {
      state: "prompt",
      composer: "absent",
      draft: null,
      mode: null,
      model: null,
      prompt: { kind: "command", question: "Run this command?", options: [], pointer: 1, keys: "arrows" },
    };
    const screen = { ok: true as const, value: dialog, ms: 1 };
    expect(status(observations({ screen }), "14#8")).toMatchObject({ status: "confirmed" });
    const waiting = { ok: true as const, value: [{ type: "T", status: "CORTEX_STEP_STATUS_WAITING" }], ms: 1 };
    expect(status(observations({ screen, steps: waiting }), "14#8")?.seen).toContain("still waits");
    expect(status(observations({ screen, steps: waiting }), "14#8")?.status).toBe("not_checked");
    const idle = { state: "ready", composer: "empty", draft: null, mode: "default", model: "Gemini 3.8 Flash", prompt: null } as const;
    expect(status(observations({ screen: { ok: true, value: idle, ms: 1 } }), "14#8")?.status).toBe("not_checked");
    expect(status(observations({ screen: { ok: true, value: { ...idle, backgroundTasks: 2 }, ms: 1 } }), "14#11")).toMatchObject({
      status: "confirmed",
      seen: "2 task(s) on the status row, screen ready",
    });
    expect(status(observations({ screen: { ok: true, value: idle, ms: 1 } }), "14#11")?.status).toBe("not_checked");
  });
});
