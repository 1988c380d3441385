/**
 * The sparse event types (internal to the stores): the few a session holds rarely, which Terret reads by type
 * across every session (the boot sweeps) or on each rehydration. A store may index them, so such a read costs the
 * events it returns instead of every event of the session.
 *
 * @module
 */

/**
 * The event types the stores index for typed reads, each with who reads it by type:
 *
 * - `approval/requested`, `approval/resolved`: the approvals boot sweep (which sessions have a request open or a
 *   verdict owed), before it folds the session's tool events;
 * - `job/started`, `job/ended`: the jobs row's lost-job sweep at boot, and its next job id per session;
 * - `input/queued`, `user/message`, `context/injected`: the durable-input sweep at boot and on rehydration (queued
 *   input no message or steer has claimed yet); the titler reads `user/message` too. One or two per turn, against
 *   about seventeen events a three-step turn writes;
 * - `session/titled`, `session/compacted`, `persona/amended`, `policy/updated`: the titler, compaction, the prompt and
 *   the allow list on rehydration, and the socket's agent directory.
 *
 * A typed read of these types alone is served from the index; a read naming any other type scans the session's
 * events in range. The list is part of the stores' schemas (the SQLite store's partial index, the
 * PostgreSQL store's): change it only with a new index name.
 */
export const SPARSE_EVENT_TYPES: readonly string[] = Object.freeze([
  "approval/requested",
  "approval/resolved",
  "context/injected",
  "input/queued",
  "job/ended",
  "job/started",
  "persona/amended",
  "policy/updated",
  "session/compacted",
  "session/titled",
  "user/message",
]);

/** True when every one of `types` (at least one) is a {@linkcode SPARSE_EVENT_TYPES} type. */
export function allSparse(types: readonly string[]): boolean {
  if (types.length === 0) return false;
  for (const type of types) if (!SPARSE_EVENT_TYPES.includes(type)) return false;
  return true;
}

/**
 * The SQL condition that holds exactly for the sparse types: one `type = '…'` comparison per type, joined by `OR`.
 * SQLite checks it on every inserted row; written as an `IN` list instead it measured no cheaper. A typed read can
 * use the partial index only when its query contains this condition verbatim (SQLite's rule, and PostgreSQL's
 * whenever the types are parameters), so the index and the typed reads share this text.
 */
export const SPARSE_TYPES_SQL: string = `(${
  SPARSE_EVENT_TYPES.map((type) => `type = '${type}'`).join(" OR ")
})`;
