/**
 * The live side of `sessions.stream`: a bounded per-subscriber buffer fed synchronously by commits. Internal.
 *
 * @module
 */
import type { SessionEvent } from "./envelope.ts";

/**
 * Buffers committed events for one stream. Past `limit` it drops its buffer and marks itself `behind`, and the
 * stream catches up from the store instead (snapshot-then-tail and catch-up are the same mechanism), so memory
 * stays bounded whatever the reader's pace.
 */
export class LiveFeed {
  readonly #limit: number;
  #buffer: SessionEvent[] = [];
  #head = 0;
  #wake: (() => void) | undefined;
  /** True when events were dropped and the stream must re-read from the store. */
  behind = false;
  /** True once the service is gone: the stream ends. */
  closed = false;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Called by the service for each committed event of the session, in seq order. */
  push(event: SessionEvent): void {
    if (this.behind) return;
    if (this.#buffer.length - this.#head >= this.#limit) {
      this.#buffer = [];
      this.#head = 0;
      this.behind = true;
    } else {
      this.#buffer.push(event);
    }
    this.#notify();
  }

  /**
   * Another process committed up to `head`: unless this feed already buffered it, the stream catches up from the
   * store (the same path as an overflow).
   */
  reveal(head: number): void {
    if (this.behind || this.closed) return;
    const last = this.#buffer.at(-1)?.seq ?? 0;
    if (head <= last) return;
    this.#buffer = [];
    this.#head = 0;
    this.behind = true;
    this.#notify();
  }

  /** Ends the stream. */
  close(): void {
    this.closed = true;
    this.#notify();
  }

  /** The next buffered event, if any. */
  shift(): SessionEvent | undefined {
    if (this.#head >= this.#buffer.length) return undefined;
    const event = this.#buffer[this.#head++]!;
    if (this.#head > 1024 && this.#head * 2 > this.#buffer.length) {
      this.#buffer = this.#buffer.slice(this.#head);
      this.#head = 0;
    }
    return event;
  }

  /** Forgets what is buffered (after a catch-up read covered it). */
  clear(): void {
    this.#buffer = [];
    this.#head = 0;
    this.behind = false;
  }

  /** Resolves when something is buffered, the feed fell behind or closed, or `signal` aborts. */
  wait(signal: AbortSignal | undefined): Promise<void> {
    if (this.#head < this.#buffer.length || this.behind || this.closed || signal?.aborted) {
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = (): void => {
        signal?.removeEventListener("abort", done);
        this.#wake = undefined;
        resolve();
      };
      this.#wake = done;
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  #notify(): void {
    this.#wake?.();
  }
}
