import { afterEach, describe, expect, it } from "vitest";
import { COMMAND_GROUP, commandsStream, createCommandRunner, resultsStream, type CommandResult, type FleetCommand } from "../../src/fleet/index.js";
import { startRedis, type RedisProcess } from "./support/redis-process.js";
import { asEntries } from "./support/relay-world.js";
import { until } from "../support/until.js";

let redis: RedisProcess | undefined;
afterEach(async () => {
  await redis?.stop();
  redis = undefined;
});

describe("the command runner", () => {
  it("runs a command its first taker never finished again with retry set, and marks the result claimed", async () => {
    redis = await startRedis();
    const r = redis;
    const host = "runner-host";
    const calls: { consumer: string; command: FleetCommand; retry: boolean }[] = [];
    // The first runner takes the command and never comes back (its connections are cut, as when its process dies).
    const deadRedis = r.client();
    const deadReader = r.client();
    const dead = createCommandRunner({
      redis: deadRedis,
      reader: deadReader,
      host,
      consumer: "dead",
      claimIdleMs: 200,
      blockMs: 50,
      execute: (command, { retry }) => {
        calls.push({ consumer: "dead", command, retry });
        return new Promise<CommandResult>(() => undefined);
      },
    });
    await dead.start();
    const bot = r.client();
    await bot.xadd(
      commandsStream(host),
      "*",
      "requestId",
      "turn-1",
      "type",
      "send_turn",
      "conversationId",
      "c1",
      "body",
      JSON.stringify({ text: "hi" }),
      "principal",
      "bot",
    );
    await until(() => (calls.length === 1 ? true : undefined), "the first runner to take the command");
    deadRedis.disconnect();
    deadReader.disconnect();

    const live = createCommandRunner({
      redis: r.client(),
      reader: r.client(),
      host,
      consumer: "live",
      claimIdleMs: 200,
      blockMs: 50,
      execute: async (command, { retry }) => {
        calls.push({ consumer: "live", command, retry });
        return { result: retry ? "unverified" : "delivered", reason: "test" };
      },
    });
    await live.start();
    const result = await until(
      async () => asEntries((await bot.xrange(resultsStream(host), "-", "+")) as [string, string[]][])[0],
      "the claimed command's result",
    );
    await live.stop();
    expect(calls.map((c) => [c.consumer, c.retry])).toEqual([
      ["dead", false],
      ["live", true],
    ]);
    expect(JSON.parse(result.fields["result"]!)).toEqual({ result: "unverified", reason: "test", claimed: true });
    expect(((await bot.xpending(commandsStream(host), COMMAND_GROUP)) as [number])[0]).toBe(0);
  });
});
