/**
 * The sessions of this machine, as every front door needs them: discovery
 * run again and again (the discovery watch), its servers cut to the -L/-S
 * scope (discovery/tmux-scope.ts), one offer per top-level conversation, and
 * an attach that knows the server, token and pane each conversation was last
 * seen with. `serve`, `mcp`, `acp` and `relay` each wrote this loop; this is
 * it once, so `-L` means the same for all of them.
 *
 * A refresh that misses a busy agy (a probe deadline) keeps what it knew of
 * that agy's conversations, so attach still finds the server; whether the
 * caller keeps the session is {@link SessionSource.retain}'s answer.
 */
import { createWorkspaceReader, type WorkspaceReader } from "../discovery/process-workspace.js";
import type { DiscoveredServer, PaneRef, TmuxScope } from "../discovery/index.js";
import type { AgySession, AttachOptions } from "./types.js";

/** A session a source offers: one top-level conversation of one agy. */
export interface SessionOffer {
  conversationId: string;
  /** The agy process that hosts it. */
  pid?: number;
  title?: string;
  /** When its last user input was (agy's `lastUserInputTime`). */
  updatedAt?: string;
  /** agy's tmux pane (`%N`), when discovery found it in scope. */
  pane?: string;
}

/** Where sessions come from (this machine's discovery; the fleet has its own). */
export interface SessionSource {
  /** The sessions on offer now; a sub-agent's conversation belongs to its parent's and is not offered. */
  list(signal?: AbortSignal): Promise<SessionOffer[]>;
  /** Whether a session a refresh did not list is kept anyway (its agy still runs). */
  retain(offer: SessionOffer): boolean;
  /**
   * Attaches to a conversation the last {@link list} offered, on the server
   * it was seen on; `extra` adds to the attach options (a policy, a signal).
   * Throws when no list offered it.
   */
  attach(conversationId: string, extra?: Partial<AttachOptions>): Promise<AgySession>;
  /** The server a conversation was last seen on (for a card's workspace or pane). */
  serverOf(conversationId: string): DiscoveredServer | undefined;
  /** Closes what discovery keeps open. */
  close(): Promise<void>;
}

/** Where a conversation's agy runs, as a card or the page shows it. */
export interface SessionPlace {
  /** agy's working directory (read once per process, so absent on the first ask). */
  workspace?: string;
  /** agy's tmux pane (`%N`). */
  pane?: string;
}

/** This machine's sessions: a {@link SessionSource} that also says where each one's agy runs. */
export interface LocalSessionSource extends SessionSource {
  /** agy's directory and pane for a conversation the last {@link list} offered; `{}` for any other. */
  describe(conversationId: string): SessionPlace;
}

/** What the source asks discovery: the discovery watch, or a stand-in with the same two calls. */
export interface DiscoveryFeed {
  refresh(signal?: AbortSignal): Promise<DiscoveredServer[]>;
  close(): Promise<void>;
}

export interface LocalSessionSourceOptions {
  /** Which agy are offered (`createTmuxScope`); discovery must match panes on its `discoveryServers`. */
  scope: TmuxScope;
  /** Discovery, e.g. `createDiscoveryWatch({ tmuxServers: scope.discoveryServers, admits: scope.covers })`. */
  discovery: DiscoveryFeed;
  /** `AgySession.attach`, or a stand-in. */
  attach: (options: AttachOptions) => Promise<AgySession>;
  /** Whether a pid still runs, for {@link SessionSource.retain}; default: nothing is retained. */
  alive?: (pid: number) => boolean;
  /** agy's working directory by pid, for {@link LocalSessionSource.describe}; default `/proc/<pid>/cwd`. */
  workspaceOf?: WorkspaceReader;
}

export function createLocalSessionSource(options: LocalSessionSourceOptions): LocalSessionSource {
  const { scope, discovery } = options;
  const alive = options.alive ?? (() => false);
  const workspaceOf = options.workspaceOf ?? createWorkspaceReader();
  // The server each conversation was last seen on: attach needs its URL and token.
  const servers = new Map<string, DiscoveredServer>();
  return {
    async list(signal) {
      const found = scope.admit(await discovery.refresh(signal));
      const out: SessionOffer[] = [];
      for (const server of found) {
        if (server.url === undefined) continue;
        for (const conversation of server.conversations) {
          if (conversation.parentConversationId !== undefined) continue;
          servers.set(conversation.conversationId, server);
          const offer: SessionOffer = { conversationId: conversation.conversationId, pid: server.pid };
          if (conversation.title !== undefined) offer.title = conversation.title;
          if (conversation.lastUserInputTime !== undefined) offer.updatedAt = conversation.lastUserInputTime;
          if (server.tmuxPane !== undefined) offer.pane = server.tmuxPane;
          out.push(offer);
        }
      }
      return out;
    },
    retain: (offer) => offer.pid !== undefined && alive(offer.pid),
    async attach(conversationId, extra = {}) {
      const server = servers.get(conversationId);
      if (server?.url === undefined) throw new Error("its server is gone");
      const attachOptions: AttachOptions = { conversationId, url: server.url, ...extra };
      if (server.csrfToken !== undefined && extra.csrfToken === undefined) attachOptions.csrfToken = server.csrfToken;
      if (server.tmuxPane !== undefined && extra.pane === undefined) attachOptions.pane = { target: server.tmuxPane, ...scope.paneServer } satisfies PaneRef;
      return options.attach(attachOptions);
    },
    serverOf: (conversationId) => servers.get(conversationId),
    describe(conversationId) {
      const server = servers.get(conversationId);
      if (server === undefined) return {};
      const place: SessionPlace = {};
      const workspace = workspaceOf(server.pid);
      if (workspace !== undefined) place.workspace = workspace;
      if (server.tmuxPane !== undefined) place.pane = server.tmuxPane;
      return place;
    },
    close: () => discovery.close(),
  };
}
