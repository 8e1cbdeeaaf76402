/**
 * The sessions `serve` supervises, wired once for the command and for the
 * tests that build its world: the hub (session-hub.ts) over this machine's
 * sessions (the local session source: discovery cut to the -L/-S scope,
 * each session supervised with its pane and the audit log) or over the
 * fleet's (each one a remote session its host's relay answers), with what
 * the page and the policy read beside them: where each agy runs, and the
 * workspace a learned rule is scoped to.
 */
import type { SessionAuditor } from "../audit/index.js";
import type { LocalSessionSource, SessionPlace } from "../session/local-session-source.js";
import type { AttachOptions } from "../session/types.js";
import { createSessionHub, type SessionDescriptor, type SessionHub, type SupervisedSession } from "./session-hub.js";
import { noPaneReason, superviseSession } from "./supervised-session.js";

/** This machine's sessions, supervised here. */
export interface LocalSessions {
  local: LocalSessionSource;
  /** The -L/-S tmux server (`{}` without either): a refused turn names it. */
  tmux: { socketName?: string; socketPath?: string };
  /** Added to every attach: the policy (cli/policy-options.ts `policyAttachOption`). */
  attachExtra?: Partial<AttachOptions>;
  /** Writes the audit log: answers given here, and what each session saw answered elsewhere. */
  auditor: SessionAuditor;
}

/** Sessions that arrive supervised by someone else: the fleet's (`serve --redis`), each answered by its host's relay. */
export interface RemoteSessions {
  remote: {
    list(): Promise<SessionDescriptor[]>;
    attach(descriptor: SessionDescriptor): SupervisedSession | Promise<SupervisedSession>;
  };
}

export interface ServeSessionsOptions {
  from: LocalSessions | RemoteSessions;
  /** Events each conversation's log keeps for SSE replay (`--replay-window`). */
  replayWindow?: number;
  /** `--workspace`: the policy's `{workspace}` for every conversation. */
  workspace?: string;
  /**
   * Whether a policy decides here. Without `workspace`, agy's own directory
   * (as the policy reads it) is then read for each session, so a rule learned
   * for that directory is offered and fires there.
   */
  policy?: boolean;
  onProblem?: (message: string) => void;
}

export interface ServeSessions {
  hub: SessionHub;
  /** agy's working directory and pane for a conversation, for the page and the cards; `{}` for the fleet's. */
  describe(conversationId: string): SessionPlace;
  /** The workspace the policy decides a conversation's requests with, so a learned rule is scoped to it. */
  ruleWorkspace(conversationId: string): string | undefined;
  /** Closes the hub, then what it read its sessions from. */
  close(): Promise<void>;
}

export function createServeSessions(options: ServeSessionsOptions): ServeSessions {
  const { from } = options;
  const replay = options.replayWindow === undefined ? {} : { replayWindow: options.replayWindow };
  const problems = options.onProblem === undefined ? {} : { onProblem: options.onProblem };
  if ("remote" in from) {
    const hub = createSessionHub({ ...replay, ...problems, list: () => from.remote.list(), attach: async (descriptor) => from.remote.attach(descriptor) });
    return { hub, describe: () => ({}), ruleWorkspace: () => options.workspace, close: () => hub.close() };
  }
  const { local, auditor } = from;
  const agyWorkspaces = new Map<string, string>();
  const learnWorkspace = options.policy === true && options.workspace === undefined;
  const hub = createSessionHub({
    ...replay,
    ...problems,
    async list(signal) {
      return (await local.list(signal)).map((offer) => ({
        conversationId: offer.conversationId,
        ...(offer.pid === undefined ? {} : { pid: offer.pid }),
        ...(offer.title === undefined ? {} : { title: offer.title }),
      }));
    },
    // A busy agy can miss a probe deadline: its sessions stay while it runs.
    retain: (descriptor) => local.retain(descriptor),
    async attach(descriptor) {
      const server = local.serverOf(descriptor.conversationId);
      // No shared signal: the hub closes each session itself, and one signal
      // held by dozens of sessions would only collect listeners.
      const session = await local.attach(descriptor.conversationId, from.attachExtra ?? {});
      if (learnWorkspace)
        void session.workspace().then(
          (dir) => dir !== undefined && agyWorkspaces.set(descriptor.conversationId, dir),
          () => undefined,
        );
      return superviseSession(session, { hasPane: server?.tmuxPane !== undefined, noPane: noPaneReason(server?.pid, from.tmux), auditor });
    },
  });
  return {
    hub,
    describe: (conversationId) => local.describe(conversationId),
    ruleWorkspace: (conversationId) => options.workspace ?? agyWorkspaces.get(conversationId) ?? local.describe(conversationId).workspace,
    async close() {
      await hub.close();
      await local.close();
    },
  };
}
