/**
 * The PostgreSQL store's cross-process tail: the `NOTIFY` payloads a commit sends (the origin store's id and the
 * `[session_id, head]` pairs it advanced, never event payloads) and their fan-out to remote-commit listeners on the
 * receiving side. Internal to the PostgreSQL store.
 *
 * @module
 */
import type { Logger } from "@terret/hames";
import type { RemoteCommitListener } from "../sessions/store.ts";

/** PostgreSQL refuses a notification payload of 8000 bytes or more; stay clear of it. */
const MAX_MESSAGE = 7000;

/** Encodes and decodes head notifications and fans them out to listeners. */
export class RemoteHeads {
  readonly #origin: string;
  readonly #logger: Logger | undefined;
  readonly #listeners = new Set<RemoteCommitListener>();
  #connections = 0;

  /** @param origin this store's id: its own notifications are skipped (its commit listeners saw the events) */
  constructor(origin: string, logger: Logger | undefined) {
    this.#origin = origin;
    this.#logger = logger;
  }

  add(listener: RemoteCommitListener): () => void {
    const entry: RemoteCommitListener = (sessionId, head) => listener(sessionId, head);
    this.#listeners.add(entry);
    return () => void this.#listeners.delete(entry);
  }

  /** The notification payloads for `heads`, each under PostgreSQL's size limit. */
  encode(heads: readonly (readonly [string, number])[]): string[] {
    const out: string[] = [];
    let part: (readonly [string, number])[] = [];
    let size = 0;
    for (const pair of heads) {
      const bytes = pair[0].length * 3 + 24;
      if (part.length > 0 && size + bytes > MAX_MESSAGE) {
        out.push(`${this.#origin} ${JSON.stringify(part)}`);
        part = [];
        size = 0;
      }
      part.push(pair);
      size += bytes;
    }
    if (part.length > 0) out.push(`${this.#origin} ${JSON.stringify(part)}`);
    return out;
  }

  /** A notification arrived: tells listeners each head another store advanced. */
  received(payload: string): void {
    const space = payload.indexOf(" ");
    if (payload.slice(0, space) === this.#origin) return;
    let heads: unknown;
    try {
      heads = JSON.parse(payload.slice(space + 1));
    } catch {
      heads = undefined;
    }
    if (!Array.isArray(heads)) {
      this.#logger?.log("warn", "A session head notification could not be read", { payload });
      return;
    }
    for (const pair of heads) {
      if (!Array.isArray(pair) || typeof pair[0] !== "string" || typeof pair[1] !== "number") {
        continue;
      }
      this.#fire(pair[0], pair[1]);
    }
  }

  /**
   * The listening connection (re)connected: after the first time, notifications may have been missed while it was
   * down, so every listener is told that any session may have advanced.
   */
  connected(): void {
    if (this.#connections++ > 0) this.#fire(undefined, 0);
  }

  #fire(sessionId: string | undefined, head: number): void {
    for (const listener of this.#listeners) {
      try {
        listener(sessionId, head);
      } catch (error) {
        this.#logger?.log("error", "A remote commit listener failed", { error });
      }
    }
  }
}
