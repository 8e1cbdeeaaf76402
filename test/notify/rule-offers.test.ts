/**
 * The rules serve offers Telegram and ntfy: the policy layer's proposal in
 * words, exactly as it will be saved, saved once into a real learned file.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createRuleOffers } from "../../src/server/rule-offers.js";
import { startLearnedWorld, WORKSPACE } from "./support/learned-world.js";
import { permissionNotice, questionNotice } from "./support/notices.js";

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function learnedWorld() {
  const world = await startLearnedWorld();
  cleanup.push(() => world.close());
  return world;
}

describe("rule offers for Telegram and ntfy", () => {
  it("words a file rule with its operation, from the request's step type", async () => {
    const { store } = await learnedWorld();
    const offers = createRuleOffers({
      rules: store,
      place: (conversationId) => ({ conversationId, workspace: WORKSPACE }),
      stepTypeOf: () => "CORTEX_STEP_TYPE_CODE_ACTION",
    });
    const notice = permissionNotice({ request: { kind: "permission", action: "file", target: `${WORKSPACE}/src/a.ts`, description: "" } });
    expect(offers(notice).map((o) => o.text)).toEqual([
      "Always allow: `{workspace}/src/a.ts` (edit, this workspace)",
      "Always deny: `{workspace}/src/a.ts` (edit, this workspace)",
    ]);
  });

  it("scopes the rule to the conversation when agy names no workspace", async () => {
    const { store } = await learnedWorld();
    const offers = createRuleOffers({ rules: store, place: (conversationId) => ({ conversationId }) });
    expect(offers(permissionNotice())[0]!.text).toBe("Always allow: `npm test` (this conversation only)");
  });

  it("offers nothing for a question, several commands in one line, or a rule too long to show whole", async () => {
    const { offers } = await learnedWorld();
    expect(offers(questionNotice())).toEqual([]);
    const chained = permissionNotice({
      interactionId: "int_chain",
      request: { kind: "permission", action: "command", target: "npm ci && npm test", description: "" },
    });
    expect(offers(chained)).toEqual([]);
    const long = permissionNotice({
      interactionId: "int_long",
      request: { kind: "permission", action: "command", target: `echo ${"x".repeat(1200)}`, description: "" },
    });
    expect(offers(long)).toEqual([]);
  });

  it("saves an offered rule once, however often it is pressed, and offers a reminder the same rule", async () => {
    const { offers, store } = await learnedWorld();
    const notice = permissionNotice();
    const [allow] = offers(notice);
    expect(offers({ ...notice, escalated: true })[0]).toBe(allow);
    const [first, second] = await Promise.all([allow!.save("telegram:ana"), allow!.save("telegram:ana")]);
    expect(second).toEqual(first);
    expect(store.list()).toMatchObject([{ id: first.id, decision: "approve", match: "npm test", addedBy: "telegram:ana" }]);
  });
});
