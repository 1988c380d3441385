/**
 * A per-session projection of a few event types, read from the log on first use, cached per session, and kept
 * current log-first: a `session/event` listener folds each new event of those types into the cached state once it
 * is durable. The allow list's active policy and the prompt's persona are such projections.
 *
 * @module
 */
import type { Context, Disposer } from "@terret/hames";
import type { SessionEvent } from "./envelope.ts";
import { SessionEventAppended, SessionReleased } from "./events.ts";
import type { Sessions } from "./sessions.ts";

/** Options for {@linkcode SessionProjection}. */
export interface SessionProjectionOptions<S> {
  /** The event types folded after `session/created` (which is always read: it proves the session exists). */
  readonly types: readonly string[];
  /** The state of a session from its first event (`session/created`; a fork's copied one for a fork). */
  readonly initial: (created: SessionEvent) => S;
  /** Folds one event of `types` into the state; pure, must not throw for a payload its schema admits. */
  readonly fold: (state: S, event: SessionEvent) => S;
  /**
   * Builds the state from `session/created` and the session's events of `types` (ascending) at once, for a read from
   * the log: it must equal `initial(created)` folded with each of `events` in turn, and may build it in place
   * (nothing holds it yet). For a fold whose copy-on-write steps cost the size of the state, which replayed one event
   * at a time over a long session is quadratic. Default: `initial`, then `fold` event by event.
   */
  readonly replay?: (created: SessionEvent, events: readonly SessionEvent[]) => S;
  /** The most sessions cached at once, least recently used evicted first (default 10,000). */
  readonly maxSessions?: number;
  /** A label for the listener's effect. */
  readonly label?: string;
}

interface Entry<S> {
  state: S;
  seq: number;
}

interface PendingRead<S> {
  promise: Promise<S | undefined>;
  stale: boolean;
}

/**
 * A cached per-session projection.
 *
 * Contract: `get` returns the state folded from every event of `types` the log held when the read was made, or a
 * later one; it never returns a state older than an event whose `session/event` has been emitted before the call.
 * An unknown session (no events) resolves to `undefined` and is never cached, so a session created later is read
 * afresh. A session is dropped from the cache on `sessions/released` (its agent left memory). A read failure rejects and caches nothing. Events appended by another process to a shared store are not
 * seen until the session's entry is evicted or `invalidate`d (the live feed is per process).
 */
export class SessionProjection<S> {
  readonly #sessions: Sessions;
  readonly #options: SessionProjectionOptions<S>;
  readonly #types: ReadonlySet<string>;
  readonly #max: number;
  readonly #cache = new Map<string, Entry<S>>();
  readonly #pending = new Map<string, PendingRead<S>>();
  readonly #dispose: Disposer;
  #closed = false;

  /**
   * @param owner the context the `session/event` listener is registered on (it must hear the sessions service's
   *   emits: the same context tree level or an ancestor of it); the cache stops updating when `owner` is disposed
   * @param sessions the log to read
   */
  constructor(owner: Context, sessions: Sessions, options: SessionProjectionOptions<S>) {
    const max = options.maxSessions ?? 10_000;
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new RangeError(`Cannot create a session projection: maxSessions must be at least 1`);
    }
    this.#sessions = sessions;
    this.#options = options;
    this.#types = new Set(options.types);
    this.#max = max;
    this.#dispose = owner.effect(() => {
      const off = owner.on(SessionEventAppended, (event) => this.#appended(event));
      // A session released from memory (its agent evicted or disposed) leaves this cache too.
      const offReleased = owner.on(
        SessionReleased,
        ({ session_id }) => this.invalidate(session_id),
      );
      return () => {
        off();
        offReleased();
        this.#closed = true;
        this.#cache.clear();
      };
    }, options.label ?? "session projection");
  }

  /**
   * Stops listening and drops the cache (also done when the owner is disposed); idempotent. Afterwards every `get`
   * reads the log.
   */
  dispose(): Promise<void> {
    return Promise.resolve(this.#dispose());
  }

  /** How many sessions are cached. */
  get size(): number {
    return this.#cache.size;
  }

  /** True when `sessionId`'s state is cached. */
  cached(sessionId: string): boolean {
    return this.#cache.has(sessionId);
  }

  /**
   * The session's cached state, without a read: `undefined` when it is not cached (then `get` reads the log). A
   * state it returns is as current as one `get` would return at the same moment.
   */
  peek(sessionId: string): S | undefined {
    const hit = this.#cache.get(sessionId);
    if (hit === undefined) return undefined;
    this.#cache.delete(sessionId);
    this.#cache.set(sessionId, hit);
    return hit.state;
  }

  /**
   * The session's state, read from the log on a miss (concurrent misses share one read).
   *
   * @returns the state, or `undefined` for a session the log does not hold
   */
  get(sessionId: string, options: { readonly signal?: AbortSignal } = {}): Promise<S | undefined> {
    const hit = this.#cache.get(sessionId);
    if (hit !== undefined) {
      this.#cache.delete(sessionId);
      this.#cache.set(sessionId, hit);
      return Promise.resolve(hit.state);
    }
    let pending = this.#pending.get(sessionId);
    if (pending === undefined) {
      const read = { stale: false } as PendingRead<S>;
      read.promise = this.#read(sessionId, read).finally(() => {
        if (this.#pending.get(sessionId) === read) this.#pending.delete(sessionId);
      });
      this.#pending.set(sessionId, read);
      pending = read;
    }
    return abortable(pending.promise, options.signal);
  }

  /** Drops a session's cached state; the next `get` reads the log. */
  invalidate(sessionId: string): void {
    this.#cache.delete(sessionId);
    this.#forget(sessionId);
  }

  /** A read in flight may predate an event: later callers must not share it, and it must not be cached. */
  #forget(sessionId: string): void {
    const pending = this.#pending.get(sessionId);
    if (pending === undefined) return;
    pending.stale = true;
    this.#pending.delete(sessionId);
  }

  async #read(sessionId: string, read: PendingRead<S>): Promise<S | undefined> {
    // Two reads: `session/created` is seq 1, and the projection's own types are often all sparse (a policy, a
    // persona, a title), which the stores answer from their index; asked together, every event would be scanned.
    const [first] = await this.#sessions.read(sessionId, { to_seq: 1 });
    if (first === undefined || first.type !== "session/created") return undefined;
    const events = this.#types.size === 0
      ? []
      : (await this.#sessions.read(sessionId, { types: [...this.#types], from_seq: 2 }))
        .filter((event) => this.#types.has(event.type));
    let state: S;
    const replay = this.#options.replay;
    if (replay !== undefined) {
      state = replay(first, events);
    } else {
      state = this.#options.initial(first);
      for (const event of events) state = this.#options.fold(state, event);
    }
    if (!read.stale && !this.#closed) {
      this.#cache.set(sessionId, { state, seq: events.at(-1)?.seq ?? first.seq });
      while (this.#cache.size > this.#max) this.#cache.delete(this.#cache.keys().next().value!);
    }
    return state;
  }

  #appended(event: SessionEvent): void {
    if (event.seq === 1 && event.type === "session/created") {
      // A session's first event is all its state so far: cache it without a read.
      this.#forget(event.session_id);
      if (!this.#cache.has(event.session_id) && !this.#closed) {
        this.#cache.set(event.session_id, { state: this.#options.initial(event), seq: 1 });
        while (this.#cache.size > this.#max) this.#cache.delete(this.#cache.keys().next().value!);
      }
      return;
    }
    if (!this.#types.has(event.type)) return;
    this.#forget(event.session_id);
    const entry = this.#cache.get(event.session_id);
    if (entry === undefined || event.seq <= entry.seq) return;
    try {
      entry.state = this.#options.fold(entry.state, event);
      entry.seq = event.seq;
    } catch (error) {
      this.#cache.delete(event.session_id);
      throw error;
    }
  }
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = (): void => reject(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", abort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener("abort", abort);
        reject(error);
      },
    );
  });
}
