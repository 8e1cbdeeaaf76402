/**
 * Many concurrent operations under one caller signal, with one listener on
 * it: each operation gets its own child signal. A discovery runs a TLS
 * handshake and RPCs per listener at once, and more than 10 abort listeners
 * on one signal make Node print a MaxListenersExceededWarning on stderr.
 * `AbortSignal.any` is no way out: it registers on its sources once per call too.
 */

export interface AbortFanout {
  /** A fresh signal that aborts with the parent (already aborted when it is); undefined without a parent. */
  child(): AbortSignal | undefined;
  /** Removes the one listener on the parent; the children stop following it. */
  close(): void;
}

/** A fan-out of `parent`; nothing is registered when there is no parent. */
export function createAbortFanout(parent: AbortSignal | undefined): AbortFanout {
  if (parent === undefined) return { child: () => undefined, close: () => undefined };
  const children = new Set<AbortController>();
  const onAbort = (): void => {
    for (const child of children) child.abort(parent.reason);
    children.clear();
  };
  parent.addEventListener("abort", onAbort, { once: true });
  return {
    child() {
      const controller = new AbortController();
      if (parent.aborted) controller.abort(parent.reason);
      else children.add(controller);
      return controller.signal;
    },
    close() {
      parent.removeEventListener("abort", onAbort);
      children.clear();
    },
  };
}
