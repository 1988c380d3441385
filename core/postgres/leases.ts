/**
 * Agent leases with fencing tokens in the PostgreSQL store: at most one node holds an agent's lease at a time, and
 * each acquisition increments the agent's fencing token, which the node's appends carry
 * ({@linkcode PostgresSessionStore.appendFenced}) so that an append under a stale token is refused.
 *
 * @module
 */
import type { Sql } from "postgres";

/** A held lease. */
export interface Lease {
  /** The agent (its session id). */
  readonly agent_id: string;
  /** The node holding it. */
  readonly owner: string;
  /** The fencing token of this acquisition (1 for the first, then incremented by each). */
  readonly token: number;
  /** When it expires unless renewed (the database's clock, epoch milliseconds). */
  readonly expires_at: number;
}

/**
 * Acquire, renew and release agents' leases. Expiry is judged by the database's clock, so nodes need no clock of
 * their own beyond measuring `ttl_ms` (`trt doctor` checks the skew).
 *
 * Contract: `acquire` grants the lease only when it is free, expired, or already `owner`'s (then it is renewed with
 * the same token); every grant to a new holder increments the token. `renew` and `release` act only while the caller
 * holds the lease under `token`. None of them throws for a lost lease: they answer `undefined` or `false`.
 */
export class PostgresLeases {
  readonly #sql: Sql;
  readonly #s: string;

  /** @internal Made by the store. */
  constructor(sql: Sql, quotedSchema: string) {
    this.#sql = sql;
    this.#s = quotedSchema;
  }

  /** Takes the lease of `agentId` for `owner` for `ttlMs`, or answers `undefined` when another node holds it. */
  async acquire(agentId: string, owner: string, ttlMs: number): Promise<Lease | undefined> {
    const rows = await this.#sql.unsafe(
      `INSERT INTO ${this.#s}.agent_leases AS l (agent_id, owner, expires_at, token) ` +
        "VALUES ($1, $2, clock_timestamp() + $3 * interval '1 millisecond', 1) " +
        "ON CONFLICT (agent_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at, " +
        "token = CASE WHEN l.owner = excluded.owner AND l.expires_at > clock_timestamp() THEN l.token " +
        "ELSE l.token + 1 END " +
        "WHERE l.owner = excluded.owner OR l.expires_at <= clock_timestamp() " +
        "RETURNING agent_id, owner, token::text, (extract(epoch FROM expires_at) * 1000)::float8 AS expires",
      [agentId, owner, ttlMs],
      { prepare: true },
    );
    return rows.length === 0 ? undefined : leaseOf(rows[0]!);
  }

  /** Extends a held lease by `ttlMs` from now; `undefined` when it was lost (expired and taken, or released). */
  async renew(lease: Lease, ttlMs: number): Promise<Lease | undefined> {
    const rows = await this.#sql.unsafe(
      `UPDATE ${this.#s}.agent_leases SET expires_at = clock_timestamp() + $4 * interval '1 millisecond' ` +
        "WHERE agent_id = $1 AND owner = $2 AND token = $3 AND expires_at > clock_timestamp() " +
        "RETURNING agent_id, owner, token::text, (extract(epoch FROM expires_at) * 1000)::float8 AS expires",
      [lease.agent_id, lease.owner, lease.token, ttlMs],
      { prepare: true },
    );
    return rows.length === 0 ? undefined : leaseOf(rows[0]!);
  }

  /**
   * The agents whose lease expired without being released (its holder died, stalled or lost the database), oldest
   * expiry first, at most `limit`: a surviving node takes them over.
   */
  async orphaned(limit: number): Promise<string[]> {
    const rows = await this.#sql.unsafe(
      `SELECT agent_id FROM ${this.#s}.agent_leases WHERE owner <> '' AND expires_at <= clock_timestamp() ` +
        "ORDER BY expires_at LIMIT $1",
      [limit],
      { prepare: true },
    );
    return rows.map((row) => String(row.agent_id));
  }

  /**
   * Gives a held lease up at once (the next acquirer gets the next token; the row no longer names an owner, so it
   * is not {@linkcode orphaned}); `false` when it was not held.
   */
  async release(lease: Lease): Promise<boolean> {
    const rows = await this.#sql.unsafe(
      `UPDATE ${this.#s}.agent_leases SET expires_at = clock_timestamp(), owner = '' ` +
        "WHERE agent_id = $1 AND owner = $2 AND token = $3 AND expires_at > clock_timestamp() RETURNING 1",
      [lease.agent_id, lease.owner, lease.token],
      { prepare: true },
    );
    return rows.length > 0;
  }
}

function leaseOf(row: Record<string, unknown>): Lease {
  return {
    agent_id: String(row.agent_id),
    owner: String(row.owner),
    token: Number(row.token),
    expires_at: Number(row.expires),
  };
}
