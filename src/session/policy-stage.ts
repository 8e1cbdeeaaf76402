/**
 * A session's policy, as the two stages of the interaction ledger
 * (docs/architecture.md): the verdict written on each request before it is
 * published (`interaction_requested.policy`), and the outcome of delivering
 * an approve or deny (`policy_delivered`). A request the policy decided is
 * answered by the session alone; everyone else is refused with a sentence.
 * Without a policy every method is a no-op that changes nothing.
 */
import type { EventOf, MapperEvent } from "../mapper/index.js";
import { policyDeliveredEvent, type PolicyAnswerer, type PolicyJudge } from "./policy-runner.js";
import type { AnswerResult, PendingSummary } from "./types.js";

type PolicyMark = NonNullable<EventOf<"interaction_requested">["policy"]>;

export class PolicyStage {
  #judge: PolicyJudge | undefined;
  /** The policy's verdict on each request it decided. */
  readonly #verdicts = new Map<string, PolicyMark>();

  /** Attaches the policy: from now on every request is decided before it is published. */
  use(judge: PolicyJudge): void {
    this.#judge = judge;
  }

  get active(): boolean {
    return this.#judge !== undefined;
  }

  /**
   * Decides `event` (once per interaction) and writes the verdict on it,
   * before anyone sees it. An approve or deny is then delivered through
   * `own` (the session's answer path, which the refusal does not guard), and
   * its outcome handed to `delivered` as a `policy_delivered` event.
   */
  decide(event: EventOf<"interaction_requested">, own: PolicyAnswerer, delivered: (event: EventOf<"policy_delivered">) => void): void {
    const judge = this.#judge;
    if (judge === undefined) return;
    const known = this.#verdicts.get(event.interactionId);
    if (known !== undefined) {
      event.policy = known;
      return;
    }
    let verdict: ReturnType<PolicyJudge["decide"]>;
    try {
      verdict = judge.decide(event);
    } catch {
      // A policy that cannot decide decides nothing: the request goes to a person.
      this.#mark(event, { decision: "ask", rule: null });
      return;
    }
    // A question is never approved by a policy: it waits for a person like an ask.
    const decision = verdict.decision.decision === "approve" && event.request.kind === "question" ? "ask" : verdict.decision.decision;
    const mark = this.#mark(event, { decision, rule: verdict.decision.rule });
    // After the event is published: the delivery reads agy afresh, and the outcome goes to the audit log,
    // then to every consumer as `policy_delivered` (the ledger's second policy stage).
    queueMicrotask(
      () =>
        void judge.deliver(event, verdict, own).then(
          (outcome) => {
            const outcomeEvent = policyDeliveredEvent(event, mark, outcome);
            if (outcomeEvent !== undefined) delivered(outcomeEvent);
          },
          () => undefined,
        ),
    );
  }

  #mark(event: EventOf<"interaction_requested">, mark: PolicyMark): PolicyMark {
    this.#verdicts.set(event.interactionId, mark);
    event.policy = mark;
    return mark;
  }

  /** The refusal for an answer to a request the policy decided; undefined when it may be answered. */
  refusal(interactionId: string): AnswerResult | undefined {
    if (this.#judge === undefined) return undefined;
    const verdict = this.#verdicts.get(interactionId);
    if (verdict === undefined || verdict.decision === "ask") return undefined;
    const rule = verdict.rule === null ? "its default" : `rule ${verdict.rule}`;
    return {
      result: "decided_by_policy",
      decision: verdict.decision,
      rule: verdict.rule,
      reason: `the policy (${rule}) decided this request (${verdict.decision}) and delivers its answer itself; nobody else may answer it`,
    };
  }

  /**
   * A consumer's events with the verdict on each request: the open
   * interactions a consumer starts with are rebuilt from the tracker, without it.
   */
  withVerdicts(source: AsyncIterable<MapperEvent>): AsyncIterable<MapperEvent> {
    if (this.#judge === undefined) return source;
    const verdicts = this.#verdicts;
    return {
      async *[Symbol.asyncIterator]() {
        for await (const event of source) {
          const verdict = event.type === "interaction_requested" && event.policy === undefined ? verdicts.get(event.interactionId) : undefined;
          yield verdict === undefined ? event : { ...event, policy: verdict };
        }
      },
    };
  }

  /** What the policy left to a person: a request it has not decided yet is not shown either. */
  leftToPerson(read: Promise<PendingSummary[]>): Promise<PendingSummary[]> {
    if (this.#judge === undefined) return read;
    return read.then((all) => all.filter((p) => this.#verdicts.get(p.interactionId)?.decision === "ask"));
  }
}
