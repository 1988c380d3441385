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
      "An agent was disposed; tear down per-agent state (shells, terminals, jobs) keyed by its id.",
    payload: z.object({ agent_id: z.string(), session_id: z.string() }),
  },
);
