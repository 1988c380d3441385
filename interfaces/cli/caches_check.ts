/**
 * The caches doctor check: the sessions row's history cache against the agents row's cap. Each step derives its
 * agent's history from the cache; with more agents resident than the cache holds, agents taking steps in turn evict
 * each other's histories, and each step replays its agent's whole history from the store (on a 98,000-event
 * session, 60 ms a step instead of 0.01). It runs at `serve` too, so a host configured that way says so at boot.
 *
 * @module
 */
import { AgentRegistry, sessionsPlugin } from "@terret/core";
import type { AgentsConfig } from "@terret/core/agents";
import type { SessionsConfig } from "@terret/core/sessions";
import type { DoctorCheck } from "@terret/terret";

/**
 * The `caches` check (`atServe`): with an agents row and a sessions row enabled, a `warning` when `max_agents`
 * exceeds `history_cache_sessions` (naming both rows and the value to set), else `ok`; nothing without both rows.
 */
export const cachesCheck: DoctorCheck = {
  name: "caches",
  description: "the sessions row's history cache holds every resident agent's history",
  atServe: true,
  run(input) {
    const agents = input.prepared.find((row) => row.plugin === AgentRegistry);
    const sessions = input.prepared.find((row) => row.plugin === sessionsPlugin);
    if (agents === undefined || sessions === undefined) return Promise.resolve([]);
    const maxAgents = (agents.parsed as AgentsConfig).max_agents;
    const histories = (sessions.parsed as SessionsConfig).history_cache_sessions;
    if (maxAgents <= histories) {
      return Promise.resolve([{
        level: "ok",
        check: "caches",
        row: sessions.composed.id,
        message:
          `the history cache holds ${histories} sessions, at least the ${maxAgents} agents row "${agents.composed.id}" keeps resident`,
      }]);
    }
    return Promise.resolve([{
      level: "warning",
      check: "caches",
      row: sessions.composed.id,
      message:
        `history_cache_sessions (${histories}) is below row "${agents.composed.id}"'s max_agents (${maxAgents}): ` +
        "with more agents taking steps than the cache holds, each step replays its agent's whole history from " +
        `the store; set history_cache_sessions to at least ${maxAgents} on row "${sessions.composed.id}"`,
    }]);
  },
};
