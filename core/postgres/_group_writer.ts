/**
 * The PostgreSQL store's write path: one group commit as one transaction in two pipelined round trips on the writer
 * connection, fenced appends checked against the agents' lease tokens, and the `NOTIFY` of the heads advanced.
 * Internal to the PostgreSQL store.
 *
 * @module
 */
import type postgres from "postgres";
import type { Sql } from "postgres";
import { TerretError } from "../errors.ts";
import { envelopeOf, type EventDraft, type SessionEvent } from "../sessions/envelope.ts";
import { sessionExists, sessionNotFound } from "../sessions/_store_support.ts";
import type { Outcome } from "./_async_group.ts";

/** A queued append: the draft and, for a fenced append, the lease's token it was made under. */
export interface Append {
  readonly draft: EventDraft;
  readonly token: number | undefined;
}

/** Options for {@linkcode PostgresSessionStore.open}. */
/** What runs statements: the pool, a reserved connection or a transaction. */
export type Runner = Pick<Sql, "unsafe">;

/** Writes groups of appends on one connection. */
export class GroupWriter {
  readonly #connect: () => Sql;
  readonly #timeoutMs: number;
  #writer: Sql;
  readonly #s: string;
  readonly #channel: string;
  readonly #encode: (heads: readonly (readonly [string, number])[]) => string[];
  readonly #node: string;

  /**
   * @param connect makes a client of one connection (`max: 1`), so `BEGIN` and `COMMIT` frame the statements between
   *   them; called again to replace a client a group commit gave up on
   * @param timeoutMs how long a group commit may wait for PostgreSQL (a query for a connection that cannot be made
   *   waits for one), after which its client is destroyed (rejecting what it holds) and replaced
   * @param quotedSchema the schema, quoted
   * @param channel the `NOTIFY` channel
   * @param encode the notification payloads for the heads a group advanced
   * @param node this process's node id, stored with every event it appends
   */
  constructor(
    connect: () => Sql,
    timeoutMs: number,
    quotedSchema: string,
    channel: string,
    encode: (heads: readonly (readonly [string, number])[]) => string[],
    node: string,
  ) {
    this.#connect = connect;
    this.#timeoutMs = timeoutMs;
    this.#writer = connect();
    this.#s = quotedSchema;
    this.#channel = channel;
    this.#encode = encode;
    this.#node = node;
  }

  /**
   * One group, one transaction, two round trips on the writer connection: `BEGIN`, the head rows of created sessions
   * inserted when missing, and
   * every head of the group locked (`FOR UPDATE`, in session id order so writers never deadlock) with the
   * transaction's id; then the seqs assigned here, and the heads' update, the events' insert, the `NOTIFY` and
   * `COMMIT` sent together. Each write of the second trip names the transaction id and writes nothing outside that
   * transaction, and its row counts are checked, so a connection lost between the trips (the second then landing on
   * a new connection) stores nothing rather than writing unlocked. A statement that fails aborts the transaction, so
   * the `COMMIT` behind it rolls back.
   */
  async commit(
    appends: readonly Append[],
  ): Promise<{ outcomes: Outcome<SessionEvent>[]; committed: SessionEvent[] }> {
    const writer = this.#writer;
    let expired = false;
    const timer = setTimeout(() => {
      expired = true;
      if (this.#writer === writer) this.#writer = this.#connect();
      void writer.end({ timeout: 0 }).catch(() => {});
    }, this.#timeoutMs);
    try {
      return await this.#commitOn(writer, appends);
    } catch (error) {
      if (!expired) throw error;
      throw new Error(`PostgreSQL did not answer within ${this.#timeoutMs} ms`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes the writer connection. */
  end(): Promise<void> {
    return this.#writer.end({ timeout: 5 });
  }

  async #commitOn(
    writer: Sql,
    appends: readonly Append[],
  ): Promise<{ outcomes: Outcome<SessionEvent>[]; committed: SessionEvent[] }> {
    const batch = appends.map((append) => append.draft);
    const ids = [...new Set(batch.map((draft) => draft.session_id))].sort();
    const fenced = [
      ...new Set(appends.filter((a) => a.token !== undefined).map((a) => a.draft.session_id)),
    ].sort();
    // Head rows are created only for sessions a draft creates: an `existing` draft without one is SessionNotFound.
    const created = [
      ...new Set(batch.filter((draft) => draft.expect === "new").map((draft) => draft.session_id)),
    ].sort();
    const s = this.#s;
    const outcomes: Outcome<SessionEvent>[] = [];
    const committed: SessionEvent[] = [];
    let open = false;
    try {
      const [, , locked, leased] = await Promise.all([
        writer.unsafe("BEGIN").then(() => open = true),
        created.length === 0 ? Promise.resolve() : prepared(
          writer,
          `INSERT INTO ${s}.session_heads (session_id, head) SELECT id, 0 FROM unnest($1::text[]) AS id ` +
            "ORDER BY id ON CONFLICT DO NOTHING",
          [created],
        ),
        prepared(
          writer,
          `SELECT session_id, head, txid_current()::text FROM ${s}.session_heads ` +
            "WHERE session_id = ANY($1::text[]) ORDER BY session_id FOR UPDATE",
          [ids],
        ).values(),
        fenced.length === 0 ? Promise.resolve([]) : prepared(
          writer,
          `SELECT agent_id, token::text FROM ${s}.agent_leases WHERE agent_id = ANY($1::text[]) ` +
            "ORDER BY agent_id FOR SHARE",
          [fenced],
        ).values(),
      ]);
      const tokens = new Map<string, number>(leased.map((row) => [row[0], Number(row[1])]));
      const heads = new Map<string, number>(locked.map((row) => [row[0], Number(row[1])]));
      const txid = String(locked[0]?.[2]);
      const payloads: string[] = [];
      const fencing: (number | null)[] = [];
      for (const { draft, token } of appends) {
        const head = heads.get(draft.session_id) ?? 0;
        if (token !== undefined && tokens.get(draft.session_id) !== token) {
          outcomes.push({
            ok: false,
            error: staleToken(draft.session_id, token, tokens.get(draft.session_id)),
          });
          continue;
        }
        if (draft.expect === "new" && head > 0) {
          outcomes.push({ ok: false, error: sessionExists(draft.session_id) });
          continue;
        }
        if (draft.expect === "existing" && head === 0) {
          outcomes.push({ ok: false, error: sessionNotFound(draft.session_id) });
          continue;
        }
        const event = envelopeOf(draft, head + 1);
        heads.set(draft.session_id, head + 1);
        committed.push(event);
        payloads.push(draft.payload_json);
        fencing.push(token ?? null);
        outcomes.push({ ok: true, value: event });
      }
      if (committed.length === 0) {
        open = false;
        await writer.unsafe("ROLLBACK");
        return { outcomes, committed };
      }
      const advanced = [...new Set(committed.map((event) => event.session_id))]
        .map((id): [string, number] => [id, heads.get(id)!]);
      const [updated, inserted, , end] = await Promise.all([
        prepared(
          writer,
          `UPDATE ${s}.session_heads AS h SET head = v.head FROM unnest($1::text[], $2::bigint[]) ` +
            "AS v(session_id, head) WHERE h.session_id = v.session_id AND txid_current()::text = $3",
          [advanced.map((a) => a[0]), advanced.map((a) => a[1]), txid],
        ),
        this.insert(writer, committed, payloads, txid, fencing),
        this.notify(writer, advanced, txid),
        writer.unsafe("COMMIT"),
      ]);
      open = false;
      // A COMMIT of a transaction a statement aborted answers ROLLBACK (Promise.all has thrown then); writes that
      // landed outside the transaction wrote nothing.
      if (
        end.command !== "COMMIT" || updated.count !== advanced.length ||
        inserted.count !== committed.length
      ) {
        throw new Error(
          "the connection was lost in the middle of the transaction; nothing was written",
        );
      }
    } catch (error) {
      if (open) await writer.unsafe("ROLLBACK").catch(() => {});
      throw error;
    }
    return { outcomes, committed };
  }

  /**
   * Inserts events in one statement (arrays unnested server-side), each stored with this node and its fencing token
   * (`fencing[i]`, NULL when absent or unfenced); with `txid`, only inside that transaction (outside it, none).
   */
  insert(
    tx: Runner,
    events: readonly SessionEvent[],
    payloads: readonly string[],
    txid?: string,
    fencing?: readonly (number | null)[],
  ): postgres.PendingQuery<postgres.Row[]> {
    return prepared(
      tx,
      `INSERT INTO ${this.#s}.session_events ` +
        "(session_id, seq, id, at, type, parent_id, payload, node, fencing_token) " +
        "SELECT session_id, seq, id, at, type, parent_id, payload::json, $9::text, fencing_token " +
        "FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], " +
        "$10::bigint[]) AS v(session_id, seq, id, at, type, parent_id, payload, fencing_token) " +
        "WHERE $8::text IS NULL OR txid_current()::text = $8",
      [
        events.map((e) => e.session_id),
        events.map((e) => e.seq),
        events.map((e) => e.id),
        events.map((e) => e.at),
        events.map((e) => e.type),
        events.map((e) => e.parent_id),
        payloads as string[],
        txid ?? null,
        this.#node,
        events.map((_, i) => fencing?.[i] ?? null),
      ],
    );
  }

  /** `NOTIFY`s the heads a transaction advanced (delivered on commit; ids and seqs only, never payloads). */
  notify(tx: Runner, heads: readonly [string, number][], txid?: string): Promise<unknown> {
    const messages = this.#encode(heads);
    return prepared(
      tx,
      "SELECT pg_notify($1, m) FROM unnest($2::text[]) AS m WHERE $3::text IS NULL OR txid_current()::text = $3",
      [this.#channel, messages, txid ?? null],
    );
  }
}

/**
 * A statement as a named prepared statement (cached per connection): its parameter types are described once per
 * connection rather than before every execution, so pipelined statements cost one round trip together.
 */
export function prepared(
  sql: Runner,
  text: string,
  params: unknown[],
): postgres.PendingQuery<postgres.Row[]> {
  return sql.unsafe(text, params as never[], { prepare: true });
}

/** `StaleFencingToken`: an append under a lease another node has since acquired. */
function staleToken(agentId: string, token: number, current: number | undefined): TerretError {
  return new TerretError(
    "StaleFencingToken",
    `Cannot append to session "${agentId}" under fencing token ${token}: ${
      current === undefined
        ? "no lease was ever granted"
        : `the agent's lease is at token ${current}`
    } (another node holds the agent)`,
    { details: { session_id: agentId, token, current: current ?? null } },
  );
}
