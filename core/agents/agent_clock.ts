/**
 * The clock the agents service reads for idle eviction (service key `agents.clock`): the real one by default, a
 * fake one in tests so eviction never depends on the wall clock.
 *
 * @module
 */
import { defineService, type ServiceKey } from "@terret/hames";

/**
 * A millisecond clock.
 *
 * Contract: `now` is monotonic non-decreasing and cheap; it must not throw. The agents service reads it on every
 * use of an agent and on every idle sweep.
 */
export interface AgentClock {
  /** Milliseconds on any fixed origin. */
  now(): number;
}

/** The agent clock's service key; when nothing provides it the agents service reads `performance.now`. */
export const AgentClockKey: ServiceKey<AgentClock> = defineService<AgentClock>(
  "agents.clock",
  "The millisecond clock idle eviction reads (tests provide a fake one)",
);
