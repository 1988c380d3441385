/**
 * Ordered appends for one turn. Events are queued and submitted to the log in bursts: everything submitted in one
 * burst reaches the store's group commit together (one write transaction), and the store keeps submission order, so
 * seqs follow call order. The turn submits where durability or liveness matters (before a request is built from
 * the log, before tools run, as streamed chunks arrive, at the end) and awaits durability only on
 * {@linkcode Appender.flush}. Internal to the loop.
 *
 * @module
 */
import type { Sessions } from "../sessions/sessions.ts";

/** Queues a turn's events and submits them in order, in bursts. */
export class Appender {
  readonly #sessions: Sessions;
  readonly #sessionId: string;
  #queue: { readonly type: string; readonly payload: unknown }[] = [];
  #tail: Promise<unknown> = Promise.resolve();
  #failure: { error: unknown } | undefined;

  constructor(sessions: Sessions, sessionId: string) {
    this.#sessions = sessions;
    this.#sessionId = sessionId;
  }

  /** True once an append failed (every later flush rejects with that failure). */
  get failed(): boolean {
    return this.#failure !== undefined;
  }

  /** Queues one event; it is submitted with the next burst. */
  append(type: string, payload: unknown): void {
    this.#queue.push({ type, payload });
  }

  /** Queues one event and submits the burst at once (for live events: streamed chunks). */
  appendNow(type: string, payload: unknown): void {
    this.append(type, payload);
    this.submit();
  }

  /** Submits every queued event, in order, as one burst. */
  submit(): void {
    const queue = this.#queue;
    if (queue.length === 0) return;
    this.#queue = [];
    for (const { type, payload } of queue) {
      const appended = this.#sessions.append(this.#sessionId, { type, payload });
      appended.catch((error) => {
        this.#failure ??= { error };
      });
      this.#tail = appended;
    }
  }

  /** Submits what is queued, then resolves once everything submitted is durable; rejects with the first failure. */
  async flush(): Promise<void> {
    this.submit();
    await this.#tail.catch(() => {});
    if (this.#failure !== undefined) throw this.#failure.error;
  }
}
