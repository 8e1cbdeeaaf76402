/**
 * A steerable, compiler-checked fake of the simulator's TUI port: tests set
 * the view and read back every call the TUI made.
 */
import type { SimTuiPort, TuiAnswer, TuiView } from "../../src/sim/tui/tui-port.js";

export type FakePortCall =
  | { call: "submitTurn"; text: string }
  | { call: "answer"; stepIndex: number; answer: TuiAnswer; delivered: boolean }
  | { call: "cancel" }
  | { call: "interruptTurn"; stopped: boolean }
  | { call: "clear" }
  | { call: "setModel"; model: string };

export interface FakeTuiPort extends SimTuiPort {
  readonly calls: FakePortCall[];
  /** Replaces (part of) the view and notifies subscribers. */
  setView(patch: Partial<TuiView>): void;
}

export function createFakeTuiPort(initial: Partial<TuiView> = {}): FakeTuiPort {
  let view: TuiView = { conversationId: "conv-1", running: false, transcript: [], ...initial };
  const listeners = new Set<() => void>();
  const calls: FakePortCall[] = [];
  const notify = (): void => {
    for (const listener of [...listeners]) listener();
  };
  const port = {
    calls,
    view: () => view,
    subscribe(listener: () => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    setView(patch: Partial<TuiView>) {
      view = { ...view, ...patch };
      if ("pending" in patch && patch.pending === undefined) delete view.pending;
      notify();
    },
    submitTurn(text: string) {
      calls.push({ call: "submitTurn", text });
      view = { ...view, running: true, transcript: [...view.transcript, { role: "user", text }] };
      notify();
    },
    // Like the engine: only the step that is still WAITING takes the answer.
    answer(stepIndex: number, answer: TuiAnswer) {
      const delivered = view.pending?.stepIndex === stepIndex;
      calls.push({ call: "answer", stepIndex, answer, delivered });
      if (delivered) {
        const { pending: answered, ...rest } = view;
        view = rest;
        // Like the engine's transcript: a declined command stays as its tool row and `⎿  User declined the tool call`.
        if (answered?.kind === "permission" && answer.kind === "permission" && !answer.allow && (answered.action ?? "command") === "command") {
          const arg = answered.target.split("\n")[0] ?? "";
          view = {
            ...view,
            transcript: [...view.transcript, { role: "tool", text: "User declined the tool call", call: { name: "Bash", arg }, header: "Command" }],
          };
        }
        notify();
      }
      return delivered;
    },
    cancel() {
      calls.push({ call: "cancel" });
    },
    // Like the engine (agy 1.2.x Esc at an approval): the turn ends; a waiting command shows as interrupted.
    interruptTurn() {
      const stopped = view.running || view.pending !== undefined;
      calls.push({ call: "interruptTurn", stopped });
      const { pending, ...rest } = view;
      view = { ...rest, running: false };
      if (pending?.kind === "permission" && (pending.action ?? "command") === "command") {
        view = {
          ...view,
          transcript: [...view.transcript, { role: "tool", text: "Interrupted", call: { name: "Bash", arg: pending.target.split("\n")[0] ?? "" } }],
        };
      }
      notify();
      return stopped;
    },
    setModel(model: string) {
      calls.push({ call: "setModel", model });
      view = { ...view, model };
      notify();
    },
    clear() {
      calls.push({ call: "clear" });
      view = { conversationId: `${view.conversationId}+`, running: false, transcript: [] };
      notify();
    },
  } satisfies FakeTuiPort;
  return port;
}
