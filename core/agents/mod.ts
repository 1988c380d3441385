/**
 * Agents: the `agents` registry, the agent handle and inbox, the driver contract a loop implements, and the agent lifecycle events.
 *
 * Import from `@terret/core/agents`.
 *
 * @module
 */
export {
  AGENT_EVENTS,
  AgentDisposed,
  type AgentDisposedPayload,
  type AgentStatus,
  AgentStatusChanged,
  type AgentStatusChangedPayload,
} from "./events.ts";
export type { Agent, EnqueueOptions, IdleOptions, InjectOptions, QueuedInput } from "./agent.ts";
export { type AgentClock, AgentClockKey } from "./agent_clock.ts";
export { type AgentLease, type AgentLeases, AgentLeasesKey } from "./agent_leases.ts";
export { type AgentsConfig, agentsConfig } from "./agents_config.ts";
export { findPendingInput, type PendingInput } from "./pending_input.ts";
export {
  AGENT_SHUTDOWN,
  type Driver,
  LoopKey,
  type OpenTurn,
  TURN_CANCELLED,
  type TurnOutcome,
  type TurnRun,
} from "./driver.ts";
export { Inbox } from "./inbox.ts";
export { findOpenTurn } from "./open_turn.ts";
export { AgentRegistry, assertAgentId } from "./agent_registry.ts";
export {
  type Agents,
  AgentsKey,
  type CreateAgentOptions,
  type DisposeAgentOptions,
  type EnsureAgentOptions,
} from "./agents.ts";
