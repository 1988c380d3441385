/**
 * The PostgreSQL store's {@linkcode AgentLeases}: the `agent_leases` table's leases (expiry judged by the database's
 * clock) for this node, and appends fenced through the store.
 *
 * @module
 */
import type { TerretError } from "../errors.ts";
import type { AgentLease, AgentLeases } from "../agents/agent_leases.ts";
import type { PostgresSessionStore } from "./postgres_store.ts";

/**
 * Agent leases on a {@linkcode PostgresSessionStore} for its node (`store.node`), each grant lasting `ttlMs`.
 *
 * Contract: that of {@linkcode AgentLeases}; `fence` is {@linkcode PostgresSessionStore.fence}.
 */
export class PostgresAgentLeases implements AgentLeases {
  readonly #store: PostgresSessionStore;
  /** This node's id (the store's). */
  readonly node: string;
  /** How long a grant lasts unless renewed. */
  readonly ttl_ms: number;

  constructor(store: PostgresSessionStore, ttlMs: number) {
    this.#store = store;
    this.node = store.node;
    this.ttl_ms = ttlMs;
  }

  /** Takes the lease of `sessionId` for this node, or `undefined` while another node holds it. */
  acquire(sessionId: string): Promise<AgentLease | undefined> {
    return this.#store.leases.acquire(sessionId, this.node, this.ttl_ms);
  }

  /** Extends a held lease by the ttl; `undefined` when it was lost. */
  renew(lease: AgentLease): Promise<AgentLease | undefined> {
    return this.#store.leases.renew(lease, this.ttl_ms);
  }

  /** Gives a held lease up at once. */
  release(lease: AgentLease): Promise<boolean> {
    return this.#store.leases.release(lease);
  }

  /** Sessions whose lease expired without being released (their holder died). */
  orphaned(limit: number): Promise<string[]> {
    return this.#store.leases.orphaned(limit);
  }

  /** Fences the session's appends through the store under `lease`. */
  fence(sessionId: string, lease: AgentLease, onStale: (error: TerretError) => void): () => void {
    return this.#store.fence(sessionId, lease, onStale);
  }
}
