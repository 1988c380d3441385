/**
 * The agent lease seam (service key `agents.leases`): what a store shared by several processes provides so that at
 * most one process runs an agent's turns at a time, and so that a process that lost an agent can never write to its
 * session again. Nothing provides it on a single-process store (memory, JSONL, SQLite): agents then run unleased.
 *
 * @module
 */
import { defineService, type ServiceKey } from "@terret/hames";
import type { TerretError } from "../errors.ts";

/** A held agent lease. */
export interface AgentLease {
  /** The leased key: the agent's session id (appends to that session are fenced). */
  readonly agent_id: string;
  /** The process (node) holding it. */
  readonly owner: string;
  /** The fencing token of this grant (each new holder gets a greater one). */
  readonly token: number;
  /** When it expires unless renewed (the provider's clock, epoch milliseconds). */
  readonly expires_at: number;
}

/**
 * Leases with fencing tokens, keyed by session id.
 *
 * Contract:
 * - `acquire` grants the lease for `ttl_ms` when it is free, expired, or already this node's; it answers `undefined`
 *   while another node holds it. Every grant to a new holder carries a greater token than the one before.
 * - `renew` extends a held lease by `ttl_ms`; `undefined` when it was lost (expired, or taken by another node).
 *   `release` gives it up at once; `false` when it was not held. None of the three throws for a lost lease (they
 *   may reject when the provider cannot be reached).
 * - `fence(session, lease, onStale)` routes every later append to `session` made through this process's store
 *   under `lease.token` until the returned function is called. An append refused because the token is no longer
 *   the session's current one rejects with `StaleFencingToken` (nothing appended), calls `onStale` once, and from
 *   then on every append to `session` rejects at once with the same error (no further write reaches the store).
 * - `orphaned` lists sessions whose lease expired without a `release` (a released lease is never orphaned).
 * - Callers renew more often than every `ttl_ms / 3` while a turn runs, so a live holder never expires.
 */
export interface AgentLeases {
  /** This process's id among the nodes sharing the store. */
  readonly node: string;
  /** How long a grant lasts unless renewed, in milliseconds. */
  readonly ttl_ms: number;
  /** Takes the lease of `sessionId`, or answers `undefined` when another node holds it. */
  acquire(sessionId: string): Promise<AgentLease | undefined>;
  /** Extends a held lease; `undefined` when it was lost. */
  renew(lease: AgentLease): Promise<AgentLease | undefined>;
  /** Gives a held lease up; `false` when it was not held. */
  release(lease: AgentLease): Promise<boolean>;
  /**
   * Sessions whose lease expired without being released (their holder died or stalled), at most `limit`, oldest
   * first: the agents service on a surviving node makes them resident and resumes their open turns.
   */
  orphaned(limit: number): Promise<string[]>;
  /** Fences every append to `sessionId` under `lease` until the returned function is called. */
  fence(sessionId: string, lease: AgentLease, onStale: (error: TerretError) => void): () => void;
}

/** The agent leases' service key; when nothing provides it agents run unleased (one process owns the store). */
export const AgentLeasesKey: ServiceKey<AgentLeases> = defineService<AgentLeases>(
  "agents.leases",
  "Agent leases with fencing tokens, provided by a store several processes share (the PostgreSQL store)",
);
