/**
 * Ordered appends for one turn: each append is submitted at once (the store's group commit keeps submission order,
 * so seqs follow call order) and the turn awaits durability only where it must (before a request, before tools
 * run, at the end). Internal to the loop.
 *
 * @module
 */
import type { SessionEvent } from "../sessions/envelope.ts";
import type { Sessions } from "../sessions/session_log.ts";

/** Appends a turn's events in order, awaiting durability only on {@linkcode Appender.flush}. */
export class Appender {
  readonly #sessions: Sessions;
  readonly #sessionId: string;
  #tail: Promise<unknown> = Promise.resolve();
  #failure: { error: unknown } | undefined;
  #count = 0;

  constructor(sessions: Sessions, sessionId: string) {
    this.#sessions = sessions;
    this.#sessionId = sessionId;
  }

  /** Events submitted so far. */
  get count(): number {
    return this.#count;
  }

  /** True once an append failed (every later flush rejects with that failure). */
  get failed(): boolean {
    return this.#failure !== undefined;
  }

  /** Submits one event; the returned promise settles when it is durable (or failed). */
  append(type: string, payload: unknown): Promise<SessionEvent> {
    this.#count++;
    const appended = this.#sessions.append(this.#sessionId, { type, payload });
    appended.catch((error) => {
      this.#failure ??= { error };
    });
    this.#tail = appended;
    return appended;
  }

  /** Resolves once every event submitted so far is durable; rejects with the first append failure. */
  async flush(): Promise<void> {
    await this.#tail.catch(() => {});
    if (this.#failure !== undefined) throw this.#failure.error;
  }
}
