/**
 * What the stores share: their errors, commit-listener fan-out and read filtering. Internal to the stores.
 *
 * @module
 */
import type { Context } from "@terret/hames";
import { TerretError } from "../errors.ts";
import type { SessionEvent } from "./envelope.ts";
import type {
  CommitListener,
  StoreJsonReadOptions,
  StoreListOptions,
  StoreReadOptions,
} from "./store.ts";

/** Default `max_bytes` of a `readJson` page. */
export const JSON_PAGE_BYTES = 256 * 1024;
/** Default `limit` of a `readJson` page. */
export const JSON_PAGE_EVENTS = 1000;

/**
 * One event's envelope JSON: the fields in envelope order around `payloadJson`, the payload as encoded at the append
 * boundary. Equal to `JSON.stringify(event)` when `payloadJson` is `JSON.stringify(event.payload)`.
 */
export function envelopeJson(event: SessionEvent, payloadJson: string): string {
  return `{"id":${JSON.stringify(event.id)},"session_id":${
    JSON.stringify(event.session_id)
  },"seq":${event.seq},"at":${JSON.stringify(event.at)},"type":${
    JSON.stringify(event.type)
  },"payload":${payloadJson},"parent_id":${JSON.stringify(event.parent_id)}}`;
}

/** The checked bounds of one `readJson` page (defaults applied); a bad bound throws a `RangeError`. */
export function jsonBounds(
  options: StoreJsonReadOptions,
): { from: number; maxBytes: number; limit: number } {
  const from = options.from_seq ?? 1;
  const limit = options.limit ?? JSON_PAGE_EVENTS;
  readBounds({ from_seq: from, limit });
  return { from, maxBytes: options.max_bytes ?? JSON_PAGE_BYTES, limit };
}

/** `SessionExists`: a `new` draft (or an import) for a session that has events. */
export function sessionExists(id: string): TerretError {
  return new TerretError("SessionExists", `Cannot create session "${id}": it already exists`, {
    details: { session_id: id },
  });
}

/** `SessionNotFound`: an `existing` draft for a session without events. */
export function sessionNotFound(id: string): TerretError {
  return new TerretError("SessionNotFound", `Cannot append to session "${id}": no such session`, {
    details: { session_id: id },
  });
}

/** `StoreClosed`. */
export function storeClosed(kind: string): TerretError {
  return new TerretError("StoreClosed", `Cannot use the ${kind} session store: it is closed`);
}

/** `StoreCorrupt`: a stored event that cannot be read back. */
export function storeCorrupt(where: string, why: string): TerretError {
  return new TerretError("StoreCorrupt", `Cannot read ${where}: ${why}`, { details: { where } });
}

/**
 * `StoreCorrupt` for one row of one session: a seq missing from a range read (`found` is the seq the store returned
 * in its place, `undefined` when none) or a row that cannot be decoded (`why`).
 */
export function rowCorrupt(
  store: string,
  sessionId: string,
  seq: number,
  why: string,
): TerretError {
  return new TerretError(
    "StoreCorrupt",
    `Cannot read seq ${seq} of session "${sessionId}" from ${store}: ${why}`,
    { details: { store, session_id: sessionId, seq } },
  );
}

/** The reason for a seq missing from a read: the row after it is `found`. */
export function missingRow(found: number): string {
  return `the row is missing (the next stored seq is ${found})`;
}

/** Fans committed events out to listeners, isolating a throwing listener. */
export class CommitListeners {
  readonly #listeners = new Set<CommitListener>();
  readonly #report: (error: unknown) => void;

  constructor(report: (error: unknown) => void) {
    this.#report = report;
  }

  add(listener: CommitListener): () => void {
    const entry = (event: SessionEvent): void => listener(event);
    this.#listeners.add(entry);
    return () => void this.#listeners.delete(entry);
  }

  notify(event: SessionEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (error) {
        this.#report(error);
      }
    }
  }
}

/** Validates read bounds, returning the effective `[from, to]` and limit. */
export function readBounds(options: StoreReadOptions): { from: number; to: number; limit: number } {
  const from = options.from_seq ?? 1;
  const to = options.to_seq ?? Number.MAX_SAFE_INTEGER;
  const limit = options.limit ?? Number.MAX_SAFE_INTEGER;
  for (const [name, value] of [["from_seq", from], ["to_seq", to], ["limit", limit]] as const) {
    if (!Number.isSafeInteger(value) || value < (name === "limit" ? 0 : 1)) {
      throw new RangeError(
        `Cannot read a session: ${name} must be a positive integer, got ${value}`,
      );
    }
  }
  return { from, to, limit };
}

/** The checked bounds of a list page: `after` and `limit`, `undefined` when absent (no bound, no limit). */
export interface ListPage {
  readonly after: string | undefined;
  readonly limit: number | undefined;
}

/**
 * Checks a list's options, every store alike: an aborted signal throws its reason; a non-string `after` throws a
 * `TypeError`; a `limit` that is not a positive safe integer throws a `RangeError`. Returns the page's bounds.
 */
export function listPage(options: StoreListOptions): ListPage {
  checkSignal(options.signal);
  const { after, limit } = options;
  if (after !== undefined && typeof after !== "string") {
    const got = after === null ? "null" : Array.isArray(after) ? "an array" : typeof after;
    throw new TypeError(`Cannot list sessions: after must be a string, got ${got}`);
  }
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1)) {
    throw new RangeError(
      `Cannot list sessions: limit must be a positive integer, got ${String(limit)}`,
    );
  }
  return { after, limit };
}

/** Checks that an import is a whole session: one id, seqs 1..n. */
export function checkImport(events: readonly SessionEvent[]): string {
  const id = events[0]?.session_id;
  if (id === undefined) throw new RangeError("Cannot import a session: it has no events");
  events.forEach((event, i) => {
    if (event.session_id !== id || event.seq !== i + 1) {
      throw new RangeError(
        `Cannot import session "${id}": event ${i} is seq ${event.seq} of "${event.session_id}"`,
      );
    }
  });
  return id;
}

/** Throws the signal's reason when it is aborted. */
export function checkSignal(signal: AbortSignal | undefined): void {
  signal?.throwIfAborted();
}

/** A commit-listener failure reporter writing to the context's logger. */
export function reporter(ctx: Context): (error: unknown) => void {
  return (error) => ctx.logger.log("error", "A session commit listener failed", { error });
}
