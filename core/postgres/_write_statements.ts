/**
 * The PostgreSQL store's write statements: each writes one group of appends as a single statement, which PostgreSQL
 * commits on its own, so a group costs one round trip. Internal to the PostgreSQL store.
 *
 * @module
 */

/**
 * The statement that writes a group whose seqs the writer already knows: every draft appends to an existing session
 * whose head this writer committed last (its known heads), each session's drafts under one fencing token or
 * none, so each seq is its session's known head plus the draft's rank, computed by the writer (a single statement
 * commits on its own, so this is the whole transaction), in the schema `s`. Parameters: per draft its session id,
 * seq, id, time, type, parent id, payload text and fencing token (null when unfenced); the fenced session ids with
 * the token each is appended under; the node id recorded as each event's writer; the `NOTIFY` channel and the
 * notifications of the heads it advances.
 *
 * It share-locks the fenced sessions' lease rows and writes the whole group only when every one of their tokens is
 * current: then it inserts the drafts and `NOTIFY`s; otherwise it writes nothing, and the writer refuses the drafts
 * of the sessions whose token is stale (their lease is at another token, or was never granted) and runs the others
 * again. It reads no head: a known head below the session's
 * true head (another node appended since) makes the insert collide on `UNIQUE (session_id, seq)`, which aborts the
 * statement (SQLSTATE 23505), and the group runs again reading the heads.
 *
 * It answers rows `[kind, value, key]`: kind 1, each fenced session whose token is stale, with its current token
 * (null when no lease was ever granted); 4, the count of notifications sent (0 when a stale token held it back).
 */
export function knownStatement(s: string): string {
  return `WITH leases AS (
  SELECT agent_id, token FROM ${s}.agent_leases WHERE agent_id = ANY($9::text[]) ORDER BY agent_id FOR SHARE
), stale AS (
  SELECT f.agent_id, l.token FROM unnest($9::text[], $10::bigint[]) AS f(agent_id, token)
    LEFT JOIN leases l USING (agent_id) WHERE l.token IS DISTINCT FROM f.token
), inserted AS (
  INSERT INTO ${s}.session_events (session_id, seq, id, at, type, parent_id, payload, node, fencing_token)
  SELECT session_id, seq, id, at, type, parent_id, payload::json, $11::text, token
  FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[])
    AS e(session_id, seq, id, at, type, parent_id, payload, token)
  WHERE NOT EXISTS (SELECT 1 FROM stale)
), notified AS (
  SELECT pg_notify($12, m) FROM unnest($13::text[]) AS m WHERE NOT EXISTS (SELECT 1 FROM stale)
)
SELECT 1, token::text, agent_id FROM stale
UNION ALL SELECT 4, count(*)::text, NULL FROM notified`;
}

/**
 * The statement that writes a group whose drafts all append to existing sessions, each session's under one fencing
 * token or none (a single statement commits on its own, so this is the whole transaction), in the schema `s`.
 * Parameters: the group's session ids, sorted, with the number of drafts of each, its token (null when unfenced), its
 * notification part and its known head (null when not known); the fenced session ids; then per draft its session id,
 * its rank among its session's drafts (from 1), id, time, type, parent id and payload text; the `NOTIFY` channel, the
 * notification prefix, and the node id recorded as each event's writer (with its session's fencing token).
 *
 * It share-locks the fenced sessions' lease rows, takes each session that exists (it has a known head, or a head row
 * that says so) and whose token is current, inserts its drafts at the seqs that follow its head (the known head given,
 * else the head read: {@linkcode headOf}; a session with a known head costs no read of its own), and `NOTIFY`s the
 * heads advanced. It updates no head row: a head given or read below the
 * session's true head (another writer appended) makes the insert collide on `UNIQUE (session_id, seq)`, which aborts
 * the whole statement (SQLSTATE 23505), and the group runs again with the heads read. A session it did not take gets
 * nothing written.
 *
 * It answers rows `[kind, value, key]`: kind 1, each fenced session's current token; 2, each session advanced and
 * the head it found; 4 and 5, the counts of notifications and of events inserted.
 */
export function advanceStatement(s: string): string {
  return `WITH sessions AS (
  SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::int[], $5::bigint[])
    AS v(session_id, n, token, part, known)
), leases AS (
  SELECT agent_id, token FROM ${s}.agent_leases WHERE agent_id = ANY($6::text[]) ORDER BY agent_id FOR SHARE
), taken AS (
  SELECT v.session_id, coalesce(v.known, (SELECT ${headOf(s, "h")} FROM ${s}.session_heads h
    WHERE h.session_id = v.session_id AND h.head > 0)) AS base, v.n, v.part, v.token
  FROM sessions v LEFT JOIN leases l ON l.agent_id = v.session_id
  WHERE v.token IS NULL OR v.token = l.token
), heads AS (
  SELECT session_id, base, base + n AS head, part, token FROM taken WHERE base IS NOT NULL
), inserted AS (
  INSERT INTO ${s}.session_events (session_id, seq, id, at, type, parent_id, payload, node, fencing_token)
  SELECT e.session_id, h.base + e.rank, e.id, e.at, e.type, e.parent_id, e.payload::json, $16::text, h.token
  FROM unnest($7::text[], $8::bigint[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[])
    AS e(session_id, rank, id, at, type, parent_id, payload) JOIN heads h USING (session_id)
  RETURNING 1
), notified AS (
  SELECT pg_notify($14, $15 || ' ' || json_agg(json_build_array(session_id, head))::text) FROM heads GROUP BY part
)
SELECT 1, token::text, agent_id FROM leases
UNION ALL SELECT 2, base::text, session_id FROM heads
UNION ALL SELECT 4, count(*)::text, NULL FROM notified
UNION ALL SELECT 5, count(*)::text, NULL FROM inserted`;
}

/**
 * The statement that writes one group (a single statement commits on its own, so this is the whole transaction), in
 * the schema `s`. Parameters: the drafts' session ids, ids, times, types, parent ids, payload texts, expectations
 * (`new` or `existing`), and each one's fencing token (null when unfenced); the fenced session ids; every session id of
 * the group, sorted; the `NOTIFY` channel, the notification prefix, each session id's notification part, and the node
 * id recorded as each event's writer (with the draft's fencing token).
 *
 * It share-locks the fenced sessions' lease rows (an append under a token that is not current is not placed) and
 * locks, in session id order, the head rows of the sessions that already had events in its snapshot (each head read
 * as {@linkcode headOf} reads it); advances those
 * heads by the appends placed on them (an append that creates a session is refused there), creates the heads of the
 * sessions it creates (refusing appends before the first creating one), inserts the placed events at seqs counted
 * from the locked heads, and `NOTIFY`s the heads advanced. A session created by another writer after the snapshot is
 * left alone (its head is neither locked nor created), so nothing of it is written.
 *
 * It answers rows `[kind, ordinal, value, key]`: kind 0, each placed draft's 1-based ordinal and seq; 1, each fenced
 * session's current token; 2, each session written; 3, each session's head in the snapshot.
 */
export function appendStatement(s: string): string {
  return `WITH input AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
    $8::bigint[]) WITH ORDINALITY AS v(session_id, id, at, type, parent_id, payload, expect, token, ord)
), leases AS (
  SELECT agent_id, token FROM ${s}.agent_leases WHERE agent_id = ANY($9::text[]) ORDER BY agent_id FOR SHARE
), seen AS (
  SELECT h.session_id, ${
    headOf(s, "h")
  } AS head FROM ${s}.session_heads h WHERE h.session_id = ANY($10::text[])
), checked AS (
  SELECT i.*, i.expect = 'new' AS is_new, i.token IS NULL OR i.token = l.token AS ok FROM input i LEFT JOIN leases l ON l.agent_id = i.session_id
), opened AS (
  SELECT c.*, min(c.ord) FILTER (WHERE c.ok AND c.is_new) OVER (PARTITION BY c.session_id) AS opener FROM checked c
), fates AS (
  SELECT o.*, o.ok AND NOT o.is_new AS if_open,
    coalesce(o.ok AND o.ord >= o.opener AND (o.ord = o.opener OR NOT o.is_new), false) AS if_new
  FROM opened o
), counted AS (
  SELECT f.*, count(*) FILTER (WHERE f.if_open) OVER w AS rank_open, count(*) FILTER (WHERE f.if_new) OVER w AS rank_new
  FROM fates f WINDOW w AS (PARTITION BY f.session_id ORDER BY f.ord)
), totals AS (
  SELECT session_id, max(rank_open) AS n_open, max(rank_new) AS n_new FROM counted GROUP BY session_id
), locked AS (
  SELECT h.session_id, ${headOf(s, "h")} AS head FROM ${s}.session_heads h
  WHERE h.session_id = ANY($10::text[]) AND h.head > 0 ORDER BY h.session_id FOR UPDATE
), advanced AS (
  UPDATE ${s}.session_heads AS h SET head = l.head + t.n_open FROM locked l JOIN totals t USING (session_id)
  WHERE h.session_id = l.session_id AND t.n_open > 0
  RETURNING h.session_id, l.head AS base, h.head
), created AS (
  INSERT INTO ${s}.session_heads AS h (session_id, head)
  SELECT t.session_id, t.n_new FROM totals t
  WHERE t.n_new > 0 AND NOT EXISTS (SELECT 1 FROM seen WHERE seen.session_id = t.session_id AND seen.head > 0)
  ORDER BY t.session_id
  ON CONFLICT (session_id) DO UPDATE SET head = excluded.head WHERE h.head = 0
  RETURNING h.session_id, 0::bigint AS base, h.head
), heads AS (
  SELECT * FROM advanced UNION ALL SELECT * FROM created
), placed AS (
  SELECT c.ord, c.session_id, c.id, c.at, c.type, c.parent_id, c.payload, c.token,
    h.base + CASE WHEN h.base = 0 THEN c.rank_new ELSE c.rank_open END AS seq
  FROM counted c JOIN heads h USING (session_id)
  WHERE CASE WHEN h.base = 0 THEN c.if_new ELSE c.if_open END
), inserted AS (
  INSERT INTO ${s}.session_events (session_id, seq, id, at, type, parent_id, payload, node, fencing_token)
  SELECT session_id, seq, id, at, type, parent_id, payload::json, $14::text, token FROM placed
  RETURNING 1
), notified AS (
  SELECT pg_notify($11, $12 || ' ' || json_agg(json_build_array(h.session_id, h.head))::text)
  FROM heads h JOIN unnest($10::text[], $13::int[]) AS p(session_id, part) USING (session_id) GROUP BY p.part
)
SELECT 0, ord::int, seq::text, NULL::text FROM placed
UNION ALL SELECT 1, NULL, token::text, agent_id FROM leases
UNION ALL SELECT 2, NULL, NULL, session_id FROM heads
UNION ALL SELECT 3, NULL, head::text, session_id FROM seen
UNION ALL SELECT 4, count(*)::int, NULL, NULL FROM notified
UNION ALL SELECT 5, count(*)::int, NULL, NULL FROM inserted`;
}

/**
 * The SQL expression of a session's head, for its `session_heads` row aliased `h` in the schema `s`: the greater of
 * the row's `head` and the session's last seq. The row's `head` is set when a session is created or imported and
 * advanced by the general statement, not by the lean one, so it is a lower bound; the last seq comes from the
 * `(session_id, seq)` index. (Read in a statement's snapshot: a head another writer committed since is missed, and
 * the insert that follows collides on `UNIQUE (session_id, seq)` rather than leave a gap.)
 */
export function headOf(s: string, h: string): string {
  return `greatest(${h}.head, coalesce((SELECT e.seq FROM ${s}.session_events e WHERE e.session_id = ${h}.session_id ` +
    "ORDER BY e.seq DESC LIMIT 1), 0))";
}

/** A PostgreSQL array literal of `values` (each quoted and escaped; `null` for NULL). */
export function arrayLiteral(values: readonly (string | null)[]): string {
  let out = "{";
  for (let i = 0; i < values.length; i++) {
    const value = values[i] ?? null;
    if (i > 0) out += ",";
    out += value === null ? "NULL" : `"${value.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
  }
  return out + "}";
}
