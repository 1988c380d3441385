/**
 * The socket server: `Deno.serve` on the configured address, the routes, auth before resolution, the upgrade, one
 * connection per agent (a newer one supersedes), the replay scheduler, the stalled-reader sweep, live reconfigure and
 * graceful shutdown.
 *
 * @module
 */
import type { Context, Logger } from "@terret/hames";
import {
  CompactionKey,
  type ConnectionSpan,
  type Sessions,
  type Telemetry,
  TelemetryKey,
} from "@terret/core";
import type { EventJson } from "@terret/core/sessions";
import { TerretError } from "./errors.ts";
import type { AgentGateway, AgentLink } from "./agent_gateway.ts";
import { presentedToken, SUBPROTOCOL, TokenGate } from "./auth.ts";
import type { WsConfig } from "./config.ts";
import { CLOSE, Connection, type ConnectionHost, type EventFrame } from "./connection.ts";
import { ReplayScheduler } from "./_replay_scheduler.ts";
import { Quotas } from "./_quotas.ts";
import { describeAgentDetail, listAgents, MAX_PAGE } from "./agent_directory.ts";
import {
  healthResponse,
  jsonResponse,
  route,
  textResponse,
  unauthorizedResponse,
} from "./routes.ts";
import { checkReadiness } from "./readiness.ts";
import { ConsoleAssets } from "./console_assets.ts";

/** Options for {@linkcode WsServer.start}. */
export interface WsServerOptions {
  /**
   * The context the server was mounted on. Not read: the live tail comes from `sessions.streamJson`, which needs
   * no listener of the server's own.
   */
  readonly ctx?: Context;
  /** The session log events are read from (and `policy/updated` appended to). */
  readonly sessions: Sessions;
  /** Where agents are resolved and steered. */
  readonly agents: AgentGateway;
  /** The parsed `interfaces.ws` config. */
  readonly config: WsConfig;
  /** Where failures are reported. */
  readonly logger?: Logger;
  /** The millisecond clock the frame-rate buckets read (default `performance.now`); tests freeze it. */
  readonly now?: () => number;
}

/** What the server is doing, for operators and tests. */
export interface WsStats {
  /** Connections not yet closed (closing ones included). */
  readonly connections: number;
  /** Connections subscribed and not yet closing. */
  readonly subscribers: number;
  /** Replays taking turns (started, not blocked on their socket). */
  readonly replays_running: number;
  /** Subscribes whose replay has not started. */
  readonly replays_waiting: number;
  /** Started replays waiting for their socket to drain (they take no turn). */
  readonly replays_blocked: number;
  /** The most replays that ever ran at once. */
  readonly replays_peak: number;
  /** Bytes replays hold now (their sockets' queues plus one store page each). */
  readonly replay_bytes: number;
  /** The most bytes replays ever held at once (bounded by `replay_budget_bytes` plus one slice). */
  readonly replay_bytes_peak: number;
  /** Connections dropped as lagged since the start. */
  readonly lagged: number;
  /** Connections superseded by a newer one since the start. */
  readonly superseded: number;
}

/** `retry-after` on refusals that pass once load falls. */
const RETRY: Readonly<Record<string, string>> = Object.freeze({ "retry-after": "1" });

/** How long `close` waits for clients to answer the shutdown close before the listener is torn down. */
const SHUTDOWN_GRACE_MS = 1000;

/**
 * The WebSocket event stream server (docs/protocol.md).
 *
 * Contract: auth is decided before the agent is resolved, and every failed auth gets the same answer; the server
 * never cancels or fails a turn (a dropped or superseded connection only stops sending); everything a client
 * receives as an `event` was read from the session log. `close` stops accepting, closes every connection with
 * 1001 and resolves once the listener and every connection's work have ended.
 *
 * @example
 * ```ts ignore
 * const server = await WsServer.start({ sessions, agents, config: wsConfig.parse({ tokens }) });
 * console.log(server.url); // ws://127.0.0.1:7878
 * await server.close();
 * ```
 */
export class WsServer implements AsyncDisposable {
  readonly #agents: AgentGateway;
  readonly #sessions: Sessions;
  readonly #quotas: Quotas;
  readonly #logger: Logger | undefined;
  readonly #now: () => number;
  readonly #replays: ReplayScheduler;
  readonly #connections = new Set<Connection>();
  /** Telemetry spans of open connections (only while telemetry is enabled). */
  readonly #connectionSpans = new Map<Connection, ConnectionSpan>();
  readonly #telemetry: () => Telemetry | undefined;
  readonly #ctx: Context | undefined;
  readonly #byAgent = new Map<string, Connection>();
  readonly #frames = new WeakMap<EventJson, EventFrame>();
  /** Subscribed connections by session (for the figures). */
  readonly #tails = new Map<string, Set<Connection>>();
  readonly #host: ConnectionHost;
  /** Aborted when the server closes: ends agent resolutions still in flight. */
  readonly #stopping = new AbortController();
  #config: WsConfig;
  #gate: TokenGate;
  #http!: Deno.HttpServer<Deno.NetAddr>;
  #console!: ConsoleAssets;
  #sweep: ReturnType<typeof setInterval> | undefined;
  #pending = 0;
  #lagged = 0;
  #superseded = 0;
  #closing: Promise<void> | undefined;

  private constructor(options: WsServerOptions) {
    this.#agents = options.agents;
    this.#sessions = options.sessions;
    this.#logger = options.logger;
    this.#now = options.now ?? (() => performance.now());
    this.#telemetry = () => options.ctx?.maybe(TelemetryKey);
    this.#ctx = options.ctx;
    this.#quotas = new Quotas(() => this.#config, this.#now);
    this.#config = options.config;
    this.#gate = new TokenGate(options.config.tokens);
    const currentConfig = (): WsConfig => this.#config;
    this.#replays = new ReplayScheduler(() => ({
      concurrency: currentConfig().max_concurrent_replays,
      budget: currentConfig().replay_budget_bytes,
    }));
    this.#host = {
      sessions: options.sessions,
      compaction: () => options.ctx?.maybe(CompactionKey),
      tail: (connection, on) => {
        let set = this.#tails.get(connection.sessionId);
        if (on) {
          if (set === undefined) this.#tails.set(connection.sessionId, set = new Set());
          set.add(connection);
        } else if (set !== undefined) {
          set.delete(connection);
          if (set.size === 0) this.#tails.delete(connection.sessionId);
        }
      },
      get config() {
        return currentConfig();
      },
      replays: this.#replays,
      logger: options.logger,
      frameOf: (event) => this.#frameOf(event),
      lagged: (connection) => {
        this.#lagged++;
        this.#telemetry()?.lagged(connection.agentId);
        this.#forgetAgent(connection);
        this.#logger?.log("warn", "A socket reader fell behind and was dropped (lagged)", {
          agent_id: connection.agentId,
        });
      },
      closed: (connection) => {
        this.#connectionSpans.get(connection)?.end();
        this.#connectionSpans.delete(connection);
        if (this.#connections.delete(connection)) {
          this.#quotas.release(connection.grant.token, connection.agentId);
        }
        this.#forgetAgent(connection);
      },
    };
  }

  /**
   * Binds the configured address and starts serving.
   *
   * @throws {TerretError} `AddrInUse` naming the address and the `port` key when it is taken (another listen
   *   error as is)
   */
  static async start(options: WsServerOptions): Promise<WsServer> {
    const server = new WsServer(options);
    server.#console = await ConsoleAssets.load();
    server.#http = server.#listen(options.config);
    server.#startSweep();
    return server;
  }

  /** The bound port. */
  get port(): number {
    return this.#http.addr.port;
  }

  /** The bound host. */
  get hostname(): string {
    return this.#http.addr.hostname;
  }

  /** `ws://host:port`. */
  get url(): string {
    const host = this.hostname.includes(":") ? `[${this.hostname}]` : this.hostname;
    return `ws://${host}:${this.port}`;
  }

  /** The current config. */
  get config(): WsConfig {
    return this.#config;
  }

  /** The server's figures. */
  stats(): WsStats {
    const replays = this.#replays.stats();
    return {
      connections: this.#connections.size,
      subscribers: [...this.#tails.values()].reduce((sum, set) => sum + set.size, 0),
      replays_running: replays.running,
      replays_waiting: replays.waiting,
      replays_blocked: replays.blocked,
      replays_peak: replays.peak,
      replay_bytes: replays.bytes,
      replay_bytes_peak: replays.bytes_peak,
      lagged: this.#lagged,
      superseded: this.#superseded,
    };
  }

  /**
   * Applies a new config to the running server: tokens (closing with 1008 every connection its token no longer
   * grants), limits and caps at once; heartbeat and frame rate for new connections. A changed address is bound
   * first (a failure throws and changes nothing), then the old listener and its connections are closed (1001).
   */
  async reconfigure(config: WsConfig): Promise<void> {
    const moved = config.host !== this.#config.host || config.port !== this.#config.port;
    const fresh = moved ? this.#listen(config) : undefined;
    const old = this.#http;
    this.#config = config;
    this.#gate = new TokenGate(config.tokens);
    this.#replays.resized();
    this.#startSweep();
    for (const connection of [...this.#connections]) {
      if (moved) connection.close(CLOSE.goingAway, "server address changed");
      else if (!this.#gate.stillGrants(connection.grant, connection.agentId)) {
        connection.close(CLOSE.policy, "token revoked");
      }
    }
    if (fresh !== undefined) {
      this.#http = fresh;
      await this.#drain([...this.#connections]);
      await old.shutdown();
    }
  }

  /** Stops the server (idempotent): see the class contract. */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #shutdown(): Promise<void> {
    if (this.#sweep !== undefined) clearInterval(this.#sweep);
    this.#stopping.abort();
    const connections = [...this.#connections];
    for (const connection of connections) {
      connection.close(CLOSE.goingAway, "server shutting down");
    }
    await this.#drain(connections);
    await this.#http.shutdown();
    await Promise.allSettled(connections.map((connection) => connection.settled()));
    this.#replays.close();
  }

  /** Waits (at most the grace period) for `connections` to finish closing. */
  async #drain(connections: readonly Connection[]): Promise<void> {
    const started = performance.now();
    while (
      connections.some((connection) => this.#connections.has(connection)) &&
      performance.now() - started < SHUTDOWN_GRACE_MS
    ) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  #listen(config: WsConfig): Deno.HttpServer<Deno.NetAddr> {
    try {
      return this.#serve(config);
    } catch (error) {
      if (!(error instanceof Deno.errors.AddrInUse)) throw error;
      const address = config.host.includes(":")
        ? `[${config.host}]:${config.port}`
        : `${config.host}:${config.port}`;
      throw new TerretError(
        "AddrInUse",
        `Cannot listen on ${address}: the address is already in use (another server holds it; stop it, or ` +
          `set the row's "port" key to a free port, 0 for any)`,
        { cause: error, details: { host: config.host, port: config.port } },
      );
    }
  }

  #serve(config: WsConfig): Deno.HttpServer<Deno.NetAddr> {
    return Deno.serve({
      hostname: config.host,
      port: config.port,
      onListen() {},
      onError: (error) => {
        this.#logger?.log("error", "The socket server failed to answer a request", { error });
        return textResponse(500, "internal error");
      },
    }, (request, info) => this.#handle(request, info));
  }

  #startSweep(): void {
    if (this.#sweep !== undefined) clearInterval(this.#sweep);
    const every = Math.min(1000, Math.max(10, (this.#config.send_timeout_seconds * 1000) / 4));
    this.#sweep = setInterval(() => {
      const now = performance.now();
      for (const connection of this.#connections) connection.checkStalled(now);
    }, every);
  }

  async #handle(request: Request, info: Deno.ServeHandlerInfo): Promise<Response> {
    const url = new URL(request.url);
    if (this.#config.console) {
      const asset = this.#console.answer(request.method, url.pathname, request.headers);
      if (asset !== undefined) return asset;
    }
    const target = route(request.method, url.pathname);
    switch (target.kind) {
      case "health":
        return healthResponse(this.#saturation());
      case "ready":
        return await this.#ready(request, info);
      case "not_found":
        return textResponse(404, "not found");
      case "bad_agent_id":
        return textResponse(400, "invalid agent id");
      case "agents":
        return await this.#list(request, url);
      case "agent":
        return await this.#describe(request, target.agentId);
    }
    const { agentId } = target;
    const presented = presentedToken(request.headers);
    const grant = this.#gate.authorize(presented?.token, agentId);
    if (grant === undefined) return unauthorizedResponse();
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
      return textResponse(426, "websocket upgrade required", { upgrade: "websocket" });
    }
    if (this.#closing !== undefined) return textResponse(503, "server shutting down");
    if (this.#connections.size + this.#pending >= this.#config.max_connections) {
      return textResponse(503, "too many connections", RETRY);
    }
    const refused = this.#quotas.admit(grant.token, agentId);
    if (refused !== undefined) {
      return textResponse(
        429,
        refused === "token"
          ? "too many connections for this token"
          : "too many connections to this agent",
        RETRY,
      );
    }
    let admitted = false;
    this.#pending++;
    try {
      let link: AgentLink;
      try {
        link = await this.#agents.open(agentId, {
          signal: this.#stopping.signal,
          admit: () => this.#quotas.admitSession(grant.token, agentId),
        });
      } catch (error) {
        const code = (error as { code?: unknown })?.code;
        this.#logger?.log("warn", "The socket could not resolve an agent", {
          agent_id: agentId,
          error,
        });
        return textResponse(
          503,
          `agent unavailable: ${typeof code === "string" ? code : "internal error"}`,
          code === "AgentsBusy" ? RETRY : {},
        );
      }
      if (this.#closing !== undefined) return textResponse(503, "server shutting down");
      let upgraded: Deno.WebSocketUpgrade;
      try {
        upgraded = Deno.upgradeWebSocket(request, {
          idleTimeout: this.#config.heartbeat_seconds,
          ...(presented?.viaSubprotocol === true ? { protocol: SUBPROTOCOL } : {}),
        });
      } catch {
        return textResponse(400, "bad websocket handshake");
      }
      const connection = new Connection(upgraded.socket, link, grant, this.#host, this.#now);
      this.#connections.add(connection);
      const telemetry = this.#telemetry();
      if (telemetry?.enabled === true) {
        this.#connectionSpans.set(connection, telemetry.connection(agentId));
      }
      admitted = true;
      const previous = this.#byAgent.get(agentId);
      this.#byAgent.set(agentId, connection);
      if (previous !== undefined && previous !== connection) {
        this.#superseded++;
        previous.close(CLOSE.superseded, "superseded");
      }
      return upgraded.response;
    } finally {
      this.#pending--;
      if (!admitted) this.#quotas.release(grant.token, agentId);
    }
  }

  /** What is full, for `/healthz`: the connection cap, and every resident agent busy at the agents' cap. */
  #saturation(): string[] {
    const saturated: string[] = [];
    if (this.#connections.size + this.#pending >= this.#config.max_connections) {
      saturated.push("connections");
    }
    const agents = this.#agents.figures();
    if (agents.resident >= agents.max && agents.busy >= agents.resident) saturated.push("agents");
    return saturated;
  }

  /**
   * `GET /readyz`: the store, sandbox and model checks with reasons (200 when all are ready, else 503). Answered to
   * a loopback peer (a sidecar or `kubectl exec` probe) or to any configured token; anyone else gets the 401.
   */
  async #ready(request: Request, info: Deno.ServeHandlerInfo): Promise<Response> {
    const peer = info.remoteAddr as Deno.NetAddr;
    const loopback = peer.transport === "tcp" &&
      (peer.hostname === "::1" || peer.hostname.startsWith("127.") ||
        peer.hostname === "::ffff:127.0.0.1");
    if (!loopback && this.#gate.grantOf(presentedToken(request.headers)?.token) === undefined) {
      return unauthorizedResponse();
    }
    const readiness = await checkReadiness(this.#ctx, this.#sessions, {
      signal: this.#stopping.signal,
    });
    return jsonResponse(readiness.status === "ready" ? 200 : 503, readiness);
  }

  /** `GET /v1/agents?after=<id>&limit=<n>`: the agents the token is granted, paged by id. */
  async #list(request: Request, url: URL): Promise<Response> {
    const found = this.#gate.grantOf(presentedToken(request.headers)?.token);
    if (found === undefined) return unauthorizedResponse();
    const after = url.searchParams.get("after") ?? undefined;
    const rawLimit = url.searchParams.get("limit");
    const limit = rawLimit === null ? undefined : Number(rawLimit);
    if (limit !== undefined && !(Number.isSafeInteger(limit) && limit >= 1 && limit <= MAX_PAGE)) {
      return textResponse(400, `invalid limit: it must be an integer from 1 to ${MAX_PAGE}`);
    }
    const page = await listAgents(
      this.#sessions,
      this.#agents,
      found.granted,
      { after, limit },
      { signal: this.#stopping.signal },
    );
    return jsonResponse(200, page);
  }

  /** `GET /v1/agents/{id}`: one granted agent with its plan, 404 when it has no session (401 when not granted). */
  async #describe(request: Request, agentId: string): Promise<Response> {
    if (this.#gate.authorize(presentedToken(request.headers)?.token, agentId) === undefined) {
      return unauthorizedResponse();
    }
    const summary = await describeAgentDetail(this.#sessions, this.#agents, agentId, {
      signal: this.#stopping.signal,
    });
    return summary === undefined ? textResponse(404, "no such agent") : jsonResponse(200, summary);
  }

  #forgetAgent(connection: Connection): void {
    if (this.#byAgent.get(connection.agentId) === connection) {
      this.#byAgent.delete(connection.agentId);
    }
  }

  #frameOf(event: EventJson): EventFrame {
    let frame = this.#frames.get(event);
    if (frame === undefined) {
      frame = { text: `{"type":"event","event":${event.json}}`, bytes: undefined };
      this.#frames.set(event, frame);
    }
    return frame;
  }
}
