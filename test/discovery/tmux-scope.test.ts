/**
 * The -L/-S scope as a rule over what discovery found: which agy are in,
 * what discovery is asked to match panes on, and each agy left out said
 * once. Servers are synthesized in the shape discovery returns.
 */
import { describe, expect, it } from "vitest";
import { createTmuxScope, inTmuxScope, outOfScopeMessage, tmuxServerLabel } from "../../src/discovery/index.js";

const inPane = { pid: 101, tmuxPane: "%3" };
const outside = { pid: 202 };

describe("inTmuxScope", () => {
  it("keeps every agy when no tmux server is named", () => {
    expect([inPane, outside].filter((s) => inTmuxScope(s, undefined))).toEqual([inPane, outside]);
  });

  it("keeps only an agy in a pane when a tmux server is named", () => {
    expect([inPane, outside].filter((s) => inTmuxScope(s, { socketName: "work" }))).toEqual([inPane]);
  });
});

describe("createTmuxScope", () => {
  it("asks discovery to match panes on the named server only, or on the default one", () => {
    expect(createTmuxScope({ socketPath: "/tmp/s" }).discoveryServers).toEqual([{ socketPath: "/tmp/s" }]);
    expect(createTmuxScope({ socketPath: "/tmp/s" }).paneServer).toEqual({ socketPath: "/tmp/s" });
    expect(createTmuxScope(undefined).discoveryServers).toEqual([{}]);
    expect(createTmuxScope(undefined).paneServer).toEqual({});
  });

  it("admits everything and says nothing without -L/-S", () => {
    const said: string[] = [];
    expect(createTmuxScope(undefined, { onSkipped: (m) => said.push(m) }).admit([inPane, outside])).toEqual([inPane, outside]);
    expect(said).toEqual([]);
  });

  it("says each agy it leaves out once across refreshes, naming its pid, the server and what to do", () => {
    const said: string[] = [];
    const scope = createTmuxScope({ socketName: "work" }, { onSkipped: (m) => said.push(m) });
    expect(scope.admit([inPane, outside])).toEqual([inPane]);
    expect(scope.admit([inPane, outside])).toEqual([inPane]);
    expect(said).toEqual([
      "left out agy (pid 202): it runs in no pane of the tmux server -L work, and -L/-S offer only agy in that server's panes; start it in a pane of the tmux server -L work, or leave out -L/-S to offer every agy on this machine",
    ]);
  });

  it("says it again when the agy was in scope or gone in between", () => {
    const said: string[] = [];
    const scope = createTmuxScope({ socketName: "work" }, { onSkipped: (m) => said.push(`${m.slice(0, 24)}`) });
    scope.admit([outside]);
    scope.admit([{ ...outside, tmuxPane: "%9" }]);
    scope.admit([outside]);
    scope.admit([]);
    scope.admit([outside]);
    expect(said).toEqual(["left out agy (pid 202): ", "left out agy (pid 202): ", "left out agy (pid 202): "]);
  });
});

describe("tmuxServerLabel", () => {
  it("names the server as tmux spells it", () => {
    expect(tmuxServerLabel({ socketName: "work" })).toBe("the tmux server -L work");
    expect(tmuxServerLabel({ socketPath: "/tmp/s" })).toBe("the tmux server -S /tmp/s");
    expect(tmuxServerLabel(undefined)).toBe("tmux's default server");
    expect(outOfScopeMessage({ pid: 7 }, { socketPath: "/tmp/s" })).toContain("no pane of the tmux server -S /tmp/s");
  });
});
