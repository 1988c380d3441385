/**
 * The SQLite store's schema and prepared statements: prepared once per connection, the multi-row inserts and typed
 * range reads once per row or type count. Internal to the SQLite store.
 *
 * @module
 */
import type { Logger } from "@terret/hames";
import type { DatabaseSync, StatementSync } from "node:sqlite";
import type { SessionEvent } from "./envelope.ts";
import { allSparse, SPARSE_TYPES_SQL } from "./_sparse_types.ts";

/** The one table: events by `(session_id, seq)`, the payload as its JSON text. */
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS session_events (
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  id TEXT NOT NULL,
  at TEXT NOT NULL,
  type TEXT NOT NULL,
  parent_id TEXT,
  payload TEXT NOT NULL,
  UNIQUE (session_id, seq)
);`;

/** The name of {@linkcode SPARSE_INDEX}: a new list of sparse types takes a new name. */
const SPARSE_INDEX_NAME = "session_events_sparse_v1";

/**
 * The partial index of the sparse event types (`_sparse_types.ts`), by `(session_id, seq, type)`: a typed read of
 * those types alone walks the session's sparse entries in seq order, checking each type in the index, instead of
 * scanning every event of the session; only the matches are read from the table. SQLite keeps it on every insert,
 * whoever writes the file. Creating it on a store written before it existed reads every event once, at that open.
 */
export const SPARSE_INDEX =
  `CREATE INDEX IF NOT EXISTS ${SPARSE_INDEX_NAME} ON session_events (session_id, seq, type) WHERE ${SPARSE_TYPES_SQL}`;

/** True when the file has {@linkcode SPARSE_INDEX}. */
export function hasSparseIndex(db: DatabaseSync): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?")
    .get(SPARSE_INDEX_NAME) !== undefined;
}

/**
 * Creates {@linkcode SPARSE_INDEX} when the file lacks it, and logs (`info`) how long it took on a store that held
 * events. Without the index every read is still right, and a typed read of sparse types scans the session as any
 * other typed read does, so a store that cannot take it (a file it may not write, a writer holding the lock past the
 * busy timeout) opens anyway, and says so (`warn`).
 */
export function ensureSparseIndex(
  db: DatabaseSync,
  path: string,
  logger: Logger | undefined,
): void {
  if (hasSparseIndex(db)) return;
  // Once per store written before the index: it reads every stored event, with the event loop blocked meanwhile.
  const stored = db.prepare("SELECT EXISTS (SELECT 1 FROM session_events) AS stored").get() as {
    stored: number;
  };
  const started = performance.now();
  try {
    db.exec(SPARSE_INDEX);
    if (stored.stored === 1) {
      logger?.log(
        "info",
        `Indexed the sparse event types of the SQLite session store "${path}" (once: every stored event was read)`,
        { ms: Math.round(performance.now() - started) },
      );
    }
  } catch (error) {
    logger?.log(
      "warn",
      `The SQLite session store "${path}" has no index of its sparse event types: typed reads of them scan each session`,
      { error },
    );
  }
}

const COLUMNS = "seq, id, at, type, parent_id, payload";
/**
 * A read's row limit, bound per query. With a bare `LIMIT ?` every execution costs about what preparing the
 * statement costs, whatever the values bound (the limit is a parameter SQLite's planner watches, and `node:sqlite`
 * binds every parameter on each call): measured on 10,000 sessions, a range read of ten rows took 18 µs against
 * 12 µs with the limit cast, and a sparse typed read 38–56 µs against 5–6 µs. The cast hides the parameter from the
 * planner; the reads are otherwise the same.
 */
const LIMIT = "LIMIT CAST(? AS INTEGER)";
/**
 * Session ids, ascending, one index seek per session (a skip scan of the `(session_id, seq)` index): `SELECT
 * DISTINCT` would walk every event's index entry, which the boot-time sweeps pay once each on a large store. Takes
 * `(after, limit)`: the first seek is for the least id greater than `after` (`''` lists from the first: ids are not
 * empty), and the limit sits on the recursive select, where SQLite stops adding rows (so stops seeking) once it has
 * that many; a negative limit is none. The terminal `NULL` row (no id after the last) may count toward the limit,
 * but only once the ids are exhausted, so a page holds `limit` ids whenever that many remain.
 */
const LIST_SESSIONS = `WITH RECURSIVE ids(session_id) AS (
  SELECT (SELECT min(session_id) FROM session_events WHERE session_id > ?)
  UNION ALL
  SELECT (SELECT min(session_id) FROM session_events WHERE session_id > ids.session_id) FROM ids
  WHERE ids.session_id IS NOT NULL
  ${LIMIT}
) SELECT session_id FROM ids WHERE session_id IS NOT NULL`;
/** The most types a typed read binds as plain parameters (more go in as one JSON list). */
const TYPED_LISTS = 16;
/** The most rows one prepared `INSERT` writes (7 parameters each). */
const INSERT_ROWS = 16;

/** A range row: seq, id, at, type, parent_id, payload. */
export type Row = [number, string, string, string, string | null, string];
/** A range row with `json_valid(payload)` (1 when the payload is well-formed JSON). */
export type JsonRow = [number, string, string, string, string | null, string, number];

/** The statements of one connection. Rows come back as arrays ({@linkcode Row}, {@linkcode JsonRow}). */
export class SqliteStatements {
  readonly #db: DatabaseSync;
  /** One event: `(session_id, seq, id, at, type, parent_id, payload)`. */
  readonly insertOne: StatementSync;
  /** Multi-row inserts by row count (index 1 to {@linkcode INSERT_ROWS}). */
  readonly #inserts: (StatementSync | undefined)[] = [];
  /** `[max(seq)]` of one session. */
  readonly head: StatementSync;
  /** Rows of `(session, from, to, limit)`. */
  readonly range: StatementSync;
  /** Rows of `(session, from, to, types as a JSON list, limit)`. */
  readonly #rangeTyped: StatementSync;
  /** Typed range reads by type count (index 1 to {@linkcode TYPED_LISTS}): the types bound as plain parameters. */
  readonly #rangeTypedLists: (StatementSync | undefined)[] = [];
  /** The same for sparse types only, through {@linkcode SPARSE_INDEX}. */
  readonly #rangeSparseLists: (StatementSync | undefined)[] = [];
  /** Whether the file has {@linkcode SPARSE_INDEX} (a store that could not create it reads sparse types by scan). */
  readonly #sparseIndexed: boolean;
  /** {@linkcode JsonRow}s of `(session, from, limit)`. */
  readonly rangeJson: StatementSync;
  /** `{ session_id }` objects of `(after, limit)`: the sessions after `after`, ascending, at most `limit` (-1: all). */
  readonly list: StatementSync;
  /**
   * `{ session_id }` objects of `(types as JSON, after, limit)`: the sessions after `after` holding an event of
   * those sparse types, ascending, at most `limit` (-1: all), from one range scan of {@linkcode SPARSE_INDEX} that
   * stops at the limit; `undefined` when the file lacks the index.
   */
  readonly listSparse: StatementSync | undefined;
  readonly begin: StatementSync;
  readonly commit: StatementSync;
  /** `[PRAGMA data_version]`. */
  readonly dataVersion: StatementSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
    this.#sparseIndexed = hasSparseIndex(db);
    this.insertOne = db.prepare(
      `INSERT INTO session_events (session_id, ${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.head = db.prepare("SELECT max(seq) AS head FROM session_events WHERE session_id = ?");
    const range =
      `SELECT ${COLUMNS} FROM session_events WHERE session_id = ? AND seq >= ? AND seq <= ?`;
    this.range = db.prepare(`${range} ORDER BY seq ${LIMIT}`);
    this.#rangeTyped = db.prepare(
      `${range} AND type IN (SELECT value FROM json_each(?)) ORDER BY seq ${LIMIT}`,
    );
    this.rangeJson = db.prepare(
      `SELECT ${COLUMNS}, json_valid(payload) FROM session_events WHERE session_id = ? AND seq >= ? ` +
        `ORDER BY seq ${LIMIT}`,
    );
    this.list = db.prepare(LIST_SESSIONS);
    this.listSparse = this.#sparseIndexed
      ? db.prepare(
        `SELECT DISTINCT session_id FROM session_events WHERE ${SPARSE_TYPES_SQL} ` +
          "AND type IN (SELECT value FROM json_each(?)) AND session_id > ? " +
          `ORDER BY session_id ${LIMIT}`,
      )
      : undefined;
    this.begin = db.prepare("BEGIN IMMEDIATE");
    this.commit = db.prepare("COMMIT");
    this.dataVersion = db.prepare("PRAGMA data_version");
    for (
      const statement of [this.range, this.#rangeTyped, this.rangeJson, this.head, this.dataVersion]
    ) {
      returnArrays(statement);
    }
  }

  /**
   * The typed range read for `types`, taking `(session, from, to, ...values, limit)`: the list bound as plain
   * parameters (`type IN (?, …)`, prepared once per count), which SQLite checks per row faster than a `json_each`
   * subquery; past {@linkcode TYPED_LISTS} types, the list goes in as one JSON parameter. `sparse` is true when
   * every type is a sparse one and the file has the index: the statement then carries {@linkcode SPARSE_INDEX}'s
   * condition verbatim, so SQLite seeks the matches through that index and the read costs what it returns, not the
   * seqs it spans.
   */
  typedRange(
    types: readonly string[],
  ): { statement: StatementSync; values: readonly string[]; sparse: boolean } {
    const count = types.length;
    if (count < 1 || count > TYPED_LISTS) {
      return { statement: this.#rangeTyped, values: [JSON.stringify(types)], sparse: false };
    }
    const sparse = this.#sparseIndexed && allSparse(types);
    const cache = sparse ? this.#rangeSparseLists : this.#rangeTypedLists;
    let statement = cache[count];
    if (statement === undefined) {
      statement = this.#db.prepare(
        `SELECT ${COLUMNS} FROM session_events WHERE session_id = ? AND seq >= ? AND seq <= ?${
          sparse ? ` AND ${SPARSE_TYPES_SQL}` : ""
        } AND type IN (${
          Array.from({ length: count }, () => "?").join(", ")
        }) ORDER BY seq ${LIMIT}`,
      );
      returnArrays(statement);
      cache[count] = statement;
    }
    return { statement, values: types, sparse };
  }

  /**
   * Inserts `events` (with their payloads' JSON, encoded once at the boundary) in as few statements as possible: one
   * multi-row `INSERT` per {@linkcode INSERT_ROWS} events, since a statement per row costs more than the row it
   * writes. Runs inside the caller's transaction.
   */
  insertRows(events: readonly SessionEvent[], payloads: readonly string[]): void {
    for (let start = 0; start < events.length; start += INSERT_ROWS) {
      const count = Math.min(INSERT_ROWS, events.length - start);
      const values: (string | number | null)[] = new Array(count * 7);
      for (let i = 0; i < count; i++) {
        const event = events[start + i]!;
        const at = i * 7;
        values[at] = event.session_id;
        values[at + 1] = event.seq;
        values[at + 2] = event.id;
        values[at + 3] = event.at;
        values[at + 4] = event.type;
        values[at + 5] = event.parent_id;
        values[at + 6] = payloads[start + i]!;
      }
      this.#insertStatement(count).run(...values);
    }
  }

  /** The prepared `INSERT` of `rows` rows (prepared once per row count). */
  #insertStatement(rows: number): StatementSync {
    let statement = this.#inserts[rows];
    if (statement === undefined) {
      const row = "(?, ?, ?, ?, ?, ?, ?)";
      statement = this.#db.prepare(
        `INSERT INTO session_events (session_id, ${COLUMNS}) VALUES ${
          Array.from({ length: rows }, () => row).join(", ")
        }`,
      );
      this.#inserts[rows] = statement;
    }
    return statement;
  }
}

/** `setReturnArrays` exists in Deno's node:sqlite (PROTOCOLS.md §4.3) but not in its type declarations. */
function returnArrays(statement: StatementSync): void {
  (statement as unknown as { setReturnArrays(enabled: boolean): void }).setReturnArrays(true);
}
