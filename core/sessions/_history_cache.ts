/**
 * The derived-history cache behind `sessions.deriveMessages`: per session, the model history projected from the
 * events `1..seq`, advanced only by durable commits (the store's commit feed) and by reads from the store, never by
 * anything a caller hands in. Internal to the sessions service.
 *
 * @module
 */
import type { Message } from "../llm/vocabulary.ts";
import type { Projection } from "./derive_messages.ts";
import type { SessionEvent } from "./envelope.ts";

interface Entry {
  /** The history projected from events `1..seq`; every message in it is frozen. */
  readonly messages: Message[];
  /** The last seq the history covers (projected or not). */
  seq: number;
  /** A catch-up read in flight; the commit feed leaves the entry alone meanwhile. */
  pending: Promise<void> | undefined;
}

/** How the cache reaches the store. */
export interface HistorySource {
  /** The session's head. */
  head(sessionId: string, signal: AbortSignal | undefined): Promise<number>;
  /** Events of the projected types in `[from, to]`, ascending. */
  read(
    sessionId: string,
    from: number,
    to: number,
    signal: AbortSignal | undefined,
  ): Promise<SessionEvent[]>;
}

/**
 * A per-session cache of derived history, least recently used evicted first.
 *
 * Contract: `derive` returns exactly `deriveMessages(events 1..head)` for a head read from the store during the
 * call (or a later one, when commits landed meanwhile): it asks the store for the head every time and reads only
 * the events it has not folded yet, so events another process appended to a shared store are picked up too. The commit feed folds an event only when it is the
 * very next seq of an entry with no read in flight, so no event is folded twice or skipped.
 */
export class HistoryCache {
  readonly #entries = new Map<string, Entry>();
  readonly #projections: ReadonlyMap<string, Projection>;
  readonly #source: HistorySource;
  readonly #max: number;
  readonly #produced = new WeakSet<Message>();

  /**
   * @param projections the live projection table (the cache must be {@linkcode HistoryCache.clear}ed when it changes)
   * @param source how to reach the store
   * @param maxSessions the most sessions kept
   */
  constructor(
    projections: ReadonlyMap<string, Projection>,
    source: HistorySource,
    maxSessions: number,
  ) {
    this.#projections = projections;
    this.#source = source;
    this.#max = maxSessions;
  }

  /** How many sessions are cached. */
  get size(): number {
    return this.#entries.size;
  }

  /** True when `message` was produced by this cache (and so is deeply frozen). */
  owns(message: Message): boolean {
    return this.#produced.has(message);
  }

  /**
   * Folds a durable event into its session's entry when it is that entry's next seq. A session's first event
   * (seq 1) starts an entry: nothing precedes it, so the history is known without a read.
   */
  committed(event: SessionEvent): void {
    let entry = this.#entries.get(event.session_id);
    if (entry === undefined && event.seq === 1) {
      entry = { messages: [], seq: 0, pending: undefined };
      this.#entries.set(event.session_id, entry);
      this.#evict();
    }
    if (entry === undefined || entry.pending !== undefined || event.seq !== entry.seq + 1) return;
    this.#fold(entry, event);
    entry.seq = event.seq;
  }

  /** The session's derived history (a fresh list of frozen messages). */
  async derive(sessionId: string, signal: AbortSignal | undefined): Promise<Message[]> {
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
        entry = { messages: [], seq: 0, pending: undefined };
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
      return entry.messages.slice();
    }
  }

  /**
   * True when `messages` is exactly the session's cached history: the very frozen messages, in order, this cache
   * projected from the persisted events `1..seq` it covers (no read in flight). Reads nothing from the store.
   */
  holds(sessionId: string, messages: readonly Message[]): boolean {
    const entry = this.#entries.get(sessionId);
    if (entry === undefined || entry.pending !== undefined) return false;
    const cached = entry.messages;
    if (cached.length !== messages.length) return false;
    for (let i = 0; i < cached.length; i++) if (cached[i] !== messages[i]) return false;
    return true;
  }

  /**
   * Forgets one session's entry (its history is read from the store again on the next `derive`). A catch-up read in
   * flight for it still completes and may put the entry back: it is then as correct as any other.
   */
  forget(sessionId: string): void {
    this.#entries.delete(sessionId);
  }

  /** Forgets every entry (the projection table changed). */
  clear(): void {
    this.#entries.clear();
  }

  async #catchUp(
    sessionId: string,
    entry: Entry,
    head: number,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const events = await this.#source.read(sessionId, entry.seq + 1, head, signal);
    for (const event of events) {
      if (event.seq > entry.seq && event.seq <= head) this.#fold(entry, event);
    }
    entry.seq = head;
  }

  #fold(entry: Entry, event: SessionEvent): void {
    const projection = this.#projections.get(event.type);
    if (projection === undefined) return;
    projection(event, entry.messages);
    for (let i = entry.messages.length - 1; i >= 0; i--) {
      const message = entry.messages[i]!;
      if (this.#produced.has(message)) break;
      deepFreeze(message);
      this.#produced.add(message);
    }
  }

  #evict(): void {
    while (this.#entries.size > this.#max) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }
}

function deepFreeze(value: unknown): void {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
}
