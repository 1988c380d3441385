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

  /** What each notification starts with: this store's id (a space and the JSON array of heads follow). */
  get prefix(): string {
    return this.#origin;
  }

  /** The notification payloads for `heads`, each under PostgreSQL's size limit. */
  encode(heads: readonly (readonly [string, number])[]): string[] {
    const parts = this.parts(heads.map((pair) => pair[0]));
    const out: (readonly [string, number])[][] = [];
    heads.forEach((pair, i) => (out[parts[i]!] ??= []).push(pair));
    return out.map((part) => `${this.#origin} ${JSON.stringify(part)}`);
  }

  /**
   * For each session id, the notification (from 0) its head goes into, so that each stays under PostgreSQL's size
   * limit (a head is at most 20 digits; an id's character takes at most three bytes).
   */
  parts(ids: readonly string[]): number[] {
    const out: number[] = [];
    let part = 0;
    let size = 0;
    for (const id of ids) {
      const bytes = id.length * 3 + 24;
      if (size > 0 && size + bytes > MAX_MESSAGE) {
        part++;
        size = 0;
      }
      out.push(part);
      size += bytes;
    }
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
