/**
 * Agent lifecycle events that other packages hang per-agent teardown on.
 *
 * @module
 */
import { defineEvent, type EventDefinition } from "@terret/hames";
import { z } from "zod";

/** Payload of {@linkcode AgentDisposed}. */
export interface AgentDisposedPayload {
  readonly agent_id: string;
  readonly session_id: string;
  /** Why: `evicted` (idle, or to make room; it is rehydrated from its log on next use), `disposed` (asked), `stopped` (the service stopped), `lease_lost` (another node took its lease: it stopped here and runs there). */
  readonly reason?: "evicted" | "disposed" | "stopped" | "lease_lost" | undefined;
}

/**
 * Emitted after an agent is disposed: its forked context is gone, and per-agent runtime state that no
 * registration owns (shells, terminals, jobs) must be torn down by whoever holds it.
 */
export const AgentDisposed: EventDefinition<"emit", AgentDisposedPayload, void> = defineEvent(
  "agent/disposed",
  {
    mode: "emit",
    owner: "@terret/core",
    description:
      "An agent was disposed or evicted; tear down per-agent state (shells, terminals, jobs) keyed by its id.",
    payload: z.object({
      agent_id: z.string(),
      session_id: z.string(),
      reason: z.enum(["evicted", "disposed", "stopped", "lease_lost"]).optional(),
    }),
  },
);

/** An agent's status: `idle` → `running` (→ `waiting_approval` → `running`) → `idle`, or `failed`. */
export type AgentStatus = "idle" | "running" | "waiting_approval" | "failed" | "disposed";

/** Payload of {@linkcode AgentStatusChanged}. */
export interface AgentStatusChangedPayload {
  readonly agent_id: string;
  readonly session_id: string;
  readonly status: AgentStatus;
  readonly previous: AgentStatus;
}

const status = z.enum(["idle", "running", "waiting_approval", "failed", "disposed"]);

/**
 * Emitted (on the agents service's context) whenever an agent's status changes, in order per agent. Live only: the
 * durable record of a turn is its `turn/start` … `turn/end` in the session log.
 */
export const AgentStatusChanged: EventDefinition<"emit", AgentStatusChangedPayload, void> =
  defineEvent("agent/status", {
    mode: "emit",
    owner: "@terret/core",
    description:
      "An agent's status changed (idle, running, waiting_approval, failed, disposed); live, never logged.",
    payload: z.object({
      agent_id: z.string(),
      session_id: z.string(),
      status,
      previous: status,
    }),
  });

/** Every live event the agents service emits, for the events catalog. */
export const AGENT_EVENTS: readonly EventDefinition[] = Object.freeze([
  AgentDisposed,
  AgentStatusChanged,
] as EventDefinition[]);
