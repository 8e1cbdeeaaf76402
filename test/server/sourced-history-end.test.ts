/**
 * The id-less `history_end` a sourced log's followers write (`followLog`):
 * at the log's recorded end of the history, once per follower, also when
 * its buffer fills right there, again after a resync's snapshot, and never
 * for a log that is not sourced (its `history_end` is an entry). The Redis
 * side is test/fleet/fleet-history-end.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { MapperEvent } from "../../src/mapper/index.js";
import { createEventLog, type EventLog } from "../../src/server/event-log.js";
import { followLog, type ResumeStart, type StreamSink } from "../../src/server/event-stream.js";

const CONV = "conv-a";
const sid = (i: number) => `${1733050000000 + i}-0`;
const say = (i: number): MapperEvent => ({ type: "user_message", conversationId: CONV, trajectoryId: "t", stepIndex: i, text: `m${i}` }) as MapperEvent;

/** A sink that takes `room` frames before its buffer is full (then each write is refused until `drain`). */
function sink(room = Infinity) {
  const frames: string[] = [];
  let left = room;
  const s: StreamSink & { frames: string[]; shown(): string[]; drain(n: number): void } = {
    closed: false,
    frames,
    write(frame) {
      frames.push(frame);
      left--;
      return left > 0;
    },
    end() {},
    /** Each frame as `<id or ->:<event>`. */
    shown: () => frames.map((f) => `${/^id: (.*)$/m.exec(f)?.[1] ?? "-"}:${/^event: (.*)$/m.exec(f)?.[1]}`),
    drain(n) {
      left = n;
    },
  };
  return s;
}

function follow(log: EventLog, start: ResumeStart, out: ReturnType<typeof sink>, snapshot: MapperEvent[] = []) {
  const follower = followLog({
    source: { conversationId: CONV, log, snapshot: async () => snapshot },
    sink: out,
    lastEventId: undefined,
    start,
    signal: new AbortController().signal,
  });
  log.subscribe(
    () => follower.flush(),
    () => follower.flush(),
  );
  follower.flush();
  return follower;
}

const sourced = (window?: number) => createEventLog({ epoch: "e", sourced: true, ...(window === undefined ? {} : { window }) });

describe("the id-less history_end of a sourced log", () => {
  it("comes once, after the history's entries and before later ones, to a follower there from the start", () => {
    const log = sourced();
    const out = sink();
    follow(log, { after: 0 }, out);
    log.append(say(1), sid(1));
    log.append(say(2), sid(2));
    expect(out.shown()).toEqual([`${sid(1)}:user_message`, `${sid(2)}:user_message`]);
    log.endHistory();
    log.append(say(3), sid(3));
    log.endHistory();
    expect(out.shown()).toEqual([`${sid(1)}:user_message`, `${sid(2)}:user_message`, "-:history_end", `${sid(3)}:user_message`]);
    expect(JSON.parse(out.frames[2]!.split("data: ")[1]!)).toEqual({ type: "history_end", conversationId: CONV });
    expect(log.historyEnd).toBe(2);
  });

  it("comes first for an empty history, and between the right entries to a follower that joins later", () => {
    const log = sourced();
    log.endHistory();
    log.append(say(1), sid(1));
    const out = sink();
    follow(log, { after: 0 }, out);
    expect(out.shown()).toEqual(["-:history_end", `${sid(1)}:user_message`]);
  });

  it("comes after the backlog to a follower resuming past the end, and at once to one with no backlog", () => {
    const log = sourced();
    for (const i of [1, 2]) log.append(say(i), sid(i));
    log.endHistory();
    for (const i of [3, 4, 5]) log.append(say(i), sid(i));
    const behind = sink();
    follow(log, { after: 3 }, behind);
    expect(behind.shown()).toEqual([`${sid(4)}:user_message`, `${sid(5)}:user_message`, "-:history_end"]);
    const caughtUp = sink();
    follow(log, { after: 5 }, caughtUp);
    log.append(say(6), sid(6));
    expect(caughtUp.shown()).toEqual(["-:history_end", `${sid(6)}:user_message`]);
    expect(behind.shown().filter((s) => s === "-:history_end")).toHaveLength(1);
  });

  it("waits for a full buffer at the boundary, then writes it once", () => {
    const log = sourced();
    for (const i of [1, 2]) log.append(say(i), sid(i));
    log.endHistory();
    log.append(say(3), sid(3));
    const out = sink(2);
    const follower = follow(log, { after: 0 }, out);
    expect(out.shown()).toEqual([`${sid(1)}:user_message`, `${sid(2)}:user_message`]);
    out.drain(1);
    follower.drained();
    expect(out.shown()).toEqual([`${sid(1)}:user_message`, `${sid(2)}:user_message`, "-:history_end"]);
    out.drain(10);
    follower.drained();
    expect(out.shown()).toEqual([`${sid(1)}:user_message`, `${sid(2)}:user_message`, "-:history_end", `${sid(3)}:user_message`]);
  });

  it("comes again after a resync's snapshot, which rebuilds the conversation", async () => {
    const log = sourced(2);
    for (const i of [1, 2, 3, 4]) log.append(say(i), sid(i));
    log.endHistory();
    const out = sink();
    follow(log, { resync: "outside_window" }, out, [say(1), say(2), say(3), say(4)]);
    await new Promise((r) => setImmediate(r));
    expect(out.shown()).toEqual(["-:resync", "-:user_message", "-:user_message", "-:user_message", `${sid(4)}:user_message`, "-:history_end"]);
  });

  it("is never written for a log that is not sourced: its history_end is an entry", () => {
    const log = createEventLog({ epoch: "e" });
    const out = sink();
    follow(log, { after: 0 }, out);
    log.append(say(1));
    log.append({ type: "history_end", conversationId: CONV } as MapperEvent);
    log.append(say(2));
    expect(out.shown()).toEqual(["e-1:user_message", "e-2:history_end", "e-3:user_message"]);
  });
});
