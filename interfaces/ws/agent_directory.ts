/**
 * `GET /v1/agents` and `GET /v1/agents/{id}`: what a token may know about the agents it is granted, read from the
 * session log (head, title, usage, last update, and for one agent its plan) and from memory (status, resident).
 *
 * @module
 */
import { EventLoopTurns } from "@terret/hames";
import type { Sessions } from "@terret/core";
import type { AgentStatus } from "@terret/core/agents";
import type { UsageRollup } from "@terret/core/sessions";
import type { AgentGateway } from "./agent_gateway.ts";
import { currentPlan, type PlanItem } from "./agent_plan.ts";

/** One agent as the directory shows it. */
export interface AgentSummary {
  readonly agent_id: string;
  readonly session_id: string;
  /** The session's last seq (0 when the agent has no session yet). */
  readonly head_seq: number;
  /** The resident agent's status; `idle` when it is not resident. */
  readonly status: AgentStatus;
  /** The last `session/titled` title, or `null`. */
  readonly title: string | null;
  readonly resident: boolean;
  /** The `at` of the session's last event, or `null`. */
  readonly updated_at: string | null;
  /** Token usage summed over the session's steps. */
  readonly usage: UsageRollup;
}

/** One agent as `GET /v1/agents/{id}` shows it: its summary and its current plan. */
export interface AgentDetail extends AgentSummary {
  /** The `todos` of its last successful `TodoWrite` call, or `null` when it never kept a plan. */
  readonly plan: readonly PlanItem[] | null;
}

/** A page of {@linkcode AgentSummary}s. */
export interface AgentPage {
  readonly agents: readonly AgentSummary[];
  /** Pass as `after` for the next page; `null` on the last one. */
  readonly next_after: string | null;
}

/** The largest page `limit` accepts; the default is 100. */
export const MAX_PAGE = 1000;
const DEFAULT_PAGE = 100;
/** Session ids listed from the store at once while a page is gathered. */
const LIST_BATCH = 256;

/** The summary of one agent (its session is the one named by its id), or `undefined` when it has none. */
export async function describeAgent(
  sessions: Sessions,
  agents: AgentGateway,
  agentId: string,
  options: { readonly signal?: AbortSignal } = {},
): Promise<AgentSummary | undefined> {
  const state = agents.state(agentId);
  const head = await sessions.head(agentId, options);
  if (head === 0) return undefined;
  const [last, titles, usage] = await Promise.all([
    sessions.read(agentId, { from_seq: head, ...options }),
    sessions.read(agentId, { types: ["session/titled"], ...options }),
    sessions.usage(agentId, options),
  ]);
  const title = (titles.at(-1)?.payload as { title?: unknown } | undefined)?.title;
  return {
    agent_id: agentId,
    session_id: agentId,
    head_seq: head,
    status: state.status,
    title: typeof title === "string" ? title : null,
    resident: state.resident,
    updated_at: last[0]?.at ?? null,
    usage,
  };
}

/** The detail of one agent (its summary and its plan), or `undefined` when it has no session. */
export async function describeAgentDetail(
  sessions: Sessions,
  agents: AgentGateway,
  agentId: string,
  options: { readonly signal?: AbortSignal } = {},
): Promise<AgentDetail | undefined> {
  const summary = await describeAgent(sessions, agents, agentId, options);
  if (summary === undefined) return undefined;
  return { ...summary, plan: await currentPlan(sessions, summary.session_id, options) };
}

/**
 * A page of the agents `granted` allows, ordered by id: sessions in the log whose id is a granted agent id (agents
 * drive the session of their own id), starting after `after`.
 *
 * Costs the page, not the store: session ids are listed from the store a batch at a time from `after` (each batch
 * one bounded read) until the page and one more granted id are found, and the event loop gets a turn between
 * batches and between agents, so a page on a large store never holds the other agents' work up for more than one
 * agent's summary.
 */
export async function listAgents(
  sessions: Sessions,
  agents: AgentGateway,
  granted: (agentId: string) => boolean,
  page: { readonly after: string | undefined; readonly limit: number | undefined },
  options: { readonly signal?: AbortSignal } = {},
): Promise<AgentPage> {
  const limit = Math.min(MAX_PAGE, Math.max(1, page.limit ?? DEFAULT_PAGE));
  const turns = new EventLoopTurns();
  // The page, and one more granted id to know whether a next page exists.
  const ids: string[] = [];
  let cursor = page.after;
  for (;;) {
    const batch = await sessions.list({
      ...(cursor === undefined ? {} : { after: cursor }),
      limit: LIST_BATCH,
      ...options,
    });
    let last = cursor;
    for (const id of batch) {
      // Ids at or before the cursor are skipped, so a page ends even over a store that ignored `after`.
      if (last !== undefined && id <= last) continue;
      last = id;
      if (ids.length <= limit && granted(id)) ids.push(id);
    }
    if (ids.length > limit || batch.length < LIST_BATCH || last === cursor) break;
    cursor = last;
    await turns.turn();
  }
  const chosen = ids.slice(0, limit);
  const summaries: AgentSummary[] = [];
  for (const id of chosen) {
    await turns.turn();
    const summary = await describeAgent(sessions, agents, id, options);
    if (summary !== undefined) summaries.push(summary);
  }
  return {
    agents: summaries,
    next_after: ids.length > limit ? chosen.at(-1)! : null,
  };
}
