/**
 * Agent leases in memory, for tests of leased agents: what `PostgresLeases` keeps in its `agent_leases` rows, on a
 * clock the test moves, and the memory store as the `sessions.store` row beside them.
 *
 * @module
 */
import { type Context, definePlugin, type PluginLike } from "@terret/hames";
import { type AgentLease, type AgentLeases, AgentLeasesKey } from "@terret/core/agents";
import { SessionStoreKey } from "@terret/core";
import { MemorySessionStore, type SessionStore } from "@terret/core/sessions";

/** Leases in memory, on a clock the test moves: what `PostgresLeases` keeps in its `agent_leases` rows. */
export class MemoryLeases implements AgentLeases {
  readonly node: string;
  readonly ttl_ms: number;
  readonly rows = new Map<string, { owner: string; token: number; expires_at: number }>();
  now = 1_000_000;
  /** Every `orphaned` call's limit, in order. */
  readonly listed: number[] = [];

  constructor(node: string, ttlMs: number) {
    this.node = node;
    this.ttl_ms = ttlMs;
  }

  /** Records `agentId` as held by `owner` until `expiresAt` (a lease left by another node). */
  seed(agentId: string, owner: string, expiresAt: number): void {
    this.rows.set(agentId, { owner, token: 1, expires_at: expiresAt });
  }

  acquire(agentId: string): Promise<AgentLease | undefined> {
    const row = this.rows.get(agentId);
    if (
      row !== undefined && row.owner !== this.node && row.owner !== "" && row.expires_at > this.now
    ) {
      return Promise.resolve(undefined);
    }
    const token = row === undefined
      ? 1
      : row.owner === this.node && row.expires_at > this.now
      ? row.token
      : row.token + 1;
    const next = { owner: this.node, token, expires_at: this.now + this.ttl_ms };
    this.rows.set(agentId, next);
    return Promise.resolve({ agent_id: agentId, ...next });
  }

  renew(lease: AgentLease): Promise<AgentLease | undefined> {
    const row = this.rows.get(lease.agent_id);
    if (row?.owner !== lease.owner || row.token !== lease.token || row.expires_at <= this.now) {
      return Promise.resolve(undefined);
    }
    row.expires_at = this.now + this.ttl_ms;
    return Promise.resolve({ agent_id: lease.agent_id, ...row });
  }

  release(lease: AgentLease): Promise<boolean> {
    const row = this.rows.get(lease.agent_id);
    if (row?.owner !== lease.owner || row.token !== lease.token || row.expires_at <= this.now) {
      return Promise.resolve(false);
    }
    row.owner = "";
    row.expires_at = this.now;
    return Promise.resolve(true);
  }

  orphaned(limit: number): Promise<string[]> {
    this.listed.push(limit);
    return Promise.resolve(
      [...this.rows].filter(([, row]) => row.owner !== "" && row.expires_at <= this.now)
        .sort(([, a], [, b]) => a.expires_at - b.expires_at)
        .slice(0, limit)
        .map(([id]) => id),
    );
  }

  fence(): () => void {
    return () => {};
  }
}

/** `store` (default: a memory store) as the `sessions.store` row, providing `leases` as the agent leases beside it. */
export function storeWithLeases(
  leases: MemoryLeases,
  store: SessionStore = new MemorySessionStore(),
): PluginLike {
  return definePlugin({
    name: "test-store-with-leases",
    description: "The memory store, with leases in memory",
    provides: [SessionStoreKey, AgentLeasesKey],
    apply(ctx: Context): void {
      ctx.provide(SessionStoreKey, store);
      ctx.provide(AgentLeasesKey, leases);
    },
  });
}
