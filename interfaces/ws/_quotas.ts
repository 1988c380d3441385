/**
 * Per-token and per-agent bounds: open connections per token and per agent, and new sessions per token per window,
 * so one tenant cannot take what the others need.
 *
 * @module
 */
import { TerretError } from "./errors.ts";

/** The bounds, read on every use (a reconfigure applies at once). */
export interface QuotaLimits {
  readonly max_connections_per_token: number;
  readonly max_connections_per_agent: number;
  readonly max_agents_per_token: number;
  readonly agents_window_seconds: number;
}

/** Why an upgrade is refused. */
export type ConnectionRefusal = "token" | "agent";

interface Window {
  start: number;
  count: number;
}

/**
 * The counters. Connections are counted from admission (before the agent is resolved) until the socket has closed
 * (a closing connection still holds its slot); new sessions per token in fixed windows of `agents_window_seconds`
 * on the server's clock.
 */
export class Quotas {
  readonly #limits: () => QuotaLimits;
  readonly #now: () => number;
  readonly #byToken = new Map<string, number>();
  readonly #byAgent = new Map<string, number>();
  readonly #created = new Map<string, Window>();

  constructor(limits: () => QuotaLimits, now: () => number) {
    this.#limits = limits;
    this.#now = now;
  }

  /** Takes a connection slot for `token` on `agentId`, or says which bound refuses it (and takes nothing). */
  admit(token: string, agentId: string): ConnectionRefusal | undefined {
    const limits = this.#limits();
    if ((this.#byToken.get(token) ?? 0) >= limits.max_connections_per_token) return "token";
    if ((this.#byAgent.get(agentId) ?? 0) >= limits.max_connections_per_agent) return "agent";
    bump(this.#byToken, token, 1);
    bump(this.#byAgent, agentId, 1);
    return undefined;
  }

  /** Gives back a slot taken by {@linkcode admit}. */
  release(token: string, agentId: string): void {
    bump(this.#byToken, token, -1);
    bump(this.#byAgent, agentId, -1);
  }

  /**
   * Counts one new session for `token`, or throws `QuotaExceeded` (nothing counted) when the token created
   * `max_agents_per_token` sessions in the current window.
   */
  admitSession(token: string, agentId: string): void {
    const limits = this.#limits();
    const now = this.#now();
    const span = limits.agents_window_seconds * 1000;
    let window = this.#created.get(token);
    if (window === undefined || now - window.start >= span) {
      window = { start: now, count: 0 };
      this.#created.set(token, window);
    }
    if (window.count >= limits.max_agents_per_token) {
      const wait = Math.max(1, Math.ceil((window.start + span - now) / 1000));
      throw new TerretError(
        "QuotaExceeded",
        `Cannot create agent "${agentId}": this token created ${window.count} agents in the last ` +
          `${limits.agents_window_seconds} s (interfaces.ws.max_agents_per_token); retry in ${wait} s`,
        { details: { agent_id: agentId, retry_after_seconds: wait, retryable: true } },
      );
    }
    window.count++;
  }

  /** Open connections held by `token`. */
  connectionsOf(token: string): number {
    return this.#byToken.get(token) ?? 0;
  }
}

function bump(map: Map<string, number>, key: string, by: number): void {
  const next = (map.get(key) ?? 0) + by;
  if (next <= 0) map.delete(key);
  else map.set(key, next);
}
