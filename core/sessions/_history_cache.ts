/**
 * The derived-history cache behind `sessions.deriveMessages`: per session, the model history projected from the
 * events `1..seq`, a {@linkcode FoldCache} of the projections whose every message is deeply frozen. Internal to the
 * sessions service.
 *
 * @module
 */
import type { Message } from "../llm/vocabulary.ts";
import type { Projection } from "./derive_messages.ts";
import type { SessionEvent } from "./envelope.ts";
import { FoldCache, type FoldSource } from "./_fold_cache.ts";

/**
 * A per-session cache of derived history, least recently used evicted first.
 *
 * Contract: `derive` returns exactly `deriveMessages(events 1..head)` for a head read from the store during the
 * call (or a later one, when commits landed meanwhile), as {@linkcode FoldCache.current} does; every message it
 * returns is one this cache produced and froze.
 */
export class HistoryCache {
  readonly #cache: FoldCache<Message[]>;
  readonly #produced = new WeakSet<Message>();

  /**
   * @param projections the live projection table (the cache must be {@linkcode HistoryCache.clear}ed when it changes)
   * @param source how to reach the store (its reads return the projected types)
   * @param maxSessions the most sessions kept
   */
  constructor(
    projections: ReadonlyMap<string, Projection>,
    source: FoldSource,
    maxSessions: number,
  ) {
    const produced = this.#produced;
    this.#cache = new FoldCache<Message[]>(
      {
        empty: () => [],
        fold(messages: Message[], event: SessionEvent): void {
          const projection = projections.get(event.type);
          if (projection === undefined) return;
          projection(event, messages);
          for (let i = messages.length - 1; i >= 0; i--) {
            const message = messages[i]!;
            if (produced.has(message)) break;
            deepFreeze(message);
            produced.add(message);
          }
        },
      },
      source,
      maxSessions,
    );
  }

  /** How many sessions are cached. */
  get size(): number {
    return this.#cache.size;
  }

  /** True when `message` was produced by this cache (and so is deeply frozen). */
  owns(message: Message): boolean {
    return this.#produced.has(message);
  }

  /** Folds a durable event into its session's entry (see {@linkcode FoldCache.committed}). */
  committed(event: SessionEvent): void {
    this.#cache.committed(event);
  }

  /** The session's derived history (a fresh list of frozen messages). */
  derive(sessionId: string, signal: AbortSignal | undefined): Promise<Message[]> {
    return this.#cache.current(sessionId, signal, (messages) => messages.slice());
  }

  /**
   * True when `messages` is exactly the session's cached history: the very frozen messages, in order, this cache
   * projected from the persisted events `1..seq` it covers (no read in flight). Reads nothing from the store.
   */
  holds(sessionId: string, messages: readonly Message[]): boolean {
    const cached = this.#cache.settled(sessionId);
    if (cached === undefined || cached.length !== messages.length) return false;
    for (let i = 0; i < cached.length; i++) if (cached[i] !== messages[i]) return false;
    return true;
  }

  /** Forgets one session's entry (see {@linkcode FoldCache.forget}). */
  forget(sessionId: string): void {
    this.#cache.forget(sessionId);
  }

  /** Forgets every entry (the projection table changed). */
  clear(): void {
    this.#cache.clear();
  }
}

function deepFreeze(value: unknown): void {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
}
