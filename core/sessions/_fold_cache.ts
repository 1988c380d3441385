/**
 * A per-session cache of a fold over the session's events: the state folded from the events `1..seq`, advanced only
 * by durable commits (the store's commit feed) and by reads from the store, never by anything a caller hands in.
 * The derived-history cache and the usage rollup both stand on it. Internal to the sessions service.
 *
 * @module
 */
import { EventLoopTurns } from "@terret/hames";
import type { SessionEvent } from "./envelope.ts";

/** Events folded between two turns of the event loop in one catch-up. */
const FOLD_SLICE = 1_000;

/** What a {@linkcode FoldCache} folds. */
export interface SessionFold<S> {
  /** A fresh state: nothing folded. */
  empty(): S;
  /**
   * Folds one event into `state`, in seq order, each event once. Called with every committed event and with every
   * event a catch-up read returns; it ignores the types it does not read.
   */
  fold(state: S, event: SessionEvent): void;
}

/** How a {@linkcode FoldCache} reaches the store. */
export interface FoldSource {
  /** The session's head. */
  head(sessionId: string, signal: AbortSignal | undefined): Promise<number>;
  /** Events of the types the fold reads, in `[from, to]`, ascending (a superset is fine: the fold ignores it). */
  read(
    sessionId: string,
    from: number,
    to: number,
    signal: AbortSignal | undefined,
  ): Promise<SessionEvent[]>;
}

interface Entry<S> {
  /** The state folded from events `1..seq`. */
  readonly state: S;
  /** The last seq the state covers (folded or not). */
  seq: number;
  /** A catch-up read in flight; the commit feed leaves the entry alone meanwhile. */
  pending: Promise<void> | undefined;
}

/**
 * A per-session cache of a {@linkcode SessionFold}'s state, least recently used evicted first.
 *
 * Contract: `current` hands `take` exactly the fold of events `1..head` for a head read from the store during the
 * call (or a later one, when commits landed meanwhile): it asks the store for the head every time and reads only
 * the events it has not folded yet, so events another process appended to a shared store are picked up too. The
 * commit feed folds an event only when it is the very next seq of an entry with no read in flight, so no event is
 * folded twice or skipped. The state handed to `take` is the cache's own: `take` copies what it returns.
 */
export class FoldCache<S> {
  readonly #entries = new Map<string, Entry<S>>();
  readonly #fold: SessionFold<S>;
  readonly #source: FoldSource;
  readonly #max: number;

  /**
   * @param fold what is folded
   * @param source how to reach the store
   * @param maxSessions the most sessions kept
   */
  constructor(fold: SessionFold<S>, source: FoldSource, maxSessions: number) {
    this.#fold = fold;
    this.#source = source;
    this.#max = maxSessions;
  }

  /** How many sessions are cached. */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * Folds a durable event into its session's entry when it is that entry's next seq. A session's first event
   * (seq 1) starts an entry: nothing precedes it, so the state is known without a read.
   */
  committed(event: SessionEvent): void {
    let entry = this.#entries.get(event.session_id);
    if (entry === undefined && event.seq === 1) {
      entry = { state: this.#fold.empty(), seq: 0, pending: undefined };
      this.#entries.set(event.session_id, entry);
      this.#evict();
    }
    if (entry === undefined || entry.pending !== undefined || event.seq !== entry.seq + 1) return;
    this.#fold.fold(entry.state, event);
    entry.seq = event.seq;
  }

  /** `take` of the session's state, caught up with the store's head (see the class contract). */
  async current<R>(
    sessionId: string,
    signal: AbortSignal | undefined,
    take: (state: S) => R,
  ): Promise<R> {
    let entry = this.#entries.get(sessionId);
    for (;;) {
      if (entry?.pending !== undefined) {
        await entry.pending;
        entry = this.#entries.get(sessionId);
        continue;
      }
      const head = await this.#source.head(sessionId, signal);
      const current = this.#entries.get(sessionId);
      if (current !== entry) {
        entry = current;
        continue;
      }
      if (entry === undefined) {
        entry = { state: this.#fold.empty(), seq: 0, pending: undefined };
        this.#entries.set(sessionId, entry);
        this.#evict();
      }
      if (entry.seq < head) {
        const target = entry;
        target.pending = this.#catchUp(sessionId, target, head, signal);
        try {
          await target.pending;
        } catch (error) {
          if (this.#entries.get(sessionId) === target) this.#entries.delete(sessionId);
          throw error;
        } finally {
          target.pending = undefined;
        }
      }
      this.#entries.delete(sessionId);
      this.#entries.set(sessionId, entry);
      return take(entry.state);
    }
  }

  /** The session's state when it is cached with no read in flight (reads nothing from the store), else `undefined`. */
  settled(sessionId: string): S | undefined {
    const entry = this.#entries.get(sessionId);
    return entry === undefined || entry.pending !== undefined ? undefined : entry.state;
  }

  /**
   * Forgets one session's entry (its state is read from the store again on the next `current`). A catch-up read in
   * flight for it still completes and may put the entry back: it is then as correct as any other.
   */
  forget(sessionId: string): void {
    this.#entries.delete(sessionId);
  }

  /** Forgets every entry (what the fold reads changed). */
  clear(): void {
    this.#entries.clear();
  }

  async #catchUp(
    sessionId: string,
    entry: Entry<S>,
    head: number,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const events = await this.#source.read(sessionId, entry.seq + 1, head, signal);
    // A long catch-up (an agent made resident again, its whole history folded) is folded in slices, with a turn of
    // the event loop between them, so it never holds the other agents and sockets for its whole length.
    let turns: EventLoopTurns | undefined;
    for (let i = 0; i < events.length; i++) {
      if (i > 0 && i % FOLD_SLICE === 0) await (turns ??= new EventLoopTurns()).turn();
      const event = events[i]!;
      if (event.seq > entry.seq && event.seq <= head) this.#fold.fold(entry.state, event);
    }
    entry.seq = head;
  }

  #evict(): void {
    while (this.#entries.size > this.#max) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }
}
