/**
 * The `agents` service: the registry of live agents and their lifecycle (create, resolve-or-create by id, the cap,
 * disposal), each agent bound to a durable session and a forked context.
 *
 * @module
 */
import { z } from "zod";
import {
  type Context,
  defineService,
  type HostPermissions,
  Service,
  type ServiceKey,
} from "@terret/hames";
import { TerretError } from "../errors.ts";
import { assertSessionId, SESSION_ID_PATTERN } from "../sessions/envelope.ts";
import { type Sessions, SessionsKey } from "../sessions/sessions.ts";
import type { Agent } from "./agent.ts";
import { AgentHandle } from "./_agent_handle.ts";
import { driverOf } from "./driver.ts";
import { AgentDisposed, AgentStatusChanged } from "./events.ts";
import { findOpenTurn } from "./open_turn.ts";

/** Options for {@linkcode Agents.create}. */
export interface CreateAgentOptions {
  /** The agent id (default: a random UUID); `AgentExists` when a live agent has it. */
  readonly agent_id?: string;
  /**
   * The session to drive (default: the agent id). An existing session is attached as is (its open turn, if any,
   * is re-entered on the first wake); otherwise it is created with `session/created` meta `{agent_id, ...meta}`.
   */
  readonly session_id?: string;
  /** Extra `session/created` meta for a new session (`persona`, …); ignored for an existing one. */
  readonly meta?: Readonly<Record<string, unknown>>;
  readonly signal?: AbortSignal;
}

/** Options for {@linkcode Agents.ensure}. */
export interface EnsureAgentOptions {
  /** Extra `session/created` meta when the session has to be created. */
  readonly meta?: Readonly<Record<string, unknown>>;
  readonly signal?: AbortSignal;
}

/** Options for {@linkcode Agents.disposeAgent}. */
export interface DisposeAgentOptions {
  readonly signal?: AbortSignal;
}

/**
 * The agent registry (service key `agents`).
 *
 * Contract:
 * - At most `max_agents` agents live at once (creations in flight count): one more is refused with
 *   `AgentCapExceeded`. Lowering the cap below the live count disposes nothing; it only refuses new agents.
 * - An agent id is live at most once (`AgentExists`) and a session is driven by at most one live agent
 *   (`SessionInUse`). Ids match `[A-Za-z0-9][A-Za-z0-9_.-]{0,127}` (`InvalidAgentId`).
 * - `ensure(id)` is the resolve-or-create by id that survives restarts: the live agent, or a new one on the
 *   session whose id is the agent id (created with meta `{agent_id}` when the log does not hold it). Concurrent
 *   calls for one id share one creation.
 * - `disposeAgent` refuses an agent with a turn running (`AgentBusy`); it disposes the agent's forked context (its
 *   tools, sections and listeners), drops its queued input, then emits `agent/disposed`.
 * - Stopping the service stops every agent: a running turn is aborted as a shutdown and left open in the log (the
 *   next process re-enters it on its first wake), then every agent is disposed as above.
 */
export interface Agents {
  /** Creates an agent. */
  create(options?: CreateAgentOptions): Promise<Agent>;
  /** The live agent with this id, or a new one on the session of the same id. */
  ensure(agentId: string, options?: EnsureAgentOptions): Promise<Agent>;
  /** The live agent with this id. */
  get(agentId: string): Agent | undefined;
  /** The live agent driving this session. */
  agentForSession(sessionId: string): Agent | undefined;
  /** Every live agent, in creation order. */
  list(): readonly Agent[];
  /** How many agents live. */
  readonly count: number;
  /** The cap (the row's `max_agents`). */
  readonly maxAgents: number;
  /** Disposes an agent that is not running a turn. */
  disposeAgent(agentId: string, options?: DisposeAgentOptions): Promise<void>;
}

/** The agents service key. */
export const AgentsKey: ServiceKey<Agents> = defineService<Agents>(
  "agents",
  "Live agents: one inbox, a status machine and a forked context each, bound to a durable session",
);

/** The `agents` row's config. */
export interface AgentsConfig {
  /** The most agents alive at once. */
  readonly max_agents: number;
}

/** The `agents` row's config schema. */
export const agentsConfig: z.ZodType<AgentsConfig> = z.strictObject({
  max_agents: z.number().int().min(1).max(1_000_000).default(128).describe(
    "The most agents alive at once in this process; one more is refused (AgentCapExceeded). Raise it live " +
      "with a reconfigure; lowering it disposes nothing",
  ),
}) as z.ZodType<AgentsConfig>;

/**
 * The agent registry (plugin `terret-agents`, row `agents`).
 *
 * @example
 * ```ts ignore
 * const agents = ctx.get(AgentsKey);
 * const agent = await agents.ensure("support-1");
 * agent.send("Hello");
 * await agent.idle();
 * ```
 */
export class AgentRegistry extends Service<AgentsConfig> implements Agents {
  /** The plugin name rows use. */
  static readonly pluginName = "terret-agents";
  /** One line for the config catalog. */
  static readonly description =
    "The agent registry (row agents): agents bound to durable sessions, their inboxes, status and lifecycle.";
  /** The service key. */
  static readonly key: ServiceKey<Agents> = AgentsKey;
  /** Agents live on the log. */
  static readonly inject: readonly ServiceKey<unknown>[] = [SessionsKey];
  /** The config schema. */
  static readonly config: z.ZodType<AgentsConfig> = agentsConfig;

  /** No host permission of its own: sessions and the driver reach the host. */
  static permissions(_config: AgentsConfig): HostPermissions {
    return {};
  }

  readonly #agents = new Map<string, AgentHandle>();
  readonly #bySession = new Map<string, AgentHandle>();
  readonly #pending = new Map<string, Promise<AgentHandle>>();
  readonly #pendingSessions = new Set<string>();
  #stopped = false;
  /** The scope agents' forks hang off: disposed after the shutdown effect has stopped every agent. */
  #home: Context | undefined;

  get count(): number {
    return this.#agents.size;
  }

  get maxAgents(): number {
    return this.config.max_agents;
  }

  /** Applies a new cap in place; live agents are kept. */
  override reconfigure(_config: AgentsConfig): void {}

  get(agentId: string): Agent | undefined {
    return this.#agents.get(agentId);
  }

  agentForSession(sessionId: string): Agent | undefined {
    return this.#bySession.get(sessionId);
  }

  list(): readonly Agent[] {
    return [...this.#agents.values()];
  }

  create(options: CreateAgentOptions = {}): Promise<Agent> {
    try {
      const id = options.agent_id ?? crypto.randomUUID();
      assertAgentId(id);
      if (this.#agents.has(id) || this.#pending.has(id)) {
        throw new TerretError("AgentExists", `Cannot create agent "${id}": it already exists`, {
          details: { agent_id: id },
        });
      }
      return this.#start(id, options.session_id ?? id, options.meta, options.signal);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  ensure(agentId: string, options: EnsureAgentOptions = {}): Promise<Agent> {
    try {
      assertAgentId(agentId);
      const live = this.#agents.get(agentId) ?? this.#pending.get(agentId);
      if (live !== undefined) return Promise.resolve(live);
      return this.#start(agentId, agentId, options.meta, options.signal);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async disposeAgent(agentId: string, options: DisposeAgentOptions = {}): Promise<void> {
    options.signal?.throwIfAborted();
    const agent = this.#agents.get(agentId);
    if (agent === undefined) {
      throw new TerretError("AgentNotFound", `Cannot dispose agent "${agentId}": no such agent`, {
        details: { agent_id: agentId },
      });
    }
    if (agent.busy) {
      throw new TerretError(
        "AgentBusy",
        `Cannot dispose agent "${agentId}": a turn is running (cancel it and wait for idle first)`,
        { details: { agent_id: agentId, status: agent.status } },
      );
    }
    await this.#dispose(agent);
  }

  override start(): void {
    this.#home = this.ctx.scope("agents");
    this.ctx.effect(() => () => this.#shutdown(), "agents: shutdown");
  }

  async #shutdown(): Promise<void> {
    this.#stopped = true;
    await Promise.allSettled([...this.#pending.values()]);
    const agents = [...this.#agents.values()];
    await Promise.all(agents.map((agent) => agent.stop()));
    for (const agent of agents) await this.#dispose(agent);
  }

  #start(
    id: string,
    sessionId: string,
    meta: Readonly<Record<string, unknown>> | undefined,
    signal: AbortSignal | undefined,
  ): Promise<AgentHandle> {
    assertSessionId(sessionId);
    if (this.#stopped) {
      throw new TerretError("AgentsStopped", `Cannot create agent "${id}": the service stopped`);
    }
    if (this.#bySession.has(sessionId) || this.#pendingSessions.has(sessionId)) {
      throw new TerretError(
        "SessionInUse",
        `Cannot create agent "${id}" on session "${sessionId}": another agent drives it`,
        { details: { agent_id: id, session_id: sessionId } },
      );
    }
    const live = this.#agents.size + this.#pending.size;
    if (live >= this.config.max_agents) {
      throw new TerretError(
        "AgentCapExceeded",
        `Cannot create agent "${id}": ${live} agents already live, the cap (agents.max_agents) is ${this.config.max_agents}`,
        { details: { agent_id: id, max_agents: this.config.max_agents } },
      );
    }
    const creation = this.#open(id, sessionId, meta, signal).finally(() => {
      this.#pending.delete(id);
      this.#pendingSessions.delete(sessionId);
    });
    this.#pending.set(id, creation);
    this.#pendingSessions.add(sessionId);
    return creation;
  }

  async #open(
    id: string,
    sessionId: string,
    meta: Readonly<Record<string, unknown>> | undefined,
    signal: AbortSignal | undefined,
  ): Promise<AgentHandle> {
    const sessions = this.ctx.get(SessionsKey);
    const signalOption = signal === undefined ? {} : { signal };
    let open = undefined;
    if (await sessions.head(sessionId, signalOption) > 0) {
      open = await findOpenTurn(sessions, sessionId, signalOption);
    } else {
      try {
        await sessions.create({
          session_id: sessionId,
          meta: { ...meta, agent_id: id },
          ...signalOption,
        });
      } catch (error) {
        if (!(error instanceof TerretError && error.code === "SessionExists")) throw error;
        open = await findOpenTurn(sessions, sessionId, signalOption);
      }
    }
    if (this.#stopped) {
      throw new TerretError("AgentsStopped", `Cannot create agent "${id}": the service stopped`);
    }
    const ctx = this.#home!.fork(`agent:${id}`);
    const agent = new AgentHandle(id, sessionId, ctx, this.#host(sessions), open);
    this.#agents.set(id, agent);
    this.#bySession.set(sessionId, agent);
    return agent;
  }

  #host(sessions: Sessions): ConstructorParameters<typeof AgentHandle>[3] {
    return {
      sessions,
      logger: this.ctx.logger,
      driver: () => driverOf(this.ctx),
      statusChanged: (payload) => this.ctx.emit(AgentStatusChanged, payload),
    };
  }

  async #dispose(agent: AgentHandle): Promise<void> {
    if (this.#agents.get(agent.id) !== agent) return;
    this.#agents.delete(agent.id);
    this.#bySession.delete(agent.session_id);
    agent.markDisposed();
    await agent.ctx.dispose();
    this.ctx.emit(AgentDisposed, { agent_id: agent.id, session_id: agent.session_id });
  }
}

/**
 * Throws unless `id` is an acceptable agent id (the session id pattern: agent ids name URL segments and, by
 * default, sessions).
 *
 * @throws {TerretError} `InvalidAgentId`
 */
export function assertAgentId(id: unknown): asserts id is string {
  if (typeof id !== "string" || !SESSION_ID_PATTERN.test(id)) {
    throw new TerretError(
      "InvalidAgentId",
      `Cannot use agent id ${JSON.stringify(String(id))}: it must match ${SESSION_ID_PATTERN}`,
    );
  }
}
