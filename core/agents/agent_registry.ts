/**
 * The `agents` service: the registry of resident agents and their lifecycle (create, resolve-or-create by id,
 * rehydration from the log, idle eviction, the resident cap, disposal), each agent bound to a durable session and a
 * forked context.
 *
 * @module
 */
import type { z } from "zod";
import { type Context, type HostPermissions, Service, type ServiceKey } from "@terret/hames";
import { CORE_ERRORS, TerretError } from "../errors.ts";
import { PromptKey } from "../prompt/prompt_assembler.ts";
import { assertSessionId, SESSION_ID_PATTERN } from "../sessions/envelope.ts";
import { type Sessions, SessionsKey } from "../sessions/sessions.ts";
import type { Agent } from "./agent.ts";
import type {
  Agents,
  CreateAgentOptions,
  DisposeAgentOptions,
  EnsureAgentOptions,
} from "./agents.ts";
import { AgentHandle } from "./_agent_handle.ts";
import { driverOf } from "./driver.ts";
import { AgentClockKey } from "./agent_clock.ts";
import { AgentLeasesKey } from "./agent_leases.ts";
import { AgentDisposed, type AgentDisposedPayload, AgentStatusChanged } from "./events.ts";
import { findOpenTurn } from "./open_turn.ts";
import { readPendingInput } from "./pending_input.ts";
import { InputWatermarks } from "./_input_watermarks.ts";
import { recoverQueuedInput } from "./_recover_input.ts";
import { AgentsKey } from "./agents.ts";
import { type AgentsConfig, agentsConfig } from "./agents_config.ts";

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
  /** Evictions still disposing, by agent id: a creation of the same id waits for it. */
  readonly #evicting = new Map<string, Promise<void>>();
  /** Where each session's queued input is known claimed, kept as its agent leaves memory (read from there next). */
  readonly #watermarks = new InputWatermarks();
  #evictions = 0;
  #sweeper: ReturnType<typeof setInterval> | undefined;
  /** The periodic take-over of agents whose holder died (only with a lease provider). */
  #takeover: ReturnType<typeof setInterval> | undefined;
  #takingOver = false;
  #recovery: Promise<void> | undefined;
  #stopped = false;
  /** The scope agents' forks hang off: disposed after the shutdown effect has stopped every agent. */
  #home: Context | undefined;

  get count(): number {
    return this.#agents.size;
  }

  get maxAgents(): number {
    return this.config.max_agents;
  }

  get busyCount(): number {
    let busy = 0;
    for (const agent of this.#agents.values()) if (!agent.evictable) busy++;
    return busy;
  }

  get evictions(): number {
    return this.#evictions;
  }

  /** Applies a new cap and idle period in place; resident agents are kept until the next creation or sweep. */
  override reconfigure(_config: AgentsConfig): void {
    this.#startSweeper();
  }

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
      const resident = this.#agents.get(agentId);
      if (resident !== undefined) {
        resident.touch();
        return Promise.resolve(resident);
      }
      const pending = this.#pending.get(agentId);
      if (pending !== undefined) return pending;
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
    await this.#dispose(agent, "disposed");
  }

  async sweep(): Promise<number> {
    const after = this.config.idle_evict_after * 1000;
    if (after <= 0 || this.#stopped) return 0;
    const now = this.#now();
    const idle = [...this.#agents.values()].filter((agent) =>
      agent.evictable && now - agent.usedAt >= after
    );
    await Promise.all(idle.map((agent) => this.#dispose(agent, "evicted")));
    return idle.length;
  }

  override start(): void {
    this.#home = this.ctx.scope("agents");
    this.ctx.effect(() => () => this.#shutdown(), "agents: shutdown");
    this.#startSweeper();
    this.#startTakeover();
    if (this.config.recover_input) {
      const halt = Promise.withResolvers<boolean>();
      this.ctx.effect(() => () => halt.resolve(false), "agents: recovery halt");
      this.#recovery = recoverQueuedInput({
        sessions: this.ctx.get(SessionsKey),
        logger: this.ctx.logger,
        stopped: () => this.#stopped,
        resident: (id) => this.#agents.has(id) || this.#pending.has(id),
        // The same settling the approvals row waits on: past `idle` every row has started.
        settled: () => Promise.race([this.ctx.idle().then(() => true), halt.promise]),
        driverReady: () => driverOf(this.ctx) !== undefined,
        ensure: (id) => this.ensure(id),
      });
    }
  }

  /** Resolves once the start-up recovery of unclaimed input has finished (at once when it is off). */
  async recovered(): Promise<void> {
    await this.#recovery;
  }

  #now(): number {
    return this.ctx.maybe(AgentClockKey)?.now() ?? performance.now();
  }

  #startSweeper(): void {
    if (this.#sweeper !== undefined) clearInterval(this.#sweeper);
    this.#sweeper = undefined;
    const after = this.config.idle_evict_after * 1000;
    if (after <= 0 || this.#stopped) return;
    const every = Math.min(60_000, Math.max(1000, after / 4));
    this.#sweeper = setInterval(() => {
      this.sweep().catch((error) =>
        this.ctx.logger.log("error", "The agents service failed to evict idle agents", { error })
      );
    }, every);
    Deno.unrefTimer(this.#sweeper);
  }

  /**
   * With a lease provider: every `ttl_ms`, the agents whose lease expired unreleased (their node died or stalled)
   * are made resident here and adopted (their open turn resumed from the log, their unclaimed input run).
   */
  #startTakeover(): void {
    const leases = this.ctx.maybe(AgentLeasesKey);
    if (leases === undefined) return;
    this.#takeover = setInterval(() => void this.takeOver(), Math.max(100, leases.ttl_ms));
    Deno.unrefTimer(this.#takeover);
  }

  /**
   * Adopts the agents whose lease expired unreleased (their holder died or stalled), in batches of
   * {@linkcode TAKEOVER_BATCH} until none is left that this pass has not tried, or until the cap on resident agents
   * refuses one (every agent resident here is busy); resolves with the ids it tried. Run every lease ttl (one pass at
   * a time); a no-op without a lease provider. An agent whose adoption failed is tried again by the next pass.
   */
  async takeOver(): Promise<string[]> {
    const leases = this.ctx.maybe(AgentLeasesKey);
    if (leases === undefined || this.#stopped || this.#takingOver) return [];
    this.#takingOver = true;
    // An adopted agent acquires its lease in its own pump, so the next batch's query may still list it: each batch
    // asks for as many more as this pass has tried, and skips those.
    const tried = new Set<string>();
    try {
      for (;;) {
        const want = tried.size + TAKEOVER_BATCH;
        const listed = await leases.orphaned(want);
        const batch = listed.filter((id) => !tried.has(id));
        for (const id of batch) {
          if (this.#stopped) return [...tried];
          tried.add(id);
          try {
            const agent = this.#agents.get(id) ?? await this.ensure(id);
            (agent as AgentHandle).adopt();
          } catch (error) {
            this.ctx.logger.log("warn", `The agents service could not take agent "${id}" over`, {
              agent_id: id,
              error,
            });
            if (CORE_ERRORS.is(error, "AgentsBusy")) return [...tried];
          }
        }
        if (batch.length === 0 || listed.length < want) return [...tried];
      }
    } catch (error) {
      this.ctx.logger.log("warn", "The agents service could not list agents to take over", {
        error,
      });
      return [...tried];
    } finally {
      this.#takingOver = false;
    }
  }

  async #shutdown(): Promise<void> {
    this.#stopped = true;
    if (this.#takeover !== undefined) clearInterval(this.#takeover);
    this.#takeover = undefined;
    await this.#recovery;
    if (this.#sweeper !== undefined) clearInterval(this.#sweeper);
    this.#sweeper = undefined;
    await Promise.allSettled([...this.#pending.values()]);
    const agents = [...this.#agents.values()];
    await Promise.all(agents.map((agent) => agent.stop()));
    for (const agent of agents) await this.#dispose(agent, "stopped");
    await Promise.allSettled([...this.#evicting.values()]);
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
    const resident = this.#agents.size + this.#pending.size;
    let evicting: Promise<void> | undefined;
    if (resident >= this.config.max_agents) {
      const victims = this.#leastRecentlyUsed(resident - this.config.max_agents + 1);
      if (victims === undefined) {
        throw new TerretError(
          "AgentsBusy",
          `Cannot make agent "${id}" resident: all ${resident} resident agents are busy and the cap ` +
            `(agents.max_agents) is ${this.config.max_agents}; retry once one is idle`,
          { details: { agent_id: id, max_agents: this.config.max_agents, retryable: true } },
        );
      }
      evicting = Promise.all(victims.map((victim) => this.#dispose(victim, "evicted"))).then(
        () => {},
      );
    }
    const creation = this.#open(id, sessionId, meta, signal, evicting).finally(() => {
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
    evicting?: Promise<void>,
  ): Promise<AgentHandle> {
    await evicting;
    await this.#evicting.get(id);
    const sessions = this.ctx.get(SessionsKey);
    const signalOption = signal === undefined ? {} : { signal };
    let open = undefined;
    let queued: Awaited<ReturnType<typeof readPendingInput>> = {
      pending: [],
      through: 0,
      settled: 0,
    };
    const head = await sessions.head(sessionId, signalOption);
    if (head > 0) {
      open = await findOpenTurn(sessions, sessionId, signalOption);
      // The log's unclaimed input, read after the watermark this session's last agent here left.
      const after = this.#watermarks.get(sessionId, head);
      queued = await readPendingInput(sessions, sessionId, { after, ...signalOption });
    } else {
      try {
        await sessions.create({
          session_id: sessionId,
          meta: { ...meta, agent_id: id, ...this.ctx.maybe(PromptKey)?.creationMeta(this.ctx) },
          ...signalOption,
        });
      } catch (error) {
        if (!(error instanceof TerretError && error.code === "SessionExists")) throw error;
        open = await findOpenTurn(sessions, sessionId, signalOption);
        queued = await readPendingInput(sessions, sessionId, signalOption);
      }
    }
    const { pending, settled } = queued;
    if (this.#stopped) {
      throw new TerretError("AgentsStopped", `Cannot create agent "${id}": the service stopped`);
    }
    const ctx = this.#home!.fork(`agent:${id}`);
    const agent = new AgentHandle(id, sessionId, ctx, this.#host(sessions), open, pending, settled);
    this.#agents.set(id, agent);
    this.#bySession.set(sessionId, agent);
    // Acknowledged input no step claimed before the restart or eviction is queued again, once, and wakes it.
    if (pending.some((item) => item.wake)) agent.wake();
    return agent;
  }

  /** The `count` evictable resident agents used least recently, or `undefined` when fewer are evictable. */
  #leastRecentlyUsed(count: number): AgentHandle[] | undefined {
    const evictable = [...this.#agents.values()].filter((agent) => agent.evictable);
    if (evictable.length < count) return undefined;
    return evictable.sort((a, b) => a.usedAt - b.usedAt).slice(0, count);
  }

  #host(sessions: Sessions): ConstructorParameters<typeof AgentHandle>[3] {
    return {
      sessions,
      logger: this.ctx.logger,
      driver: () => driverOf(this.ctx),
      statusChanged: (payload) => this.ctx.emit(AgentStatusChanged, payload),
      clock: () => this.#now(),
      leases: this.ctx.maybe(AgentLeasesKey),
      leaseLost: (agent, error) => {
        this.ctx.logger.log(
          "warn",
          `Agent "${agent.id}" lost its lease to another node; it stops here`,
          { agent_id: agent.id, session_id: agent.session_id, error },
        );
        void agent.stop("another node holds its lease").then(() =>
          this.#dispose(agent, "lease_lost")
        );
      },
    };
  }

  /**
   * Takes the agent out of the registry at once (synchronously, so the resident count drops before any await),
   * then disposes its fork and announces it. An eviction is tracked until done so a rehydration of the same id
   * waits for the old agent's shells and terminals to close.
   */
  #dispose(agent: AgentHandle, reason: AgentDisposedPayload["reason"]): Promise<void> {
    if (this.#agents.get(agent.id) !== agent) {
      return this.#evicting.get(agent.id) ?? Promise.resolve();
    }
    this.#agents.delete(agent.id);
    this.#bySession.delete(agent.session_id);
    this.#watermarks.remember(agent.session_id, agent.settledSeq);
    agent.markDisposed();
    if (reason === "evicted") this.#evictions++;
    const done = (async () => {
      await agent.ctx.dispose();
      if (reason !== "stopped") {
        const sessions = this.ctx.maybe(SessionsKey);
        if (sessions !== undefined) {
          await this.#watermarks.settle(
            sessions,
            agent.session_id,
            agent.settledSeq,
            this.ctx.logger,
          );
        }
      }
      // The derived history grows with the session: it leaves memory with the agent (read again on rehydration).
      this.ctx.maybe(SessionsKey)?.release(agent.session_id);
      this.ctx.emit(AgentDisposed, { agent_id: agent.id, session_id: agent.session_id, reason });
    })().finally(() => {
      if (this.#evicting.get(agent.id) === done) this.#evicting.delete(agent.id);
    });
    this.#evicting.set(agent.id, done);
    return done;
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

/** How many orphaned agents a take-over pass lists and adopts at a time (it goes on while more are listed). */
const TAKEOVER_BATCH = 32;
