/**
 * The session log's open live streams: a {@linkcode LiveFeed} per stream, grouped by session, fed every commit of
 * this process and told of other processes' commits through the store. Internal to the session log.
 *
 * @module
 */
import type { SessionEvent } from "./envelope.ts";
import { LiveFeed } from "./_live_feed.ts";
import { replayThenTail, type TailSource } from "./_replay_tail.ts";
import type { SessionStore } from "./store.ts";

/**
 * The live feeds of every open stream. The store's remote-commit listener is registered only while a feed is open (a
 * SQLite store polls while one is registered, so a host nobody tails does no periodic work), and never after
 * {@linkcode close}.
 */
export class LiveFeeds {
  readonly #store: SessionStore;
  readonly #bufferLimit: number;
  readonly #feeds = new Map<string, Set<LiveFeed>>();
  /** The remover of the store's remote-commit listener, while one is registered. */
  #offRemote: (() => void) | undefined;
  #closed = false;

  /** @param bufferLimit the most events one feed buffers for a consumer that has fallen behind */
  constructor(store: SessionStore, bufferLimit: number) {
    this.#store = store;
    this.#bufferLimit = bufferLimit;
  }

  /** Hands an event this process committed to its session's open feeds. */
  push(event: SessionEvent): void {
    const feeds = this.#feeds.get(event.session_id);
    if (feeds !== undefined) { for (const feed of feeds) feed.push(event); }
  }

  /** Closes every open feed and stops listening for other processes' commits, for good. */
  close(): void {
    this.#closed = true;
    this.#stopRemote();
    for (const feeds of this.#feeds.values()) for (const feed of feeds) feed.close();
  }

  /** Registers a live feed for the session, then runs the one replay-then-tail algorithm over `source`. */
  async *tail<T>(
    sessionId: string,
    from: number,
    signal: AbortSignal | undefined,
    source: TailSource<T>,
  ): AsyncGenerator<readonly T[]> {
    const feed = new LiveFeed(this.#bufferLimit);
    let feeds = this.#feeds.get(sessionId);
    if (feeds === undefined) this.#feeds.set(sessionId, feeds = new Set());
    feeds.add(feed);
    // Registered before the replay reads the store, so a remote commit after the read is reported to the feed.
    if (this.#offRemote === undefined && !this.#closed) {
      this.#offRemote = this.#store.onRemoteCommit?.((id, head) =>
        this.#remoteCommitted(id, head)
      ) ??
        (() => {});
    }
    try {
      yield* replayThenTail(sessionId, from, feed, source, signal);
    } finally {
      feeds.delete(feed);
      if (feeds.size === 0 && this.#feeds.get(sessionId) === feeds) this.#feeds.delete(sessionId);
      if (this.#feeds.size === 0) this.#stopRemote();
    }
  }

  /** Another process committed to a shared store: the session's streams (all, when unnamed) catch up from it. */
  #remoteCommitted(sessionId: string | undefined, head: number): void {
    if (sessionId === undefined) {
      for (const feeds of this.#feeds.values()) for (const feed of feeds) feed.reveal(Infinity);
      return;
    }
    const feeds = this.#feeds.get(sessionId);
    if (feeds !== undefined) { for (const feed of feeds) feed.reveal(head); }
  }

  /** Unregisters the remote-commit listener (no live feed remains, or the log is torn down). */
  #stopRemote(): void {
    const off = this.#offRemote;
    this.#offRemote = undefined;
    off?.();
  }
}
