/**
 * An agent's one inbox: queued messages and steers, claimed step by step.
 *
 * @module
 */
import type { Content } from "../sessions/events.ts";
import type { InputItem } from "../loop/events.ts";

interface Pending {
  readonly kind: "message" | "steer";
  readonly content: Content;
  /** A message always wakes; a steer only when sent with `wake`. */
  readonly wake: boolean;
  /** The `input/queued` seq when the item was queued durably. */
  readonly queued_seq: number | undefined;
}

/**
 * The inbox: one queue in arrival order.
 *
 * Contract: `claim` takes every pending steer and the oldest message (at most one), in arrival order, and leaves
 * the rest queued; nothing is ever dropped except by `clear`. `waking` is true while a message or a steer sent with
 * `wake` waits and the inbox is not held; `hold` (after a cancel) keeps queued input from waking the agent until
 * the next `push` or `release`.
 */
export class Inbox {
  #items: Pending[] = [];
  #held = false;
  /** The `input/queued` seqs of the items `claim` handed out. */
  readonly #claimed = new Set<number>();

  /** Items waiting. */
  get size(): number {
    return this.#items.length;
  }

  /** True while waking input waits and the inbox is not held. */
  get waking(): boolean {
    return !this.#held && this.#items.some((item) => item.wake);
  }

  /** Queues an item (with the `input/queued` seq that made it durable, if any); any push releases a hold. */
  push(kind: "message" | "steer", content: Content, wake: boolean, queuedSeq?: number): void {
    this.#items.push({ kind, content, wake: kind === "message" || wake, queued_seq: queuedSeq });
    this.#held = false;
  }

  /** Takes every pending steer and the oldest message, in arrival order. */
  claim(): InputItem[] {
    const taken: InputItem[] = [];
    const kept: Pending[] = [];
    let message = false;
    for (const item of this.#items) {
      if (item.kind === "steer" || !message) {
        if (item.kind === "message") message = true;
        if (item.queued_seq !== undefined) this.#claimed.add(item.queued_seq);
        taken.push(
          item.queued_seq === undefined
            ? { kind: item.kind, content: item.content }
            : { kind: item.kind, content: item.content, queued_seq: item.queued_seq },
        );
      } else {
        kept.push(item);
      }
    }
    this.#items = kept;
    return taken;
  }

  /** Keeps queued input from waking the agent until the next push or release. */
  hold(): void {
    this.#held = true;
  }

  /** Ends a hold. */
  release(): void {
    this.#held = false;
  }

  /**
   * Aligns the durable items with the log's unclaimed input (`pending`, in seq order, read through the
   * `input/queued` at seq `through`): a durable item the read covers and shows claimed (by another process) is
   * dropped, an unclaimed one neither queued nor claimed here is added (a claim this inbox handed out may not be in
   * the log yet); items queued without a seq, or after the read, stay as they are. `settled` (default 0): every
   * `input/queued` at or below it is claimed in the log and no later read names it, so this inbox stops remembering
   * the claims it handed out for those.
   */
  sync(
    pending: readonly { seq: number; kind: "message" | "steer"; content: Content; wake: boolean }[],
    through: number,
    settled = 0,
  ): void {
    for (const seq of this.#claimed) if (seq <= settled) this.#claimed.delete(seq);
    const open = new Set(pending.map((item) => item.seq));
    const kept = this.#items.filter((item) =>
      item.queued_seq === undefined || item.queued_seq > through || open.has(item.queued_seq)
    );
    const known = new Set(kept.map((item) => item.queued_seq));
    const added = pending.filter((item) => !known.has(item.seq) && !this.#claimed.has(item.seq));
    if (added.length === 0 && kept.length === this.#items.length) return;
    this.#items = kept;
    for (const item of added) this.push(item.kind, item.content, item.wake, item.seq);
  }

  /** Drops everything queued; returns how many items were dropped. */
  clear(): number {
    const count = this.#items.length;
    this.#items = [];
    return count;
  }
}
