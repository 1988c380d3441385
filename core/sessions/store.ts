/**
 * The `session_store` seam: where session events are made durable. Stores are plugins (memory, JSONL, SQLite)
 * mounted as the `sessions.store` row; the sessions service is their only writer.
 *
 * @module
 */
import { defineService, type ServiceKey } from "@terret/hames";
import type { EventDraft, SessionEvent } from "./envelope.ts";

/** Options for {@linkcode SessionStore.read}. */
export interface StoreReadOptions {
  /** The first seq returned (default 1). */
  readonly from_seq?: number;
  /** The last seq returned (default: the head). */
  readonly to_seq?: number;
  /** At most this many events. */
  readonly limit?: number;
  /** Only events of these types (seqs keep their gaps). */
  readonly types?: readonly string[];
  /** Aborts the read (rejecting with the signal's reason). */
  readonly signal?: AbortSignal;
}

/**
 * Options for {@linkcode SessionStore.list}.
 *
 * A list is a page: ascending ids (string order, which for session ids is byte order), every one greater than
 * `after`, at most `limit` of them. For a typed list the superset rule holds per page: every session holding one of
 * the `types` whose id is in the range (`after`, last id returned] is in the page, and a page shorter than `limit`
 * (or any page without a `limit`) means no holder comes after it. So paging, with the last id of each page as the
 * next page's `after` until a page comes back shorter than `limit`, visits every holder exactly once. A bad `after`
 * or `limit` rejects (nothing is listed). Without `after` and `limit`, the list is every session (or holder).
 */
export interface StoreListOptions {
  /**
   * Only sessions holding at least one event of one of these types. A store may answer a superset (every session,
   * when it cannot filter cheaply: the JSONL store, or a list naming a type outside the sparse types on the SQL
   * stores), never less: callers confirm with a read of each session.
   */
  readonly types?: readonly string[];
  /**
   * Only ids strictly greater than this one in string order (any string is a bound, a session id or not); a
   * non-string rejects with a `TypeError`. Absent: from the first session.
   */
  readonly after?: string;
  /**
   * At most this many ids: a positive safe integer, anything else rejects with a `RangeError`. Absent: no limit.
   * A store answers a page at about the cost of the page, not of every session, where it can.
   */
  readonly limit?: number;
  /** Aborts the listing (rejecting with the signal's reason). */
  readonly signal?: AbortSignal;
}

/** Options for {@linkcode SessionStore.readJson}. */
export interface StoreJsonReadOptions {
  /** The first seq returned (default 1). */
  readonly from_seq?: number;
  /**
   * Stop once this many bytes of JSON text are returned (default 256 KiB); at least one event is returned whatever
   * its size, so a page always advances.
   */
  readonly max_bytes?: number;
  /** At most this many events (default 1,000). */
  readonly limit?: number;
  /** Aborts the read (rejecting with the signal's reason). */
  readonly signal?: AbortSignal;
}

/**
 * One stored event as its envelope's JSON text (`{"id":…,"session_id":…,"seq":…,"at":…,"type":…,"payload":…,
 * "parent_id":…}`, in that field order, the payload as encoded at the append boundary): what a socket frames as
 * is, with no parse and no re-serialization.
 */
export interface EventJson {
  readonly seq: number;
  readonly json: string;
}

/** How a store's group commit has behaved: the figures the benchmark reports. */
export interface StoreStats {
  /** Write transactions (groups) committed. */
  readonly groups: number;
  /** Events committed. */
  readonly events: number;
  /** The largest group, in events. */
  readonly max_group_events: number;
  /** The longest time one group blocked the event loop, in milliseconds. */
  readonly max_block_ms: number;
  /** The total time groups blocked the event loop, in milliseconds. */
  readonly total_block_ms: number;
}

/** Called synchronously for every event right after it is durable. */
export type CommitListener = (event: SessionEvent) => void;

/**
 * Called when another process (sharing the store) committed events: session `sessionId` reached seq `head`. With
 * `sessionId` `undefined`, any session may have advanced (notifications may have been missed) and `head` is 0.
 */
export type RemoteCommitListener = (sessionId: string | undefined, head: number) => void;

/**
 * A session store.
 *
 * Contract:
 * - `append` assigns `seq` inside the write (transaction) that makes the event durable, so seqs per session are
 *   unique and contiguous from 1 whatever the concurrency; it resolves only once the event is durable (it
 *   survives the process being killed) and rejects with a `TerretError` otherwise (`SessionNotFound` for an
 *   `existing` draft of an unknown session, `SessionExists` for a `new` draft of a known one, `StoreClosed`,
 *   or the store's own failure), in which case nothing was appended.
 * - Commit listeners are called synchronously, once per durable event, in seq order per session, before the
 *   append resolves; a throwing listener is the store's to isolate, never the appender's failure.
 * - `importSession` writes a whole new session (seqs 1..n, contiguous) atomically, or nothing.
 * - `read` returns events ascending by seq, never a torn or partial event; it reflects every append that has
 *   resolved. An unfiltered read (no `types`) that finds a seq missing in the range it returns, or a row it cannot
 *   decode, rejects with `TerretError` `StoreCorrupt` (details `session_id`, `seq`, `store`) instead of skipping
 *   it, and the store logs the row it could not read.
 * - `readJson`, when a store offers it, returns the same events as an unfiltered `read` as envelope JSON text
 *   (see {@linkcode EventJson}), sized by `max_bytes`, with the same corruption rule, except that a page ends
 *   before a bad row and only a page that would start at it rejects.
 * - `onRemoteCommit`, when a store offers it, reports other processes' commits to a shared store (a session id and
 *   its new head, never the events): the log then reads them from the store, so a listener may be told late or more
 *   than once, but a store that offers it must not miss a commit without reporting `undefined` (anything may have
 *   advanced). Stores without it tail only their own process's appends.
 * - `list` returns ids ascending in string order, each once, only ids greater than `after`, at most `limit`; a typed
 *   list may name more than the holders, never fewer, page by page (see {@linkcode StoreListOptions}), so paging on
 *   the last id returned visits every holder exactly once.
 * - `close` waits for pending appends, then releases the store; everything after it rejects `StoreClosed`.
 * - A store never rewrites or removes an event.
 */
export interface SessionStore {
  /** The store kind (`"memory"`, `"jsonl"`, `"sqlite"`, `"postgres"`). */
  readonly kind: string;
  /** Makes one event durable, assigning its seq. */
  append(draft: EventDraft): Promise<SessionEvent>;
  /** Writes a whole new session at once (a fork); refuses with `SessionExists` when it has events. */
  importSession(events: readonly SessionEvent[]): Promise<void>;
  /** Reads a session's events ascending by seq (empty for an unknown session). */
  read(sessionId: string, options?: StoreReadOptions): Promise<SessionEvent[]>;
  /** Reads a session's events as stored JSON text, ascending by seq (optional: the log falls back to `read`). */
  readJson?(sessionId: string, options?: StoreJsonReadOptions): Promise<EventJson[]>;
  /** The highest seq of a session (0 when it has none). */
  head(sessionId: string, options?: { readonly signal?: AbortSignal }): Promise<number>;
  /**
   * Every session id the store holds (with `types`, those holding such events, or more), sorted ascending; with
   * `after` and `limit`, one page of them: only ids greater than `after`, at most `limit`, and for a typed list
   * every holder in the page's range and, when the page is shorter than `limit`, none after it (see
   * {@linkcode StoreListOptions}).
   */
  list(options?: StoreListOptions): Promise<string[]>;
  /** Registers a commit listener; returns its remover. */
  onCommit(listener: CommitListener): () => void;
  /** Registers a listener for other processes' commits (optional: stores shared across processes). */
  onRemoteCommit?(listener: RemoteCommitListener): () => void;
  /** Group-commit figures since the store opened. */
  stats(): StoreStats;
  /** Flushes pending appends and releases the store (idempotent). */
  close(): Promise<void>;
}

/** The persistence seam's service key. */
export const SessionStoreKey: ServiceKey<SessionStore> = defineService<SessionStore>(
  "session_store",
  "Makes session events durable (memory, JSONL or SQLite)",
);
