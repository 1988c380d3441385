/**
 * The SQLite store's watch for other processes' commits: `PRAGMA data_version` read on an interval while anyone
 * listens. Internal to the SQLite store.
 *
 * @module
 */
import type { Logger } from "@terret/hames";
import type { RemoteCommitListener } from "./store.ts";

/**
 * Reads a data version every `everyMs` while at least one listener is registered, and reports a change to each as
 * "any session may have advanced" (`undefined`, 0). A failed read is logged as a warning and tried again on the next
 * tick; a throwing listener is logged and the others still run.
 */
export class DataVersionPoll {
  readonly #read: () => number;
  readonly #everyMs: number;
  readonly #logger: Logger | undefined;
  readonly #listeners = new Set<RemoteCommitListener>();
  #timer: ReturnType<typeof setInterval> | undefined;
  /** The version as the last tick saw it. */
  #seen = -1;
  #stopped = false;

  constructor(read: () => number, everyMs: number, logger: Logger | undefined) {
    this.#read = read;
    this.#everyMs = everyMs;
    this.#logger = logger;
  }

  /** Registers `listener`, starting the poll with the first one; the returned function removes it. */
  add(listener: RemoteCommitListener): () => void {
    const entry: RemoteCommitListener = (id, head) => listener(id, head);
    this.#listeners.add(entry);
    if (this.#timer === undefined && !this.#stopped) {
      this.#seen = this.#read();
      this.#timer = setInterval(() => this.#tick(), this.#everyMs);
    }
    return () => {
      this.#listeners.delete(entry);
      if (this.#listeners.size === 0) this.#clear();
    };
  }

  /** Stops polling for good (the store is closing). */
  stop(): void {
    this.#stopped = true;
    this.#clear();
  }

  #tick(): void {
    if (this.#stopped) return;
    let version: number;
    try {
      version = this.#read();
    } catch (error) {
      this.#logger?.log("warn", "Cannot check the SQLite store for other processes' commits", {
        error,
      });
      return;
    }
    if (version === this.#seen) return;
    this.#seen = version;
    for (const listener of this.#listeners) {
      try {
        listener(undefined, 0);
      } catch (error) {
        this.#logger?.log("error", "A remote commit listener failed", { error });
      }
    }
  }

  #clear(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
