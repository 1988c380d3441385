/**
 * Group commit for a store whose write is asynchronous: one group in flight at a time, and everything submitted
 * while it is in flight (or within the tick that started it) joins the next group. Internal to the PostgreSQL store.
 *
 * @module
 */
import type { StoreStats } from "../sessions/store.ts";
import {
  type GroupLimits,
  type Pending,
  type Settled,
  settleGroup,
  takeGroup,
} from "../sessions/_group_commit.ts";

/** How one item of a group fared (the same shape as the synchronous stores' group commit). */
export type Outcome<R> = Settled<R>;

/** Bounds on one group (the same as the synchronous stores' group commit). */
export type AsyncGroupLimits<T> = GroupLimits<T>;

/**
 * Queues items and commits them in bounded groups, one group at a time: a group's items settle, in submission
 * order, once its commit resolves (or all reject when it throws).
 */
export class AsyncGroupCommit<T, R> {
  readonly #commit: (batch: readonly T[]) => Promise<readonly Outcome<R>[]>;
  readonly #limits: AsyncGroupLimits<T>;
  #queue: Pending<T, R>[] = [];
  #running = false;
  #idle: (() => void)[] = [];
  #groups = 0;
  #events = 0;
  #maxGroup = 0;

  constructor(
    commit: (batch: readonly T[]) => Promise<readonly Outcome<R>[]>,
    limits: AsyncGroupLimits<T>,
  ) {
    this.#commit = commit;
    this.#limits = limits;
  }

  /** Queues an item; settles once the group holding it is committed (or failed). */
  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      if (!this.#running) {
        this.#running = true;
        queueMicrotask(() => void this.#run());
      }
    });
  }

  /** Resolves once nothing is queued or in flight. */
  drain(): Promise<void> {
    if (!this.#running) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** The figures so far (the write is asynchronous: it blocks the event loop only to build and settle a group). */
  stats(): StoreStats {
    return {
      groups: this.#groups,
      events: this.#events,
      max_group_events: this.#maxGroup,
      max_block_ms: 0,
      total_block_ms: 0,
    };
  }

  async #run(): Promise<void> {
    while (this.#queue.length > 0) {
      const group = takeGroup(this.#queue, this.#limits);
      let outcomes: readonly Outcome<R>[];
      try {
        outcomes = await this.#commit(group.map((pending) => pending.item));
      } catch (error) {
        outcomes = group.map(() => ({ ok: false, error }));
      }
      this.#groups++;
      this.#events += group.length;
      this.#maxGroup = Math.max(this.#maxGroup, group.length);
      settleGroup(group, outcomes);
    }
    this.#running = false;
    for (const resolve of this.#idle.splice(0)) resolve();
  }
}
