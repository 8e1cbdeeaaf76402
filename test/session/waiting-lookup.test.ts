/**
 * `sessions --json`'s `waitingFor`, read from `GetAllCascadeTrajectories`
 * (its summaries carry the waiting steps, spike-notes §10.4): the earliest
 * waiting step's word, and nothing when agy cannot be asked.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import type { DiscoveredServer } from "../../src/discovery/types.js";
import { lookUpWaitingFor, waitingForOfSummaries } from "../../src/session/waiting-lookup.js";
import { fixture } from "../mapper/load.js";

describe("waitingFor from trajectory summaries", () => {
  it("takes the earliest waiting step's word, a step without stepIndex being step 0", () => {
    const question = fixture("ask_question_waiting.json");
    const file = fixture("file_permission_waiting.json");
    const command = fixture("run_command_waiting.json");
    const answer = {
      trajectorySummaries: {
        a: {
          waitingSteps: [
            { step: question, stepIndex: 9 },
            { step: file, stepIndex: 3 },
          ],
        },
        b: { waitingSteps: [{ step: command, stepIndex: 2 }, { step: question }] },
        c: { waitingSteps: [{ stepIndex: 4 }] },
        d: {},
      },
    };
    expect([...waitingForOfSummaries(answer as never)]).toEqual([
      ["a", "file"],
      ["b", "question"],
    ]);
  });

  it("asks nobody when no conversation waits, and gives nothing when the server cannot be reached", async () => {
    const server: DiscoveredServer = {
      pid: 1,
      executable: "/usr/bin/agy",
      listeners: [],
      csrfTokenPresent: false,
      conversations: [{ conversationId: "a", waitingSteps: [] }],
      url: "http://127.0.0.1:1",
    };
    let asked = 0;
    const createClient = () => {
      asked++;
      throw new Error("not to be called");
    };
    expect((await lookUpWaitingFor(server, { createClient })).size).toBe(0);
    expect(asked).toBe(0);
    // A real loopback server that fails every call: the listing goes on without waitingFor.
    const failing = createServer((_req, res) => {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ code: "internal", message: "no" }));
    });
    await new Promise<void>((resolve) => failing.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(failing.address() as AddressInfo).port}`;
      const waiting = { ...server, url, conversations: [{ conversationId: "a", waitingSteps: [3] }] };
      expect((await lookUpWaitingFor(waiting, { timeoutMs: 5000 })).size).toBe(0);
    } finally {
      await new Promise((resolve) => failing.close(resolve));
    }
  });
});
