/**
 * The PostgreSQL session store over postgres.js: the fleet's shared store. Seqs are assigned inside the write
 * transaction under a row lock on the session's head, `UNIQUE (session_id, seq)` is the last line of defence, appends
 * are group-committed (one statement, its own transaction, per group, on a connection of its own), and every commit
 * `NOTIFY`s the session ids and heads it advanced so other processes' streams tail it live.
 *
 * @module
 */
import postgres, { type Sql } from "postgres";
import type { Logger } from "@terret/hames";
import { TerretError } from "../errors.ts";
import type { EventDraft, SessionEvent } from "../sessions/envelope.ts";
import {
  checkImport,
  checkSignal,
  CommitListeners,
  listPage,
  missingRow,
  readBounds,
  rowCorrupt,
  sessionExists,
  storeClosed,
} from "../sessions/_store_support.ts";
import type {
  CommitListener,
  EventJson,
  RemoteCommitListener,
  SessionStore,
  StoreJsonReadOptions,
  StoreListOptions,
  StoreReadOptions,
  StoreStats,
} from "../sessions/store.ts";
import { AsyncGroupCommit, type Outcome } from "./_async_group.ts";
import {
  listQuery,
  listTypedQuery,
  migrate,
  quoted,
  rangeQuery,
  redactUrl,
  SCHEMA_NAME,
} from "./_schema.ts";
import { allSparse } from "../sessions/_sparse_types.ts";
import { headOf } from "./_write_statements.ts";
import { RemoteHeads } from "./_remote_heads.ts";
import { type Lease, PostgresLeases } from "./leases.ts";
import { type Append, GroupWriter, prepared } from "./_group_writer.ts";

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
  /**
   * How long a group commit may wait for PostgreSQL, in milliseconds (default 15,000): while the server is down, an
   * append fails after this rather than waiting for it to come back.
   */
  readonly commitTimeoutMs?: number;
  /**
   * How long a transaction of this store may wait on this process, in milliseconds, before PostgreSQL ends its
   * connection (`idle_in_transaction_session_timeout`; default 15,000). A group commit holds its sessions' head rows
   * and their agents' lease rows locked between its two round trips: a process paused or stalled there (SIGSTOP, a
   * partition) would keep every other node from taking its agents over until it resumes. The fleet sets it to the
   * lease ttl.
   */
  readonly idleInTransactionMs?: number;
  /** Whether to `LISTEN` for other processes' commits (default true). */
  readonly listen?: boolean;
  /** Where listener failures and unreadable rows are reported. */
  readonly logger?: Logger;
}

/** Default `max_bytes` and `limit` of `readJson`. */
const JSON_PAGE_BYTES = 256 * 1024;
const JSON_PAGE_EVENTS = 1000;
const READ_PAGE = 5000;

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
  readonly #writes: GroupWriter;
  /** Sessions whose appends are fenced (their agents' leases are held here), by session id. */
  readonly #fences = new Map<string, Fence>();

  private constructor(
    sql: Sql,
    writer: () => Sql,
    node: string,
    schema: string,
    options: PostgresStoreOptions,
  ) {
    this.node = node;
    this.url = redactUrl(options.url);
    this.schema = schema;
    const where = `"${this.url}"`;
    this.#sql = sql;
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
    this.#writes = new GroupWriter(
      writer,
      options.commitTimeoutMs ?? 15_000,
      this.#s,
      this.#channel,
      this.#remote,
      node,
    );
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
        connection: {
          application_name: `terret ${node}`.slice(0, 63),
          idle_in_transaction_session_timeout: options.idleInTransactionMs ?? 15_000,
        },
      });
    const sql = client(options.poolSize ?? 4);
    try {
      await migrate(sql, schema, where);
      const store = new PostgresSessionStore(sql, () => client(1), node, schema, options);
      if (options.listen ?? true) await store.#listen();
      return store;
    } catch (error) {
      await sql.end({ timeout: 0 }).catch(() => {});
      if (error instanceof TerretError) throw error;
      throw failed(`open the PostgreSQL session store ${where}`, error);
    }
  }

  append(draft: EventDraft): Promise<SessionEvent> {
    if (this.#closing !== undefined) return Promise.reject(storeClosed(this.kind));
    const fence = this.#fences.get(draft.session_id);
    if (fence === undefined) return this.#group.submit({ draft, token: undefined });
    if (fence.stale !== undefined) return Promise.reject(fence.stale);
    const appended = this.#group.submit({ draft, token: fence.token });
    appended.catch((error) => {
      if (!(error instanceof TerretError && error.code === "StaleFencingToken")) return;
      if (fence.stale !== undefined) return;
      fence.stale = error;
      fence.onStale(error);
    });
    return appended;
  }

  /**
   * Routes every later {@linkcode append} to `sessionId` through {@linkcode appendFenced} under `lease` until the
   * returned function is called (the agents service fences the sessions whose leases this node holds). The first
   * append refused with `StaleFencingToken` calls `onStale` once; every later append to the session then rejects at
   * once with the same error, so nothing more of this node reaches the session.
   */
  fence(
    sessionId: string,
    lease: Pick<Lease, "token">,
    onStale: (error: TerretError) => void,
  ): () => void {
    const fence: Fence = { token: lease.token, stale: undefined, onStale };
    this.#fences.set(sessionId, fence);
    return () => {
      if (this.#fences.get(sessionId) === fence) this.#fences.delete(sessionId);
    };
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
          this.#writes.insert(tx, events, events.map((event) => JSON.stringify(event.payload))),
          this.#writes.notify(tx, [[id, events.length]]),
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
    const query = rangeQuery(this.#s, types);
    const out: SessionEvent[] = [];
    let next = from;
    for (;;) {
      if (this.#closing !== undefined) throw storeClosed(this.kind);
      checkSignal(options.signal);
      const want = Math.min(READ_PAGE, limit - out.length);
      const rows = await this.#query<Row>(
        query,
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
      `SELECT ${headOf(this.#s, "h")} FROM ${this.#s}.session_heads h WHERE h.session_id = $1`,
      [sessionId],
      `read the head of session "${sessionId}"`,
    );
    return rows.length === 0 ? 0 : Number(rows[0]![0]);
  }

  /** One query costing the page: a range scan from `after` (the heads, or the sparse index) that stops at `limit`. */
  async list(options: StoreListOptions = {}): Promise<string[]> {
    if (this.#closing !== undefined) throw storeClosed(this.kind);
    const page = listPage(options);
    // Text cannot hold NUL. No session id holds it either, so the ids after a bound are those after its part before
    // the first NUL: the bound is cut there, and lists the same.
    const after = page.after?.split("\0", 1)[0] ?? "";
    const limit = page.limit ?? null;
    // Sparse types alone are answered from their index; any other list from the heads (a superset, page by page).
    const types = options.types;
    const rows = types !== undefined && allSparse(types)
      ? await this.#query<[string]>(
        listTypedQuery(this.#s),
        [types, after, limit],
        "list sessions by type",
      )
      : await this.#query<[string]>(listQuery(this.#s), [after, limit], "list sessions");
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
      await Promise.all([this.#sql.end({ timeout: 5 }), this.#writes.end()]);
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

  /** One group, one transaction (see {@linkcode GroupWriter.commit}); listeners hear each event once it is durable. */
  async #commit(appends: readonly Append[]): Promise<Outcome<SessionEvent>[]> {
    let result: { outcomes: Outcome<SessionEvent>[]; committed: SessionEvent[] };
    try {
      result = await this.#writes.commit(appends);
    } catch (error) {
      throw failed(`append to the PostgreSQL session store ${this.#where}`, error);
    }
    for (const event of result.committed) this.#listeners.notify(event);
    return result.outcomes;
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

/** A fenced session: the token its appends carry, and the refusal once one was refused. */
interface Fence {
  readonly token: number;
  stale: TerretError | undefined;
  readonly onStale: (error: TerretError) => void;
}
