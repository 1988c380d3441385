/**
 * One agent's hold on its lease: acquired before a turn, renewed every quarter of the ttl while held, released when
 * the agent goes idle, and reported lost (a refused renewal or a stale fenced append) exactly once. Internal to the
 * agents service.
 *
 * @module
 */
import type { Logger } from "@terret/hames";
import { TerretError } from "../errors.ts";
import type { AgentLease, AgentLeases } from "./agent_leases.ts";

/** Holds one agent's lease (see the module doc). */
export class LeaseKeeper {
  readonly #leases: AgentLeases;
  readonly #sessionId: string;
  readonly #logger: Logger;
  readonly #onLost: (error: TerretError) => void;
  readonly #onRenewed: () => void;
  #lease: AgentLease | undefined;
  #unfence: (() => void) | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  #renewing = false;
  #lost = false;

  constructor(
    leases: AgentLeases,
    sessionId: string,
    logger: Logger,
    onLost: (error: TerretError) => void,
    onRenewed: () => void = () => {},
  ) {
    this.#onRenewed = onRenewed;
    this.#leases = leases;
    this.#sessionId = sessionId;
    this.#logger = logger;
    this.#onLost = onLost;
  }

  /** True while the lease is held (acquired, not released, not lost). */
  get held(): boolean {
    return this.#lease !== undefined && !this.#lost;
  }

  /** The held lease's fencing token. */
  get token(): number | undefined {
    return this.#lease?.token;
  }

  /** How long to wait before trying again to acquire a lease another node holds. */
  get retryMs(): number {
    return Math.max(20, Math.floor(this.#leases.ttl_ms / 3));
  }

  /** Acquires the lease and fences the session's appends; false when another node holds it. */
  async acquire(): Promise<boolean> {
    if (this.held) return true;
    const lease = await this.#leases.acquire(this.#sessionId);
    if (lease === undefined) return false;
    this.#lease = lease;
    this.#lost = false;
    this.#unfence = this.#leases.fence(this.#sessionId, lease, (error) => this.#lose(error));
    this.#timer = setInterval(
      () => void this.#renew(),
      Math.max(10, Math.floor(this.#leases.ttl_ms / 4)),
    );
    return true;
  }

  /** Stops renewing, lifts the fence and releases the lease (unless it was lost). */
  async release(): Promise<void> {
    this.#stopTimer();
    const lease = this.#lease;
    this.#lease = undefined;
    this.#unfence?.();
    this.#unfence = undefined;
    if (lease === undefined || this.#lost) return;
    try {
      await this.#leases.release(lease);
    } catch (error) {
      this.#logger.log("warn", `The lease of session "${this.#sessionId}" could not be released`, {
        session_id: this.#sessionId,
        error,
      });
    }
  }

  async #renew(): Promise<void> {
    const lease = this.#lease;
    if (lease === undefined || this.#renewing || this.#lost) return;
    this.#renewing = true;
    try {
      const renewed = await this.#leases.renew(lease);
      if (this.#lease !== lease) return;
      if (renewed === undefined) {
        this.#lose(
          new TerretError(
            "StaleFencingToken",
            `Cannot renew the lease of session "${this.#sessionId}" under fencing token ${lease.token}: ` +
              "it expired or another node holds it",
            { details: { session_id: this.#sessionId, token: lease.token } },
          ),
        );
      } else {
        this.#lease = renewed;
        this.#onRenewed();
      }
    } catch (error) {
      // The fence still protects the log: a renewal that cannot reach the store is retried at the next tick.
      this.#logger.log("warn", `The lease of session "${this.#sessionId}" could not be renewed`, {
        session_id: this.#sessionId,
        error,
      });
    } finally {
      this.#renewing = false;
    }
  }

  #lose(error: TerretError): void {
    if (this.#lost) return;
    this.#lost = true;
    this.#stopTimer();
    this.#onLost(error);
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
