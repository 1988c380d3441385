/**
 * The ACP agent side over one connection: `initialize`, `session/new`, `session/load`, `session/prompt` and
 * `session/cancel`, each session's `session/update`s projected from its durable log.
 *
 * @module
 */
import * as acp from "@agentclientprotocol/sdk";
import type { Logger } from "@terret/hames";
import type { Agent, Agents, Tools } from "@terret/core";
import type { SessionEvent, Sessions } from "@terret/core/sessions";
import { projectEvent, type ProjectionState, projectionState, stopReasonOf } from "./projection.ts";
import { AUTO_EDIT_TOOLS, isModeId, modePolicy, modeState } from "./modes.ts";
import { type AcpApprovals, permissionRequest, verdictOf } from "./permissions.ts";
import { ClientMcpServers, mcpConfigs } from "./client_mcp.ts";
import { checkCwd, invalidParams, promptContent } from "./session_input.ts";
import { EditorSeams } from "./editor_seams.ts";
import { type ParkedCall, type SessionTail, tailSession } from "./_session_tail.ts";

/** JSON-RPC code for an unknown session (ACP's "resource not found"). */
export const RESOURCE_NOT_FOUND = -32002;

/** What {@linkcode serveAcp} needs. */
export interface AcpServerOptions {
  /** The session log the updates are projected from. */
  readonly sessions: Sessions;
  /** The agents that run the turns (one per ACP session; the agent id is the session id). */
  readonly agents: Agents;
  /** The tool registry: a call's `kind` comes from its tool's metadata (without it every call is `other`). */
  readonly tools?: Tools;
  /** The granted directories: a session's `cwd` must be one of them or inside one. */
  readonly roots: readonly string[];
  /** Where diagnostics go (never the ACP stream). */
  readonly logger?: Logger;
  /**
   * The approvals seam: parked calls (`approval/requested`) are asked of the client with
   * `session/request_permission` and its answer resolved here. Without it parked calls stay parked.
   */
  readonly approvals?: AcpApprovals;
  /**
   * Let Read, Write and Edit go through the client's `fs/read_text_file` and `fs/write_text_file` when it offers
   * them (unsaved buffers are read, edits show in the editor), after containment (default false: the host's `fs`).
   */
  readonly clientFs?: boolean;
  /**
   * Let Bash run in the client's terminals (`terminal/*`) when it offers them: each command in a fresh terminal in
   * the session's `cwd`, outside Terret's sandbox (default false: Terret's shell).
   */
  readonly clientTerminal?: boolean;
  /**
   * Whether the model takes images, asked at `initialize` and for each prompt (default: it does not, so
   * `promptCapabilities.image` is false and an image block is refused).
   */
  readonly images?: () => boolean;
  /** The `agentInfo` version (default `0.1.0`). */
  readonly version?: string;
}

/**
 * Serves ACP on `stream` until it closes, over the durable sessions and agents.
 *
 * Contract: every `session/update` is a projection of a durable event, in log order, sent before the answer that
 * depends on it (`session/load` answers after the replay, `session/prompt` after its `turn/end`). A connection that
 * closes stops its tails and never cancels a turn: the turn finishes in the log and a later `session/load` sees
 * it. A second prompt for a session whose prompt is still open is refused (`-32602`), never queued.
 */
export function serveAcp(stream: acp.Stream, options: AcpServerOptions): acp.AgentConnection {
  const { sessions, agents, roots } = options;
  const tails = new Map<string, SessionTail>();
  const mcp = new ClientMcpServers(options.logger);
  const kindOf = (sessionId: string, name: string): acp.ToolKind => {
    const ctx = agents.get(sessionId)?.ctx;
    return options.tools?.get(name, ctx === undefined ? {} : { ctx })?.kind ?? "other";
  };
  const images = (): boolean => {
    try {
      return options.images?.() === true;
    } catch {
      return false;
    }
  };
  const link: {
    client?: acp.AgentContext;
    name?: string;
    capabilities?: acp.ClientCapabilities;
  } = {};
  const seams = new EditorSeams({
    clientFs: options.clientFs === true,
    clientTerminal: options.clientTerminal === true,
  });
  const attach = (agent: Agent): void => {
    if (link.client !== undefined) seams.attach(agent, link.client, link.capabilities);
  };

  const unknown = (sessionId: string): acp.RequestError =>
    new acp.RequestError(
      RESOURCE_NOT_FOUND,
      `Cannot use session "${sessionId}": no such session`,
      { sessionId },
    );

  /** Tails a session from `from`, projecting each event; resolves once the event at `ready` has been sent. */
  const tail = (sessionId: string, from: number, ready: number): Promise<void> => {
    tails.get(sessionId)?.abort.abort();
    const entry: SessionTail = {
      abort: new AbortController(),
      state: projectionState((name) => kindOf(sessionId, name)),
      waiter: undefined,
    };
    tails.set(sessionId, entry);
    return tailSession(sessions, sessionId, entry, { from, ready }, {
      send: (event, state) => send(sessionId, event, state),
      ask: (requestId, payload, state) => ask(sessionId, requestId, payload, state),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    });
  };

  const send = async (
    sessionId: string,
    event: SessionEvent,
    state: ProjectionState,
  ): Promise<void> => {
    for (const update of projectEvent(event, state)) {
      await link.client?.notify(acp.methods.client.session.update, { sessionId, update });
    }
  };

  /** Asks the client about one parked call and records its answer (an answer never allows on its own). */
  const ask = async (
    sessionId: string,
    requestId: string,
    payload: ParkedCall,
    state: ProjectionState,
  ): Promise<void> => {
    const approvals = options.approvals;
    if (approvals === undefined || link.client === undefined) return;
    try {
      if (state.mode === "auto-edit" && AUTO_EDIT_TOOLS.includes(payload.call.name)) {
        // The mode is the client's standing answer for file edits: recorded as its verdict, never asked.
        await approvals.resolve(sessionId, requestId, {
          decision: "allow",
          remember: false,
          reason: "allowed by the ACP client's auto-edit mode",
          by: link.name === undefined ? { kind: "acp" } : { kind: "acp", client: link.name },
        });
        return;
      }
      const response = await link.client.request(
        acp.methods.client.session.requestPermission,
        permissionRequest(sessionId, payload, kindOf(sessionId, payload.call.name)),
      );
      await approvals.resolve(sessionId, requestId, verdictOf(response, link.name));
    } catch (error) {
      options.logger?.log("warn", "acp: a permission request was not resolved", {
        session_id: sessionId,
        request_id: requestId,
        error: String(error),
      });
    }
  };

  const exists = async (sessionId: string): Promise<boolean> =>
    (await sessions.head(sessionId).catch(() => 0)) > 0;

  const app = acp.agent()
    .onRequest(acp.methods.agent.initialize, ({ params }) => {
      if (params.clientInfo?.name !== undefined) link.name = params.clientInfo.name;
      if (params.clientCapabilities !== undefined) link.capabilities = params.clientCapabilities;
      return {
        protocolVersion: Math.min(params.protocolVersion, acp.PROTOCOL_VERSION),
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { image: images(), audio: false, embeddedContext: true },
          mcpCapabilities: { http: true, sse: false },
          sessionCapabilities: { close: {} },
        },
        agentInfo: { name: "terret", title: "Terret", version: options.version ?? "0.1.0" },
        authMethods: [],
      };
    })
    .onRequest(acp.methods.agent.session.new, async ({ params }) => {
      await checkCwd(params.cwd, roots);
      const servers = mcpConfigs(params.mcpServers, params.cwd);
      const sessionId = crypto.randomUUID();
      const agent = await agents.ensure(sessionId, { meta: { acp: { cwd: params.cwd } } });
      seams.setCwd(sessionId, params.cwd);
      await mcp.mount(agent, servers);
      attach(agent);
      const head = await sessions.head(sessionId);
      await tail(sessionId, head + 1, head);
      return { sessionId, modes: modeState("ask") };
    })
    .onRequest(acp.methods.agent.session.load, async ({ params }) => {
      await checkCwd(params.cwd, roots);
      const servers = mcpConfigs(params.mcpServers, params.cwd);
      if (!await exists(params.sessionId)) throw unknown(params.sessionId);
      const agent = await agents.ensure(params.sessionId);
      seams.setCwd(params.sessionId, params.cwd);
      await mcp.mount(agent, servers);
      attach(agent);
      const head = await sessions.head(params.sessionId);
      await tail(params.sessionId, 1, head);
      return { modes: modeState(tails.get(params.sessionId)?.state.mode ?? "ask") };
    })
    .onRequest(acp.methods.agent.session.prompt, async ({ params }) => {
      const { sessionId } = params;
      const entry = tails.get(sessionId);
      if (entry === undefined) {
        if (await exists(sessionId)) {
          throw invalidParams(
            { field: "sessionId", sessionId },
            `Cannot prompt session "${sessionId}": load it on this connection first (session/load)`,
          );
        }
        throw unknown(sessionId);
      }
      if (entry.waiter !== undefined) {
        throw invalidParams(
          { field: "sessionId", sessionId },
          `Cannot prompt session "${sessionId}": a prompt is already running (wait for its answer or cancel it)`,
        );
      }
      const content = promptContent(params.prompt, { images: images() });
      const head = await sessions.head(sessionId);
      const ended = Promise.withResolvers<unknown>();
      entry.waiter = {
        from: head + 1,
        sawUser: false,
        resolve: ended.resolve,
        ended: ended.promise,
      };
      try {
        const agent = agents.get(sessionId) ?? await agents.ensure(sessionId);
        await mcp.ensure(agent);
        attach(agent);
        agent.send(content);
      } catch (error) {
        entry.waiter = undefined;
        throw error;
      }
      const payload = await ended.promise;
      const stopReason = stopReasonOf(payload);
      if (stopReason !== undefined) return { stopReason };
      const error = (payload as { error?: { code?: string; message?: string } }).error;
      throw acp.RequestError.internalError(
        { code: error?.code },
        `The turn failed: ${error?.message ?? "no reason recorded"}`,
      );
    })
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      agents.get(params.sessionId)?.cancel("cancelled by the ACP client");
    })
    .onRequest(acp.methods.agent.session.setMode, async ({ params }) => {
      const { sessionId, modeId } = params;
      if (!tails.has(sessionId)) throw unknown(sessionId);
      if (!isModeId(modeId)) {
        throw invalidParams(
          { field: "modeId", modeId },
          `Cannot set the mode of session "${sessionId}": no mode "${modeId}" (ask, auto-edit or read-only)`,
        );
      }
      await sessions.append(sessionId, { type: "policy/updated", payload: modePolicy(modeId) });
      return {};
    })
    .onRequest(acp.methods.agent.session.close, async ({ params }) => {
      const { sessionId } = params;
      const entry = tails.get(sessionId);
      if (entry === undefined) throw unknown(sessionId);
      const agent = agents.get(sessionId);
      agent?.cancel("the ACP client closed the session");
      await agent?.idle();
      // The open prompt answers (cancelled) before the session's tail stops.
      await entry.waiter?.ended;
      entry.abort.abort();
      tails.delete(sessionId);
      await mcp.release(sessionId);
      await seams.detach(sessionId);
      if (agent !== undefined && agents.get(sessionId) === agent) {
        await agents.disposeAgent(sessionId).catch((error: unknown) => {
          options.logger?.log("warn", "acp: a closed session's agent stayed resident", {
            session_id: sessionId,
            error: String(error),
          });
        });
      }
      return {};
    });

  const connection = app.connect(stream);
  link.client = connection.client;
  const release = (): void => {
    for (const entry of tails.values()) entry.abort.abort();
    tails.clear();
    // A session's MCP servers outlive the connection only as long as its running turn does.
    // A turn still running goes on with the host's fs; its MCP servers stop once it has ended.
    void seams.detachAll();
    for (const sessionId of mcp.sessions()) {
      void (async () => {
        await agents.get(sessionId)?.idle();
        await mcp.release(sessionId);
      })();
    }
  };
  // A connection that ends with an error (a broken pipe) releases the same way; the error is the caller's to see.
  connection.closed.then(release, release);
  return connection;
}
