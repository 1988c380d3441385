/**
 * The `agents` service's contract: the {@linkcode Agents} seam, its options and its key. The registry that
 * implements it is `agent_registry.ts`.
 *
 * @module
 */
import { defineService, type ServiceKey } from "@terret/hames";
import type { Agent } from "./agent.ts";

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
 * - An agent is **resident** while it is in memory (inbox, status, forked context). Its session always stays in the
 *   store; an agent that is not resident is made resident again from the log (rehydrated) by `ensure`.
 * - At most `max_agents` agents are resident at once (creations in flight count). Making one more resident first
 *   evicts the least recently used evictable agent; only when none is evictable (every resident agent is busy) is
 *   it refused with `AgentsBusy` (details `retryable: true`): retry once an agent is idle. Lowering the cap evicts
 *   nothing at once; it only applies to later creations and sweeps.
 * - An agent is evictable when no turn runs or is starting (so never while `waiting_approval`), nothing is queued
 *   or being queued, and the log holds no open turn for it (a turn left open by a crash keeps it resident until it
 *   is re-entered). `sweep` evicts every evictable agent unused for `idle_evict_after` seconds (run every quarter of
 *   it, at most every minute); 0 disables idle eviction (the cap still evicts).
 * - Eviction is a disposal (`agent/disposed` with `reason: "evicted"`): the agent's forked context is disposed and
 *   its shell and terminals are closed by their owners (their process groups are killed; nothing keeps running
 *   for an evicted agent). Rehydration re-reads the open turn and the unclaimed durable input
 *   (`input/queued`) from the log, so the next request is the one it would have been without the eviction.
 * - An agent id is resident at most once (`AgentExists`) and a session is driven by at most one resident agent
 *   (`SessionInUse`). Ids match `[A-Za-z0-9][A-Za-z0-9_.-]{0,127}` (`InvalidAgentId`).
 * - `ensure(id)` is the resolve-or-create by id that survives restarts and evictions: the resident agent, or a new
 *   one on the session whose id is the agent id (created with meta `{agent_id}` when the log does not hold it).
 *   Concurrent calls for one id share one creation; a creation waits for an eviction of the same id to finish.
 * - `disposeAgent` refuses an agent with a turn running (`AgentBusy`); it disposes the agent's forked context (its
 *   tools, sections and listeners), drops its queued in-memory input (durable input stays in the log), then emits
 *   `agent/disposed`.
 * - Stopping the service stops every agent: a running turn is aborted as a shutdown and left open in the log (the
 *   next process re-enters it on its first wake), then every agent is disposed as above.
 */
export interface Agents {
  /** Creates an agent. */
  create(options?: CreateAgentOptions): Promise<Agent>;
  /** The resident agent with this id, or one made resident on the session of the same id (rehydrated or new). */
  ensure(agentId: string, options?: EnsureAgentOptions): Promise<Agent>;
  /** The resident agent with this id (a read: it does not count as a use). */
  get(agentId: string): Agent | undefined;
  /** The resident agent driving this session. */
  agentForSession(sessionId: string): Agent | undefined;
  /** Every resident agent, in the order they were made resident. */
  list(): readonly Agent[];
  /** How many agents are resident. */
  readonly count: number;
  /** The cap on resident agents (the row's `max_agents`). */
  readonly maxAgents: number;
  /** How many resident agents are busy (not evictable). */
  readonly busyCount: number;
  /** Evictions since the start (idle sweeps, the cap, `dispose`). */
  readonly evictions: number;
  /** Disposes an agent that is not running a turn. */
  disposeAgent(agentId: string, options?: DisposeAgentOptions): Promise<void>;
  /** Evicts every evictable agent unused for `idle_evict_after`; resolves with how many were evicted. */
  sweep(): Promise<number>;
}

/** The agents service key. */
export const AgentsKey: ServiceKey<Agents> = defineService<Agents>(
  "agents",
  "Live agents: one inbox, a status machine and a forked context each, bound to a durable session",
);
