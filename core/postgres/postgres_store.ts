/**
 * The PostgreSQL session store over postgres.js: the fleet's shared store. Seqs are assigned inside the write
 * transaction under a row lock on the session's head, `UNIQUE (session_id, seq)` is the last line of defence, appends
 * are group-committed (one transaction per group, its statements pipelined on one connection), and every commit
 * `NOTIFY`s the session ids and heads it advanced so other processes' streams tail it live.
 *
 * @module
 */
import postgres, { type Sql } from "postgres";
import type { Logger } from "@terret/hames";
import { TerretError } from "../errors.ts";
import { envelopeOf, type EventDraft, type SessionEvent } from "../sessions/envelope.ts";
import {
  checkImport,
  checkSignal,
  CommitListeners,
  missingRow,
  readBounds,
  rowCorrupt,
  sessionExists,
  sessionNotFound,
  storeClosed,
} from "../sessions/_store_support.ts";
import type {
  CommitListener,
  EventJson,
  RemoteCommitListener,
  SessionStore,
  StoreJsonReadOptions,
  StoreReadOptions,
  StoreStats,
} from "../sessions/store.ts";
import { AsyncGroupCommit, type Outcome } from "./_async_group.ts";
import { migrate, quoted, redactUrl, SCHEMA_NAME } from "./_schema.ts";
import { RemoteHeads } from "./_remote_heads.ts";
import { type Lease, PostgresLeases } from "./leases.ts";

/** A queued append: the draft and, for a fenced append, the lease's token it was made under. */
interface Append {
  readonly draft: EventDraft;
  readonly token: number | undefined;
}

/** Options for {@linkcode PostgresSessionStore.open}. */
export interface PostgresStoreOptions {
  /** The database URL (`postgres://user:password@host:port/db`). */
  readonly url: string;
  /** The schema the store's tables live in (default `terret`; created when missing). */
  readonly schema?: string;
  /** The most connections in the pool (default 4; one more listens for other nodes' commits). */
  readonly poolSize?: number;
  /** The most events in one transaction (default 1000). */
  readonly maxGroupEvents?: number;
  /** The most payload bytes in one transaction (default 8 MiB). */
  readonly maxGroupBytes?: number;
  /** Seconds to wait for a connection (default 10). */
  readonly connectTimeoutSeconds?: number;
  /** This process's id in the fleet (default `node-` and 8 random hex digits): its connections' application name. */
  readonly node?: string;
  /** Whether to `LISTEN` for other processes' commits (default true). */
  readonly listen?: boolean;
  /** Where listener failures and unreadable rows are reported. */
  readonly logger?: Logger;
}

/** Default `max_bytes` and `limit` of `readJson`. */
const JSON_PAGE_BYTES = 256 * 1024;
const JSON_PAGE_EVENTS = 1000;
const READ_PAGE = 5000;

/** What runs statements: the pool, a reserved connection or a transaction. */
type Runner = Pick<Sql, "unsafe">;

type Row = [string, string, string, string, string | null, string];

/**
 * A {@linkcode SessionStore} in a PostgreSQL schema, shared by any number of processes.
 *
 * @example
 * ```ts ignore
 * import { PostgresSessionStore } from "@terret/core/postgres";
 * const store = await PostgresSessionStore.open({ url: "postgres://terret@127.0.0.1:5432/terret" });
 * console.log(await store.head("nobody")); // 0
 * await store.close();
 * ```
 */
export class PostgresSessionStore implements SessionStore {
  readonly kind = "postgres";
  /** This process's id in the fleet. */
  readonly node: string;
  /** The database URL without its password. */
  readonly url: string;
  /** The schema holding the tables. */
  readonly schema: string;
  readonly #sql: Sql;
  readonly #where: string;
  readonly #s: string;
  readonly #channel: string;
  /** This store instance's id in notifications, so it skips its own. */
  readonly #origin = crypto.randomUUID();
  readonly #logger: Logger | undefined;
  readonly #listeners: CommitListeners;
  readonly #remote: RemoteHeads;
  readonly #group: AsyncGroupCommit<Append, SessionEvent>;
  /** Agents' leases with their fencing tokens. */
  readonly leases: PostgresLeases;
  #closing: Promise<void> | undefined;
  /** The one connection group commits are pipelined on (a client of its own, reconnecting by itself). */
  readonly #writer: Sql;

  private constructor(
    sql: Sql,
    writer: Sql,
    node: string,
    schema: string,
    options: PostgresStoreOptions,
  ) {
    this.node = node;
    this.url = redactUrl(options.url);
    this.schema = schema;
    const where = `"${this.url}"`;
    this.#sql = sql;
    this.#writer = writer;
    this.#where = where;
    this.#s = quoted(schema);
    this.#channel = `terret_${schema}`;
    this.#logger = options.logger;
    this.#listeners = new CommitListeners((error) =>
      options.logger?.log("error", "A session commit listener failed", { error })
    );
    this.#remote = new RemoteHeads(this.#origin, options.logger);
    this.#group = new AsyncGroupCommit((batch) => this.#commit(batch), {
      maxItems: options.maxGroupEvents ?? 1000,
      maxBytes: options.maxGroupBytes ?? 8 * 1024 * 1024,
      sizeOf: (append) => append.draft.payload_json.length,
    });
    this.leases = new PostgresLeases(sql, this.#s);
  }

  /**
   * Connects, creates or upgrades the schema, and (unless `listen: false`) starts listening for other processes'
   * commits.
   *
   * @throws {TerretError} `StoreFailed` when the database cannot be reached (the message names the URL without its
   *   password), `StoreSchemaNewer` when the schema is newer than this code
   */
  static async open(options: PostgresStoreOptions): Promise<PostgresSessionStore> {
    const where = `"${redactUrl(options.url)}"`;
    const schema = options.schema ?? "terret";
    if (!SCHEMA_NAME.test(schema)) {
      throw new TerretError(
        "StoreFailed",
        `Cannot open the PostgreSQL session store ${where}: schema "${schema}" must match ${SCHEMA_NAME}`,
      );
    }
    const node = options.node ?? `node-${crypto.randomUUID().slice(0, 8)}`;
    const client = (max: number): Sql =>
      postgres(options.url, {
        max,
        connect_timeout: options.connectTimeoutSeconds ?? 10,
        idle_timeout: 60,
        onnotice: () => {},
        connection: { application_name: `terret ${node}`.slice(0, 63) },
      });
    const sql = client(options.poolSize ?? 4);
    const writer = client(1);
    try {
      await migrate(sql, schema, where);
      const store = new PostgresSessionStore(sql, writer, node, schema, options);
      if (options.listen ?? true) await store.#listen();
      return store;
    } catch (error) {
      await sql.end({ timeout: 0 }).catch(() => {});
      await writer.end({ timeout: 0 }).catch(() => {});
      if (error instanceof TerretError) throw error;
      throw failed(`open the PostgreSQL session store ${where}`, error);
    }
  }

  append(draft: EventDraft): Promise<SessionEvent> {
    if (this.#closing !== undefined) return Promise.reject(storeClosed(this.kind));
    return this.#group.submit({ draft, token: undefined });
  }

  /**
   * Appends under an agent's lease (the agent is the draft's session): refused with `StaleFencingToken`, nothing
   * appended, unless `lease.token` is the agent's current fencing token inside the write transaction. The lease row is
   * share-locked until the commit, so no append under an older token commits after a newer one was granted.
   */
  appendFenced(draft: EventDraft, lease: Pick<Lease, "token">): Promise<SessionEvent> {
    if (this.#closing !== undefined) return Promise.reject(storeClosed(this.kind));
    return this.#group.submit({ draft, token: lease.token });
  }

  async importSession(events: readonly SessionEvent[]): Promise<void> {
    if (this.#closing !== undefined) throw storeClosed(this.kind);
    const id = checkImport(events);
    const s = this.#s;
    try {
      await this.#sql.begin(async (tx) => {
        const [, rows] = await Promise.all([
          tx.unsafe(
            `INSERT INTO ${s}.session_heads (session_id, head) VALUES ($1, 0) ON CONFLICT DO NOTHING`,
            [id],
          ),
          tx.unsafe(`SELECT head FROM ${s}.session_heads WHERE session_id = $1 FOR UPDATE`, [id]),
        ]);
        if (Number(rows[0]!.head) > 0) throw sessionExists(id);
        await Promise.all([
          tx.unsafe(`UPDATE ${s}.session_heads SET head = $2 WHERE session_id = $1`, [
            id,
            events.length,
          ]),
          this.#insert(tx, events, events.map((event) => JSON.stringify(event.payload))),
          this.#notify(tx, [[id, events.length]]),
        ]);
      });
    } catch (error) {
      if (error instanceof TerretError) throw error;
      throw failed(`import "${id}" into the PostgreSQL session store ${this.#where}`, error);
    }
    for (const event of events) this.#listeners.notify(event);
  }

  async read(sessionId: string, options: StoreReadOptions = {}): Promise<SessionEvent[]> {
    const { from, to, limit } = readBounds(options);
    const types = options.types;
    const out: SessionEvent[] = [];
    let next = from;
    for (;;) {
      if (this.#closing !== undefined) throw storeClosed(this.kind);
      checkSignal(options.signal);
      const want = Math.min(READ_PAGE, limit - out.length);
      const rows = await this.#query<Row>(
        `SELECT seq, id, at, type, parent_id, payload::text FROM ${this.#s}.session_events ` +
          `WHERE session_id = $1 AND seq >= $2 AND seq <= $3${
            types === undefined ? "" : " AND type = ANY($5)"
          } ORDER BY seq LIMIT $4`,
        types === undefined ? [sessionId, next, to, want] : [sessionId, next, to, want, types],
        `read session "${sessionId}"`,
      );
      for (const row of rows) {
        const seq = Number(row[0]);
        if (types === undefined && seq !== next) {
          throw this.#corrupt(sessionId, next, missingRow(seq));
        }
        out.push({
          id: row[1],
          session_id: sessionId,
          seq,
          at: row[2],
          type: row[3],
          payload: this.#decode(sessionId, seq, row[5]),
          parent_id: row[4],
        });
        next = seq + 1;
      }
      if (rows.length < want || out.length >= limit) return out;
    }
  }

  /** Reads events as envelope JSON built around the stored payload text (a `json` column: validated on write). */
  async readJson(sessionId: string, options: StoreJsonReadOptions = {}): Promise<EventJson[]> {
    if (this.#closing !== undefined) throw storeClosed(this.kind);
    checkSignal(options.signal);
    const from = options.from_seq ?? 1;
    const maxBytes = options.max_bytes ?? JSON_PAGE_BYTES;
    const limit = options.limit ?? JSON_PAGE_EVENTS;
    readBounds({ from_seq: from, limit });
    const rows = await this.#query<Row>(
      `SELECT seq, id, at, type, parent_id, payload::text FROM ${this.#s}.session_events ` +
        "WHERE session_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3",
      [sessionId, from, limit],
      `read session "${sessionId}"`,
    );
    const out: EventJson[] = [];
    const session = JSON.stringify(sessionId);
    let bytes = 0;
    for (const row of rows) {
      const seq = Number(row[0]);
      if (seq !== from + out.length) {
        if (out.length > 0) break;
        throw this.#corrupt(sessionId, from, missingRow(seq));
      }
      const json = `{"id":${JSON.stringify(row[1])},"session_id":${session},"seq":${seq},"at":${
        JSON.stringify(row[2])
      },"type":${JSON.stringify(row[3])},"payload":${row[5]},"parent_id":${
        JSON.stringify(row[4])
      }}`;
      out.push({ seq, json });
      bytes += json.length;
      if (bytes >= maxBytes) break;
    }
    return out;
  }

  async head(sessionId: string, options: { readonly signal?: AbortSignal } = {}): Promise<number> {
    if (this.#closing !== undefined) throw storeClosed(this.kind);
    checkSignal(options.signal);
    const rows = await this.#query<[string]>(
      `SELECT head FROM ${this.#s}.session_heads WHERE session_id = $1`,
      [sessionId],
      `read the head of session "${sessionId}"`,
    );
    return rows.length === 0 ? 0 : Number(rows[0]![0]);
  }

  async list(options: { readonly signal?: AbortSignal } = {}): Promise<string[]> {
    if (this.#closing !== undefined) throw storeClosed(this.kind);
    checkSignal(options.signal);
    const rows = await this.#query<[string]>(
      `SELECT session_id FROM ${this.#s}.session_heads WHERE head > 0 ORDER BY session_id`,
      [],
      "list sessions",
    );
    return rows.map((row) => row[0]);
  }

  onCommit(listener: CommitListener): () => void {
    return this.#listeners.add(listener);
  }

  onRemoteCommit(listener: RemoteCommitListener): () => void {
    return this.#remote.add(listener);
  }

  stats(): StoreStats {
    return this.#group.stats();
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.#group.drain();
      await Promise.all([this.#sql.end({ timeout: 5 }), this.#writer.end({ timeout: 5 })]);
    })();
    return this.#closing;
  }

  async #listen(): Promise<void> {
    await this.#sql.listen(
      this.#channel,
      (payload) => this.#remote.received(payload),
      () => this.#remote.connected(),
    );
  }

  /**
   * One group, one transaction, two round trips on the writer connection: `BEGIN`, the missing head rows created and
   * every head of the group locked (`FOR UPDATE`, in session id order so writers never deadlock) with the
   * transaction's id; then the seqs assigned here, and the heads' update, the events' insert, the `NOTIFY` and
   * `COMMIT` sent together. Each write of the second trip names the transaction id and writes nothing outside that
   * transaction, and its row counts are checked, so a connection lost between the trips (the second then landing on
   * a new connection) stores nothing rather than writing unlocked. A statement that fails aborts the transaction, so
   * the `COMMIT` behind it rolls back.
   */
  async #commit(appends: readonly Append[]): Promise<Outcome<SessionEvent>[]> {
    const batch = appends.map((append) => append.draft);
    const ids = [...new Set(batch.map((draft) => draft.session_id))].sort();
    const fenced = [
      ...new Set(appends.filter((a) => a.token !== undefined).map((a) => a.draft.session_id)),
    ].sort();
    const s = this.#s;
    const writer = this.#writer;
    const outcomes: Outcome<SessionEvent>[] = [];
    const committed: SessionEvent[] = [];
    let open = false;
    try {
      const [, , locked, leased] = await Promise.all([
        writer.unsafe("BEGIN").then(() => open = true),
        prepared(
          writer,
          `INSERT INTO ${s}.session_heads (session_id, head) SELECT id, 0 FROM unnest($1::text[]) AS id ` +
            "ORDER BY id ON CONFLICT DO NOTHING",
          [ids],
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
        outcomes.push({ ok: true, value: event });
      }
      if (committed.length === 0) {
        open = false;
        await writer.unsafe("ROLLBACK");
        return outcomes;
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
        this.#insert(writer, committed, payloads, txid),
        this.#notify(writer, advanced, txid),
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
      throw failed(`append to the PostgreSQL session store ${this.#where}`, error);
    }
    for (const event of committed) this.#listeners.notify(event);
    return outcomes;
  }

  /**
   * Inserts events in one statement (arrays unnested server-side); with `txid`, only inside that transaction (outside
   * it, none).
   */
  #insert(
    tx: Runner,
    events: readonly SessionEvent[],
    payloads: readonly string[],
    txid?: string,
  ): postgres.PendingQuery<postgres.Row[]> {
    return prepared(
      tx,
      `INSERT INTO ${this.#s}.session_events (session_id, seq, id, at, type, parent_id, payload) ` +
        "SELECT session_id, seq, id, at, type, parent_id, payload::json FROM unnest($1::text[], $2::bigint[], " +
        "$3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) " +
        "AS v(session_id, seq, id, at, type, parent_id, payload) " +
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
      ],
    );
  }

  /** `NOTIFY`s the heads a transaction advanced (delivered on commit; ids and seqs only, never payloads). */
  #notify(tx: Runner, heads: readonly [string, number][], txid?: string): Promise<unknown> {
    const messages = this.#remote.encode(heads);
    return prepared(
      tx,
      "SELECT pg_notify($1, m) FROM unnest($2::text[]) AS m WHERE $3::text IS NULL OR txid_current()::text = $3",
      [this.#channel, messages, txid ?? null],
    );
  }

  async #query<R extends unknown[]>(
    text: string,
    params: unknown[],
    action: string,
  ): Promise<R[]> {
    try {
      return await prepared(this.#sql, text, params).values() as unknown as R[];
    } catch (error) {
      throw failed(`${action} from the PostgreSQL session store ${this.#where}`, error);
    }
  }

  /** A stored payload's value; `StoreCorrupt` (logged) when it is not JSON. */
  #decode(sessionId: string, seq: number, text: string): unknown {
    try {
      return JSON.parse(text);
    } catch {
      throw this.#corrupt(sessionId, seq, "its payload is not valid JSON");
    }
  }

  #corrupt(sessionId: string, seq: number, why: string): TerretError {
    const error = rowCorrupt(`the PostgreSQL store ${this.#where}`, sessionId, seq, why);
    this.#logger?.log("error", error.message, { code: error.code, session_id: sessionId, seq });
    return error;
  }
}

/**
 * A statement as a named prepared statement (cached per connection): its parameter types are described once per
 * connection rather than before every execution, so pipelined statements cost one round trip together.
 */
function prepared(
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

/** `StoreFailed` for a database failure, naming the PostgreSQL error (or connection fault) it came from. */
function failed(action: string, error: unknown): TerretError {
  if (error instanceof TerretError) return error;
  const code = (error as { code?: unknown })?.code;
  const message = error instanceof Error ? error.message : String(error);
  const why = typeof code === "string" && !message.includes(code)
    ? `${message} (${code})`
    : message;
  return new TerretError("StoreFailed", `Cannot ${action}: ${why}`, { cause: error });
}
