/**
 * The heads a store's writer last committed, by session, so that its next group places appends without reading
 * them. Internal to the PostgreSQL store.
 *
 * @module
 */

/**
 * The last head this writer committed for each of the most recently written sessions (at most `capacity`, the least
 * recently written forgotten first).
 *
 * **Contract:** an entry is never above the session's true head: it is set only from a committed statement's result
 * and is forgotten whenever a statement over the session fails (its outcome unknown). It may be below it (another
 * node appended since): then the group's first seq is taken, `UNIQUE (session_id, seq)` refuses the statement, the
 * entries are forgotten and the group runs again reading the heads. So a stale entry costs a retry, never a gap. An
 * entry also says that its session exists (the store never removes a session).
 */
export class KnownHeads {
  readonly #capacity: number;
  readonly #heads = new Map<string, number>();

  /** @param capacity the most sessions remembered */
  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** The head last committed for `sessionId`, or `undefined` when not known. */
  get(sessionId: string): number | undefined {
    return this.#heads.get(sessionId);
  }

  /** Records `head` as committed for `sessionId` (the most recently written now). */
  set(sessionId: string, head: number): void {
    this.#heads.delete(sessionId);
    this.#heads.set(sessionId, head);
    if (this.#heads.size > this.#capacity) {
      this.#heads.delete(this.#heads.keys().next().value!);
    }
  }

  /** Forgets `sessionId`'s head (a statement over it failed, so its head is not known). */
  forget(sessionId: string): void {
    this.#heads.delete(sessionId);
  }

  /** How many sessions are remembered. */
  get size(): number {
    return this.#heads.size;
  }
}
