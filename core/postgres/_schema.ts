/**
 * The PostgreSQL store's schema and its versioned migrations. Internal to the PostgreSQL store.
 *
 * @module
 */
import type { Sql } from "postgres";
import { TerretError } from "../errors.ts";
import { allSparse, SPARSE_TYPES_SQL } from "../sessions/_sparse_types.ts";

/**
 * The migrations, in order: migration `i` takes the schema from version `i` to `i + 1`. `{s}` is the quoted schema
 * name. Append only: a released migration is never edited.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE {s}.session_heads (
    session_id text COLLATE "C" PRIMARY KEY,
    head bigint NOT NULL
  );
  CREATE TABLE {s}.session_events (
    session_id text COLLATE "C" NOT NULL,
    seq bigint NOT NULL,
    id text NOT NULL,
    at text NOT NULL,
    type text NOT NULL,
    parent_id text,
    payload json NOT NULL,
    CONSTRAINT session_events_session_seq UNIQUE (session_id, seq)
  );`,
  `
  CREATE TABLE {s}.agent_leases (
    agent_id text COLLATE "C" PRIMARY KEY,
    owner text NOT NULL,
    expires_at timestamptz NOT NULL,
    token bigint NOT NULL
  );`,
  // Who appended each event: the node, and the fencing token of a fenced append (NULL for an unfenced one), so the
  // log itself shows that no two nodes appended to a session under different tokens at once.
  `
  ALTER TABLE {s}.session_events ADD COLUMN node text, ADD COLUMN fencing_token bigint;`,
  // A session's head is the greater of its head row and its last stored seq: an append to an existing session no
  // longer advances the row. No table changes, but code before this version trusts the row alone and would place
  // appends at stale seqs, so the version moves and such code refuses the schema (StoreSchemaNewer).
  `
  COMMENT ON TABLE {s}.session_heads IS ` +
  `'Session creations; a head is the greater of head and the last seq in session_events';`,
];

/**
 * The partial index of the sparse event types (`sessions/_sparse_types.ts`) by `(session_id, seq, type)`, so a typed
 * read of those types alone (the boot sweeps) costs its matches instead of the session's events. Created at every
 * open when missing, outside the versions: code that predates it reads and writes the schema as before, so it moves
 * no version and keeps no node out. A new list of sparse types takes a new name.
 */
export const SPARSE_INDEX =
  `CREATE INDEX IF NOT EXISTS session_events_sparse_v1 ON {s}.session_events (session_id, seq, type) WHERE ${SPARSE_TYPES_SQL}`;

/**
 * The range read of schema `s` (quoted), taking `($1 session, $2 from, $3 to, $4 limit)` and, with `types`, `$5` the
 * types as an array. A list of sparse types alone carries {@linkcode SPARSE_INDEX}'s condition verbatim, which is
 * what lets the planner prove the partial index applies.
 */
export function rangeQuery(s: string, types: readonly string[] | undefined): string {
  const typed = types === undefined
    ? ""
    : `${allSparse(types) ? ` AND ${SPARSE_TYPES_SQL}` : ""} AND type = ANY($5)`;
  return `SELECT seq, id, at, type, parent_id, payload::text FROM ${s}.session_events ` +
    `WHERE session_id = $1 AND seq >= $2 AND seq <= $3${typed} ORDER BY seq LIMIT $4`;
}

/**
 * The sessions of schema `s` (quoted) holding an event of the sparse types `$1` (an array) with ids greater than `$2`
 * (`''` for all), sorted, at most `$3` (`NULL` for no limit): one range scan of {@linkcode SPARSE_INDEX}, whose
 * condition the query carries verbatim, stopping at the limit.
 */
export function listTypedQuery(s: string): string {
  return `SELECT DISTINCT session_id FROM ${s}.session_events WHERE ${SPARSE_TYPES_SQL} AND type = ANY($1) ` +
    "AND session_id > $2 ORDER BY session_id LIMIT $3";
}

/**
 * The sessions of schema `s` (quoted) with ids greater than `$1` (`''` for all), sorted, at most `$2` (`NULL` for no
 * limit): a range scan of the heads' primary key, stopping at the limit.
 */
export function listQuery(s: string): string {
  return `SELECT session_id FROM ${s}.session_heads WHERE head > 0 AND session_id > $1 ` +
    "ORDER BY session_id LIMIT $2";
}

/** The schema version this code writes and reads. */
export const SCHEMA_VERSION: number = MIGRATIONS.length;

/** A schema name: a plain lower-case SQL identifier (it is interpolated, quoted, into statements). */
export const SCHEMA_NAME: RegExp = /^[a-z_][a-z0-9_]{0,62}$/;

/** The schema name quoted as an identifier. */
export function quoted(schema: string): string {
  return `"${schema}"`;
}

/**
 * Creates the schema or upgrades it to {@linkcode SCHEMA_VERSION}, and creates {@linkcode SPARSE_INDEX} when
 * missing, under a transaction-scoped advisory lock so that nodes booting together migrate once. Returns the
 * version found before migrating (0 for a new schema).
 *
 * @throws {TerretError} `StoreSchemaNewer` when the stored version is newer than this code's
 */
export async function migrate(sql: Sql, schema: string, where: string): Promise<number> {
  const s = quoted(schema);
  return await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext(${`terret.schema:${schema}`}))`;
    await tx.unsafe(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await tx.unsafe(
      `CREATE TABLE IF NOT EXISTS ${s}.terret_schema (one boolean PRIMARY KEY DEFAULT true CHECK (one), ` +
        "version integer NOT NULL)",
    );
    const rows = await tx.unsafe(`SELECT version FROM ${s}.terret_schema`);
    const found = Number(rows[0]?.version ?? 0);
    if (found > SCHEMA_VERSION) {
      throw new TerretError(
        "StoreSchemaNewer",
        `Cannot open the PostgreSQL session store ${where}: schema "${schema}" is version ${found}, newer than ` +
          `this Terret's ${SCHEMA_VERSION} (upgrade Terret; never downgrade the schema)`,
        { details: { schema, version: found, supported: SCHEMA_VERSION } },
      );
    }
    for (let version = found; version < SCHEMA_VERSION; version++) {
      await tx.unsafe(MIGRATIONS[version]!.replaceAll("{s}", s));
    }
    // Looked up first: CREATE INDEX takes a lock that holds appends back even when the index exists.
    const indexed = await tx.unsafe("SELECT to_regclass($1) IS NOT NULL AS found", [
      `${s}.session_events_sparse_v1`,
    ]);
    if (indexed[0]?.found !== true) await tx.unsafe(SPARSE_INDEX.replaceAll("{s}", s));
    if (found !== SCHEMA_VERSION) {
      await tx.unsafe(
        `INSERT INTO ${s}.terret_schema (version) VALUES ($1) ON CONFLICT (one) DO UPDATE SET version = $1`,
        [SCHEMA_VERSION],
      );
    }
    return found;
  });
}

/** A database URL without its password (in the authority or a `password` parameter), for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = "";
    parsed.searchParams.delete("password");
    return parsed.toString();
  } catch {
    return "(an unparseable URL)";
  }
}
