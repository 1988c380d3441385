/**
 * Group commit: the appends that arrive within one tick share one synchronous write, and each is settled only
 * after that write. Internal to the stores.
 *
 * @module
 */
import { setImmediate } from "node:timers";
import type { StoreStats } from "./store.ts";

/** How one item of a group fared. */
export type Settled<R> = { readonly ok: true; readonly value: R } | {
  readonly ok: false;
  readonly error: unknown;
};

/** A submitted item and how to settle it. */
export interface Pending<T, R> {
  readonly item: T;
  readonly resolve: (value: R) => void;
  readonly reject: (error: unknown) => void;
}

/** Bounds on one group. */
export interface GroupLimits<T> {
  /** The most items in one group. */
  readonly maxItems: number;
  /** The most bytes in one group (an item larger than this goes alone). */
  readonly maxBytes: number;
  /** The size of an item in bytes. */
  readonly sizeOf: (item: T) => number;
}

/**
 * Queues items and commits them in bounded groups: the first submit of a tick schedules a flush on the microtask
 * queue, so everything submitted before it runs joins the group; a group larger than the bounds is split, and the
 * remainder waits for the next macrotask so other work runs in between.
 */
export class GroupCommit<T, R> {
  readonly #commit: (batch: readonly T[]) => readonly Settled<R>[];
  readonly #limits: GroupLimits<T>;
  #queue: Pending<T, R>[] = [];
  #scheduled = false;
  #idle: (() => void)[] = [];
  #groups = 0;
  #events = 0;
  #maxGroup = 0;
  #maxBlock = 0;
  #totalBlock = 0;

  constructor(commit: (batch: readonly T[]) => readonly Settled<R>[], limits: GroupLimits<T>) {
    this.#commit = commit;
    this.#limits = limits;
  }

  /** Queues an item; settles once the group holding it is committed (or failed). */
  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        queueMicrotask(() => this.#flush());
      }
    });
  }

  /** Resolves once nothing is queued. */
  drain(): Promise<void> {
    if (this.#queue.length === 0 && !this.#scheduled) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** The figures so far. */
  stats(): StoreStats {
    return {
      groups: this.#groups,
      events: this.#events,
      max_group_events: this.#maxGroup,
      max_block_ms: this.#maxBlock,
      total_block_ms: this.#totalBlock,
    };
  }

  #flush(): void {
    const group = this.#take();
    const started = performance.now();
    let outcomes: readonly Settled<R>[];
    try {
      outcomes = this.#commit(group.map((pending) => pending.item));
    } catch (error) {
      outcomes = group.map(() => ({ ok: false, error }));
    }
    const blocked = performance.now() - started;
    this.#groups++;
    this.#events += group.length;
    this.#maxGroup = Math.max(this.#maxGroup, group.length);
    this.#maxBlock = Math.max(this.#maxBlock, blocked);
    this.#totalBlock += blocked;
    settleGroup(group, outcomes);
    if (this.#queue.length > 0) {
      setImmediate(() => this.#flush());
      return;
    }
    this.#scheduled = false;
    for (const resolve of this.#idle.splice(0)) resolve();
  }

  #take(): Pending<T, R>[] {
    return takeGroup(this.#queue, this.#limits);
  }
}

/**
 * Takes the next group off the front of `queue`: as many items as fit the limits, and always at least one (an item
 * larger than `maxBytes` goes alone).
 */
export function takeGroup<T, R>(queue: Pending<T, R>[], limits: GroupLimits<T>): Pending<T, R>[] {
  const { maxItems, maxBytes, sizeOf } = limits;
  let count = 0, bytes = 0;
  while (count < queue.length && count < maxItems) {
    const size = sizeOf(queue[count]!.item);
    if (count > 0 && bytes + size > maxBytes) break;
    bytes += size;
    count++;
  }
  return queue.splice(0, count);
}

/** Settles each item of a group with its outcome (`outcomes[i]` is `group[i]`'s), in order. */
export function settleGroup<T, R>(
  group: readonly Pending<T, R>[],
  outcomes: readonly Settled<R>[],
): void {
  group.forEach((pending, i) => {
    const outcome = outcomes[i]!;
    if (outcome.ok) pending.resolve(outcome.value);
    else pending.reject(outcome.error);
  });
}
