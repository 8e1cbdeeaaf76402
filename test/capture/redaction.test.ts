/**
 * Redaction (src/capture/redaction/, pure): a corpus seeded with every kind
 * of secret the capture must not keep — none survives anywhere, in steps,
 * frames, summaries or screens — while structure does: ids are replaced
 * consistently, home paths keep their depth and length, the mapper reads the
 * same event kinds in the same order, and every screen fixture reads to the
 * same screen model.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createRedactor } from "../../src/capture/redaction/redactor.js";
import { createTrajectoryTracker } from "../../src/mapper/trajectory-tracker.js";
import type { MapperEvent } from "../../src/mapper/events.js";
import type { StreamUpdate } from "../../src/protocol/wire-schemas.js";
import { readScreen } from "../../src/tmux/screen-model.js";
import { checkLayers } from "../architecture/layer-rules.js";
import { screenShape } from "./support/screen-shape.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

const SEEDS = {
  csrf: "9f3c1e77-csrf-TOKEN-5b2a",
  oauth: "ya29.a0AfB_byCsecretOAuthAccessToken0123456789",
  refresh: "1//0gSecretRefreshTokenValue-abcdefghijk",
  jwt: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlc2VjcmV0",
  apiKey: "AIzaSyD-SecretApiKeyValue0123456789abcd",
  bearer: "Bearer s3cr3tBearerValue42",
  signature: "c2VjcmV0LXRoaW5raW5nLXNpZ25hdHVyZS1ibG9i",
  prompt: "Deploy zebracorn to the quokkanet cluster",
  reply: "Zebracorn deployed; quokkanet is healthy",
  thinking: "Considering marmoset rollout order",
  command: "kubectl apply -f wombatfile.yaml",
  output: "deployment.apps/narwhal-api configured",
  homePath: "/home/alice/work/zebracorn/notes.md",
  user: "alice",
  email: "alice.liddell@wonderland.example",
  host: "devbox-7.wonderland.example",
} as const;

/** Words that must not survive anywhere (the prompt's, reply's, command's own words). */
const SECRET_WORDS = ["zebracorn", "Zebracorn", "quokkanet", "marmoset", "kubectl", "wombatfile", "narwhal", "alice", "liddell", "wonderland", "devbox"];

const TRAJECTORY = "d24e8b90-5a17-4c3e-8f02-6b9e1a7c4f35";
const CONVERSATION = "7c1f3a52-0d4e-4b8a-9e61-2f5b8c3d9a10";

function info(stepIndex: number | undefined) {
  return { trajectoryId: TRAJECTORY, ...(stepIndex === undefined ? {} : { stepIndex }), cascadeId: CONVERSATION };
}

/** A turn with every secret in it: a prompt, thinking, a gated command with output, and a reply. */
function seededSteps(commandStatus: "WAITING" | "DONE"): unknown[] {
  const steps: unknown[] = [
    {
      type: "CORTEX_STEP_TYPE_USER_INPUT",
      status: "CORTEX_STEP_STATUS_DONE",
      metadata: {
        createdAt: "2026-07-14T09:12:20.000100Z",
        source: "CORTEX_STEP_SOURCE_USER_EXPLICIT",
        executionId: "e93a7c15-2b4d-4e60-b8f1-7a0c5d2e9f43",
        sourceTrajectoryStepInfo: info(undefined),
      },
      userInput: { items: [{ text: `${SEEDS.prompt}; mail ${SEEDS.email} from ${SEEDS.host}, token=${SEEDS.csrf}` }], userResponse: SEEDS.prompt },
    },
    {
      type: "CORTEX_STEP_TYPE_PLANNER_RESPONSE",
      status: "CORTEX_STEP_STATUS_DONE",
      metadata: {
        createdAt: "2026-07-14T09:12:21.000100Z",
        source: "CORTEX_STEP_SOURCE_MODEL",
        sourceTrajectoryStepInfo: info(1),
        toolCall: {
          id: "toolu_01SecretCallId",
          name: "run_command",
          argumentsJson: JSON.stringify({ CommandLine: SEEDS.command, Cwd: "/home/alice/work/zebracorn" }),
          thinkingSignature: SEEDS.signature,
        },
      },
      plannerResponse: {
        thinking: SEEDS.thinking,
        thinkingSignature: SEEDS.signature,
        messageId: "bot-5b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        toolCalls: [{ id: "toolu_01SecretCallId", name: "run_command", argumentsJson: JSON.stringify({ CommandLine: SEEDS.command }) }],
      },
    },
    {
      type: "CORTEX_STEP_TYPE_RUN_COMMAND",
      status: `CORTEX_STEP_STATUS_${commandStatus}`,
      metadata: {
        createdAt: "2026-07-14T09:12:22.000100Z",
        source: "CORTEX_STEP_SOURCE_MODEL",
        sourceTrajectoryStepInfo: info(2),
        toolCall: {
          id: "toolu_01SecretCallId",
          name: "run_command",
          argumentsJson: JSON.stringify({ CommandLine: SEEDS.command, Cwd: "/home/alice/work/zebracorn" }),
        },
        argumentsOrder: ["CommandLine", "Cwd"],
        toolAction: `Running ${SEEDS.command}`,
      },
      runCommand: {
        commandLine: SEEDS.command,
        proposedCommandLine: SEEDS.command,
        cwd: "/home/alice/work/zebracorn",
        ...(commandStatus === "DONE"
          ? {
              exitCode: 0,
              combinedOutput: {
                full: `${SEEDS.output}\n${SEEDS.homePath}\n${SEEDS.bearer}\n${SEEDS.oauth}\n${SEEDS.refresh}\n${SEEDS.jwt}\n${SEEDS.apiKey}\n`,
              },
            }
          : {}),
      },
      requestedInteraction: {
        permission: { resource: { action: "command", target: SEEDS.command }, actionDescription: `Run ${SEEDS.command} as ${SEEDS.user}` },
      },
      ...(commandStatus === "DONE"
        ? {
            completedInteractions: [
              {
                request: { permission: { resource: { action: "command", target: SEEDS.command } } },
                response: { trajectoryId: TRAJECTORY, stepIndex: 2, permission: { allow: true } },
              },
            ],
            permissions: { permissionGrants: [{ resource: { action: "command", target: SEEDS.command }, allow: true }] },
          }
        : {}),
    },
  ];
  if (commandStatus === "DONE") {
    steps.push({
      type: "CORTEX_STEP_TYPE_PLANNER_RESPONSE",
      status: "CORTEX_STEP_STATUS_DONE",
      metadata: { createdAt: "2026-07-14T09:12:23.000100Z", source: "CORTEX_STEP_SOURCE_MODEL", sourceTrajectoryStepInfo: info(3) },
      plannerResponse: { response: SEEDS.reply, modifiedResponse: SEEDS.reply, messageId: "bot-6c2f3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e" },
    });
  }
  return steps;
}

function frame(steps: unknown[], indices: number[], status: string): { update: StreamUpdate } {
  return {
    update: {
      conversationId: CONVERSATION,
      trajectoryId: TRAJECTORY,
      status,
      mainTrajectoryUpdate: { stepsUpdate: { indices, steps, totalLength: steps.length } },
    } as StreamUpdate,
  };
}

const SCREEN = [
  "  agy · /home/alice/work/zebracorn · alice@devbox-7.wonderland.example",
  "────────────────────────────────────────────────────────────",
  `> ${SEEDS.prompt}`,
  "",
  `● Bash(${SEEDS.command}) (ctrl+o to expand)`,
  `  ⎿  ${SEEDS.output}`,
  "",
  `  ${SEEDS.reply}`,
  "",
  "────────────────────────────────────────────────────────────────────────────────",
  "> ",
  "────────────────────────────────────────────────────────────────────────────────",
  "? for shortcuts                                                     Gemini 3.8 Flash · hig",
].join("\n");

function redactor(options: { keepText?: boolean; keepCommands?: boolean } = {}) {
  return createRedactor({ ...options, secrets: [SEEDS.csrf], home: "/home/alice", users: [SEEDS.user], hosts: [SEEDS.host, "devbox-7"] });
}

function survivors(text: string, seeds: readonly string[]): string[] {
  return seeds.filter((seed) => text.includes(seed));
}

function kinds(events: readonly MapperEvent[]): string[] {
  return events.map((e) => (e.type === "interaction_requested" || e.type === "interaction_resolved" ? `${e.type}:${e.stepIndex}` : e.type));
}

describe("redaction", () => {
  it("leaves none of the seeded secrets in steps, frames, summaries or screens", () => {
    const r = redactor();
    const waiting = seededSteps("WAITING");
    const done = seededSteps("DONE");
    const out = [
      JSON.stringify(r.json({ steps: done })),
      JSON.stringify(r.json(frame(waiting, [0, 1, 2], "CASCADE_RUN_STATUS_RUNNING"))),
      JSON.stringify(
        r.json({
          trajectorySummaries: {
            [CONVERSATION]: {
              trajectoryId: TRAJECTORY,
              summary: SEEDS.prompt,
              status: "CASCADE_RUN_STATUS_IDLE",
              workspaces: [{ workspaceFolderAbsoluteUri: "file:///home/alice/work/zebracorn" }],
            },
          },
        }),
      ),
      r.screen(SCREEN),
    ].join("\n");
    expect(survivors(out, Object.values(SEEDS))).toEqual([]);
    expect(survivors(out, SECRET_WORDS)).toEqual([]);
    expect(survivors(out, [TRAJECTORY, CONVERSATION, "toolu_01SecretCallId", "e93a7c15"])).toEqual([]);
  });

  it("keeps prompts and commands when asked, but still scrubs credentials, home paths, users, hosts and e-mails", () => {
    const r = redactor({ keepText: true, keepCommands: true });
    const out = JSON.stringify(r.json({ steps: seededSteps("DONE") })) + r.screen(SCREEN);
    expect(out).toContain("quokkanet");
    expect(out).toContain("kubectl apply");
    expect(
      survivors(out, [
        SEEDS.csrf,
        SEEDS.oauth,
        SEEDS.refresh,
        SEEDS.jwt,
        SEEDS.apiKey,
        "s3cr3tBearerValue42",
        SEEDS.signature,
        SEEDS.homePath,
        SEEDS.email,
        SEEDS.host,
        "alice",
      ]),
    ).toEqual([]);
  });

  it("masks command lines and outputs on screen too when only text is kept", () => {
    const r = redactor({ keepText: true });
    const steps = JSON.stringify(r.json({ steps: seededSteps("DONE") }));
    const screen = r.screen(SCREEN);
    expect(steps).toContain("quokkanet");
    expect(survivors(steps + screen, ["kubectl", "wombatfile", "narwhal"])).toEqual([]);
    expect(screen).toContain("quokkanet");
  });

  it("replaces the same id with the same placeholder everywhere, and different ids with different ones", () => {
    const r = redactor();
    const snapshot = r.json({ steps: seededSteps("WAITING") }) as {
      steps: Array<{ metadata: { sourceTrajectoryStepInfo: { trajectoryId: string; cascadeId: string }; toolCall?: { id: string } } }>;
    };
    const update = r.json(frame(seededSteps("WAITING"), [0, 1, 2], "CASCADE_RUN_STATUS_RUNNING")).update as { conversationId: string; trajectoryId: string };
    const first = snapshot.steps[0]!.metadata.sourceTrajectoryStepInfo;
    expect(first.trajectoryId).not.toBe(TRAJECTORY);
    expect(first.trajectoryId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(update.trajectoryId).toBe(first.trajectoryId);
    expect(update.conversationId).toBe(first.cascadeId);
    expect(first.cascadeId).not.toBe(first.trajectoryId);
    expect(snapshot.steps[1]!.metadata.toolCall!.id).toBe(snapshot.steps[2]!.metadata.toolCall!.id);
    expect(r.id(CONVERSATION)).toBe(first.cascadeId);
  });

  it("replaces a path under the home directory whole, with one of the same depth and length, consistently", () => {
    const r = redactor({ keepText: true, keepCommands: true });
    const a = r.text(`see ${SEEDS.homePath} and file:///home/alice/work/zebracorn/notes.md`);
    const [, first, second] = /see (\S+) and file:\/\/(\S+)$/.exec(a) ?? [];
    expect(first).toBeDefined();
    expect(first).toBe(second);
    expect(first!.split("/")).toHaveLength(SEEDS.homePath.split("/").length);
    expect(first).toHaveLength(SEEDS.homePath.length);
    expect(first!.startsWith("/home/")).toBe(true);
    expect(survivors(a, ["alice", "work", "zebracorn", "notes"])).toEqual([]);
    expect(first!.endsWith(".md")).toBe(true);
  });

  it("maps a redacted conversation to the same event kinds, in the same order, as the raw one", () => {
    const r = redactor();
    const frames = [
      frame(seededSteps("WAITING").slice(0, 1), [0], "CASCADE_RUN_STATUS_RUNNING"),
      frame(seededSteps("WAITING").slice(1, 3), [1, 2], "CASCADE_RUN_STATUS_RUNNING"),
      frame(seededSteps("DONE").slice(2, 4), [2, 3], "CASCADE_RUN_STATUS_IDLE"),
    ];
    const map = (updates: Array<{ update: StreamUpdate }>, id: string, snapshot: { steps: unknown[] }): MapperEvent[] => {
      const tracker = createTrajectoryTracker({ conversationId: id });
      return [...updates.flatMap((f) => tracker.applyStreamUpdate(f.update)), ...tracker.applySnapshot({ steps: snapshot.steps, stepOffset: 0 })];
    };
    const raw = map(frames, CONVERSATION, { steps: seededSteps("DONE") });
    const redacted = map(
      frames.map((f) => r.json(f)),
      r.id(CONVERSATION),
      r.json({ steps: seededSteps("DONE") }),
    );
    expect(kinds(raw)).toContain("interaction_requested:2");
    expect(kinds(raw)).toContain("function_call_output");
    expect(kinds(redacted)).toEqual(kinds(raw));
  });

  it("maps the shipped step fixtures and stream frames to the same event kinds after redaction", () => {
    const snapshot = JSON.parse(readFileSync(join(ROOT, "fixtures/steps/snapshot_two_turns.json"), "utf8")) as { steps: unknown[] };
    const lines = ["stream_planner_generating.ndjson", "stream_question_timeout_retry.ndjson"].flatMap((f) =>
      readFileSync(join(ROOT, "fixtures/steps", f), "utf8")
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => JSON.parse(l) as { update: StreamUpdate }),
    );
    const r = redactor();
    const run = (s: { steps: unknown[] }, f: Array<{ update: StreamUpdate }>, id: string) => {
      const fromSnapshot = createTrajectoryTracker({ conversationId: id });
      const fromFrames = createTrajectoryTracker({ conversationId: id });
      return kinds([...fromSnapshot.applySnapshot({ steps: s.steps, stepOffset: 0 }), ...f.flatMap((x) => fromFrames.applyStreamUpdate(x.update))]);
    };
    const raw = run(snapshot, lines, CONVERSATION);
    expect(raw.length).toBeGreaterThan(10);
    expect(raw).toContain("message_delta");
    expect(
      run(
        r.json(snapshot),
        lines.map((l) => r.json(l)),
        r.id(CONVERSATION),
      ),
    ).toEqual(raw);
  });

  it("reads every screen fixture to the same screen model after redaction", () => {
    const dir = join(ROOT, "fixtures/screens");
    const files = readdirSync(dir).filter((f) => f.endsWith(".txt"));
    expect(files.length).toBeGreaterThan(20);
    for (const file of files) {
      const raw = readFileSync(join(dir, file), "utf8");
      const redacted = redactor().screen(raw);
      expect(
        redacted.split("\n").map((l) => l.length),
        file,
      ).toEqual(raw.split("\n").map((l) => l.length));
      expect(screenShape(readScreen(redacted)), file).toEqual(screenShape(readScreen(raw)));
    }
    const seeded = redactor().screen(SCREEN);
    expect(screenShape(readScreen(seeded))).toEqual(screenShape(readScreen(SCREEN)));
    expect(readScreen(seeded).state).toBe("ready");
  });

  it("is held pure by the layer rules: no Node built-ins, no clock, and no import of capture's I/O", () => {
    const tree = new Map([
      ["capture/redaction/a.ts", 'import { readFileSync } from "node:fs";\nimport { x } from "../recorder.js";\nconst t = Date.now();'],
      ["capture/redaction/b.ts", 'import { y } from "./a.js";\nimport { z } from "../../protocol/json.js";'],
      ["capture/recorder.ts", 'import { c } from "../rpc/client.js";\nimport { readFileSync } from "node:fs";'],
    ]);
    expect(checkLayers(tree).map((v) => `${v.file}: ${v.reason}`)).toEqual([
      "capture/redaction/a.ts: capture/redaction/ is pure and may not use Node built-ins",
      "capture/redaction/a.ts: capture/redaction/ is pure and may import only pure code",
      "capture/redaction/a.ts: capture/redaction/ is pure: no clock, randomness, console or process",
    ]);
  });
});
