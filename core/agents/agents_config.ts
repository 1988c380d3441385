/**
 * The `agents` row's config: the resident cap, idle eviction and the start-up recovery of queued input.
 *
 * @module
 */
import { z } from "zod";

/** The `agents` row's config. */
export interface AgentsConfig {
  /** The most agents resident at once. */
  readonly max_agents: number;
  /** Seconds an evictable agent stays resident unused (0: never evicted for idleness). */
  readonly idle_evict_after: number;
  /** At start, make resident the agents whose sessions hold unclaimed acknowledged input. */
  readonly recover_input: boolean;
}

/** The `agents` row's config schema. */
export const agentsConfig: z.ZodType<AgentsConfig> = z.strictObject({
  max_agents: z.number().int().min(1).max(1_000_000).default(128).describe(
    "The most agents resident (in memory) at once; making one more resident evicts the least recently used idle " +
      "one, and only when every resident agent is busy is it refused (AgentsBusy, retryable). Sessions of " +
      "evicted agents stay in the store and are rehydrated on the next use",
  ),
  idle_evict_after: z.number().min(0).max(31_536_000).default(600).describe(
    "Seconds an idle agent (no turn, nothing queued, no open turn) stays resident unused before it is evicted " +
      "(its shell and terminals are closed, its session stays); 0 disables idle eviction",
  ),
  recover_input: z.boolean().default(true).describe(
    "At start, scan the store and make resident every agent whose session holds acknowledged input " +
      "(input/queued) that no step claimed, so it is claimed without waiting for a client",
  ),
}) as z.ZodType<AgentsConfig>;
