/**
 * The SQLite session store over `node:sqlite`: the embedded default. WAL, prepared statements,
 * `UNIQUE(session_id, seq)`, seqs assigned inside the write transaction, and group commit. The row that mounts it
 * (`terret-store-sqlite`) is in `sqlite_store_plugin.ts`.
 *
 * @module
 */
import type { Logger } from "@terret/hames";
import { TerretError } from "../errors.ts";
import { DatabaseSync } from "node:sqlite";
import { setImmediate } from "node:timers";
import { dirname, resolve } from "node:path";
import { closeSync, mkdirSync, openSync } from "node:fs";
import { envelopeOf, type EventDraft, type SessionEvent } from "./envelope.ts";
import { GroupCommit, type Settled } from "./_group_commit.ts";
import { DataVersionPoll } from "./_data_version_poll.ts";
import { allSparse } from "./_sparse_types.ts";
import {
  ensureSparseIndex,
  type JsonRow,
  type Row,
  SCHEMA,
  SqliteStatements,
} from "./_sqlite_statements.ts";
import {
  checkImport,
  checkSignal,
  CommitListeners,
  jsonBounds,
  type ListPage,
  listPage,
  missingRow,
  readBounds,
  rowCorrupt,
  sessionExists,
  sessionNotFound,
  storeClosed,
} from "./_store_support.ts";
import type {
  CommitListener,
  EventJson,
  RemoteCommitListener,
  SessionStore,
  StoreJsonReadOptions,
  StoreListOptions,
  StoreReadOptions,
  StoreStats,
} from "./store.ts";

/** Options for {@linkcode SqliteSessionStore.open}. */
export interface SqliteStoreOptions {
  /** The database file (created with its directory when missing), or `":memory:"`. */
  readonly path: string;
  /** `normal` (default: a commit survives a crash; the last ones may roll back on power loss) or `full`. */
  readonly synchronous?: "normal" | "full";
  /** The most events in one transaction (default 1000). */
  readonly maxGroupEvents?: number;
  /** The most payload bytes in one transaction (default 8 MiB). */
  readonly maxGroupBytes?: number;
  /** How long a write waits for another process's lock, in milliseconds (default 5000; it blocks). */
  readonly busyTimeoutMs?: number;
  /**
   * WAL pages after which a commit checkpoints the log into the database (default 10,000, about 40 MiB): a loop
   * commits a few small transactions per model step, and checkpointing (with its fsync) far less often than
   * SQLite's default of 1,000 pages cuts the cost of each commit by about a third, since a checkpoint writes each
   * page once however often it changed. The log is truncated back to 64 MiB at most after a checkpoint.
   */
  readonly walAutocheckpointPages?: number;
  /**
   * Rows fetched per synchronous query when reading (default 1000; the loop runs between pages). A typed read scans
   * at most four pages of seqs per query, however few of them match, unless it names sparse types alone: those are
   * sought through their index.
   */
  readonly readPageSize?: number;
  /**
   * The most session heads cached at once, least recently used dropped first (default 4096; a dropped head is read
   * from the database again on its next use), so a store of many sessions keeps a bounded cache.
   */
  readonly headCacheSessions?: number;
  /**
   * How often, in milliseconds, the store checks `PRAGMA data_version` for other processes' commits while a
   * remote-commit listener is registered (default 100; 0 turns it off): the bound on how late a live tail sees
   * another process's appends to the same file.
   */
  readonly crossProcessPollMs?: number;
  /** Where listener failures are reported. */
  readonly logger?: Logger;
}

/**
 * The seqs one typed query scans, in pages ({@linkcode SqliteStoreOptions.readPageSize}): the loop runs between
 * windows, so a typed read of a long session stalls it for a window's scan at most (about a millisecond at the
 * default page).
 */
const TYPED_SCAN_PAGES = 4;

/**
 * A {@linkcode SessionStore} in one SQLite file.
 *
 * Several processes may share the file: every write is a `BEGIN IMMEDIATE` transaction that reads the session's
 * head inside it, so two writers cannot collide (the live tail of `sessions.stream` only sees this process's
 * appends). `node:sqlite` is synchronous: each group commit blocks the event loop for its duration, bounded by
 * `maxGroupEvents`/`maxGroupBytes` and reported by {@linkcode SqliteSessionStore.stats}.
 *
 * @example
 * ```ts
 * import { SqliteSessionStore } from "@terret/core/sessions";
 * const store = SqliteSessionStore.open({ path: ":memory:" });
 * console.log(await store.head("nobody")); // 0
 * await store.close();
 * ```
 */
export class SqliteSessionStore implements SessionStore {
  readonly kind = "sqlite";
  readonly #path: string;
  readonly #db: DatabaseSync;
  readonly #sql: SqliteStatements;
  /** The average envelope JSON size of recent `readJson` pages: how many rows a page asks for. */
  #jsonSize = 1024;
  readonly #logger: Logger | undefined;
  /** Heads known as of `#version`; valid only while no other connection has committed. */
  readonly #heads = new Map<string, number>();
  readonly #maxHeads: number;
  #version = -1;
  readonly #page: number;
  readonly #listeners: CommitListeners;
  readonly #pollMs: number;
  readonly #poll: DataVersionPoll;
  readonly #group: GroupCommit<EventDraft, SessionEvent>;
  #closing: Promise<void> | undefined;

  private constructor(path: string, db: DatabaseSync, options: SqliteStoreOptions) {
    this.#path = path;
    this.#db = db;
    this.#sql = new SqliteStatements(db);
    this.#logger = options.logger;
    this.#page = options.readPageSize ?? 1000;
    this.#pollMs = options.crossProcessPollMs ?? 100;
    this.#poll = new DataVersionPoll(() => this.#readVersion(), this.#pollMs, options.logger);
    this.#maxHeads = options.headCacheSessions ?? 4096;
    this.#listeners = new CommitListeners((error) =>
      options.logger?.log("error", "A session commit listener failed", { error })
    );
    this.#group = new GroupCommit((batch) => this.#commit(batch), {
      maxItems: options.maxGroupEvents ?? 1000,
      maxBytes: options.maxGroupBytes ?? 8 * 1024 * 1024,
      sizeOf: (draft) => draft.payload_json.length,
    });
  }

  /**
   * Opens (creating) the database and its schema.
   *
   * @throws {TerretError} `StoreFailed` when the file cannot be opened or is not a Terret store
   */
  static open(options: SqliteStoreOptions): SqliteSessionStore {
    const path = options.path === ":memory:" ? options.path : resolve(options.path);
    const heads = options.headCacheSessions ?? 4096;
    if (!Number.isSafeInteger(heads) || heads < 1) {
      throw new TerretError(
        "StoreFailed",
        `Cannot open the SQLite session store "${path}": headCacheSessions must be a whole number of at least 1, got ${heads}`,
      );
    }
    try {
      if (path !== ":memory:") {
        // The store holds every tool output: its directory is the owner's alone (0700) and the file is created
        // 0600 before SQLite opens it, so the -wal and -shm files SQLite creates take the same mode.
        mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
        closeSync(openSync(path, "a", 0o600));
      }
      const db = new DatabaseSync(path);
      db.exec(`PRAGMA busy_timeout = ${Math.trunc(options.busyTimeoutMs ?? 5000)}`);
      db.exec("PRAGMA journal_mode = WAL");
      db.exec(`PRAGMA synchronous = ${options.synchronous === "full" ? "FULL" : "NORMAL"}`);
      db.exec(
        `PRAGMA wal_autocheckpoint = ${Math.trunc(options.walAutocheckpointPages ?? 10_000)}`,
      );
      db.exec("PRAGMA journal_size_limit = 67108864");
      db.exec(SCHEMA);
      ensureSparseIndex(db, path, options.logger);
      return new SqliteSessionStore(path, db, options);
    } catch (error) {
      throw failed(`open the SQLite session store "${path}"`, error);
    }
  }

  /** The database file. */
  get path(): string {
    return this.#path;
  }

  append(draft: EventDraft): Promise<SessionEvent> {
    if (this.#closing !== undefined) return Promise.reject(storeClosed(this.kind));
    return this.#group.submit(draft);
  }

  importSession(events: readonly SessionEvent[]): Promise<void> {
    if (this.#closing !== undefined) return Promise.reject(storeClosed(this.kind));
    const id = checkImport(events);
    try {
      this.#transaction(() => {
        if (this.#headOf(id) > 0) throw sessionExists(id);
        for (const event of events) {
          this.#sql.insertOne.run(
            id,
            event.seq,
            event.id,
            event.at,
            event.type,
            event.parent_id,
            JSON.stringify(event.payload),
          );
        }
      });
    } catch (error) {
      return Promise.reject(error instanceof TerretError ? error : failed(`import "${id}"`, error));
    }
    this.#remember(id, events.length);
    for (const event of events) this.#listeners.notify(event);
    return Promise.resolve();
  }

  async read(sessionId: string, options: StoreReadOptions = {}): Promise<SessionEvent[]> {
    const { from, to, limit } = readBounds(options);
    if (this.#closing !== undefined) throw storeClosed(this.kind);
    const types = options.types;
    const typed = types === undefined ? undefined : this.#sql.typedRange(types);
    const out: SessionEvent[] = [];
    let next = from;
    // A typed query scans a bounded window of seqs: a rare type in a long session would otherwise be one synchronous
    // scan of the whole session, blocking the event loop throughout (the page bounds matches, not rows scanned). A
    // sparse read seeks its matches through the index: it needs neither windows nor the head that ends them.
    const last = types === undefined || typed?.sparse === true
      ? to
      : Math.min(to, this.#headOf(sessionId));
    for (;;) {
      if (this.#closing !== undefined) throw storeClosed(this.kind);
      checkSignal(options.signal);
      const want = Math.min(this.#page, limit - out.length);
      const window = typed?.sparse === true
        ? last
        : Math.min(last, next + this.#page * TYPED_SCAN_PAGES - 1);
      const rows = (typed === undefined
        ? this.#sql.range.all(sessionId, next, to, want)
        : typed.statement.all(sessionId, next, window, ...typed.values, want)) as unknown as Row[];
      for (const row of rows) {
        if (types === undefined && row[0] !== next) {
          throw this.#corrupt(sessionId, next, missingRow(row[0]));
        }
        out.push({
          id: row[1],
          session_id: sessionId,
          seq: row[0],
          at: row[2],
          type: row[3],
          payload: this.#decode(sessionId, row[0], row[5]),
          parent_id: row[4],
        });
        next = row[0] + 1;
      }
      if (out.length >= limit) {
        return out;
      }
      if (rows.length < want) {
        // Untyped: the range is exhausted. Typed: this window is; the next one starts after it.
        if (types === undefined || window >= last) {
          return out;
        }
        next = window + 1;
      }
      await new Promise((resume) =>
        setImmediate(resume)
      );
    }
  }

  /**
   * Reads events as envelope JSON built around the stored payload text (validated by SQLite's `json_valid`, never
   * parsed), stopping at `max_bytes` (at least one event) or `limit` events. One synchronous query.
   */
  readJson(sessionId: string, options: StoreJsonReadOptions = {}): Promise<EventJson[]> {
    try {
      if (this.#closing !== undefined) throw storeClosed(this.kind);
      checkSignal(options.signal);
      const { from, maxBytes, limit } = jsonBounds(options);
      const out: EventJson[] = [];
      if (limit === 0) return Promise.resolve(out);
      const session = JSON.stringify(sessionId);
      let bytes = 0;
      let next = from;
      // Rows are fetched with `all` (far cheaper per row than `iterate`), as many as the running average event size
      // says fill the page; a short guess fetches again.
      for (;;) {
        const want = Math.max(
          1,
          Math.min(limit - out.length, Math.ceil((maxBytes - bytes) / this.#jsonSize)),
        );
        const rows = this.#sql.rangeJson.all(sessionId, next, want) as unknown as JsonRow[];
        for (const row of rows) {
          // A bad row ends the page before it; only a page that would start at it rejects.
          if (row[0] !== next || row[6] !== 1) {
            if (out.length > 0) return Promise.resolve(out);
            throw this.#corrupt(
              sessionId,
              next,
              row[0] !== next ? missingRow(row[0]) : "its payload is not valid JSON",
            );
          }
          const json = `{"id":${JSON.stringify(row[1])},"session_id":${session},"seq":${
            row[0]
          },"at":${JSON.stringify(row[2])},"type":${JSON.stringify(row[3])},"payload":${
            row[5]
          },"parent_id":${JSON.stringify(row[4])}}`;
          out.push({ seq: row[0], json });
          next++;
          bytes += json.length;
          if (bytes >= maxBytes) break;
        }
        if (out.length > 0) this.#jsonSize = Math.max(64, Math.ceil(bytes / out.length));
        if (rows.length < want || bytes >= maxBytes || out.length >= limit) break;
      }
      return Promise.resolve(out);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  head(sessionId: string): Promise<number> {
    if (this.#closing !== undefined) return Promise.reject(storeClosed(this.kind));
    if (this.#db.isTransaction) return Promise.resolve(this.#headOf(sessionId));
    // The cached head is trusted only while no other connection has committed (PRAGMA data_version).
    this.#syncVersion();
    let head = this.#heads.get(sessionId);
    if (head === undefined) {
      head = this.#headOf(sessionId);
      if (head > 0) this.#remember(sessionId, head);
    }
    return Promise.resolve(head);
  }

  /**
   * One synchronous query, costing the page: the plain list seeks once per id returned, the list by sparse types
   * scans their index from `after` until `limit` sessions are found.
   */
  list(options: StoreListOptions = {}): Promise<string[]> {
    if (this.#closing !== undefined) return Promise.reject(storeClosed(this.kind));
    let page: ListPage;
    try {
      page = listPage(options);
    } catch (error) {
      return Promise.reject(error);
    }
    const after = page.after ?? "";
    const limit = page.limit ?? -1;
    // Sparse types alone are answered from their index; any other list by every session (a superset, page by page).
    const types = options.types;
    const sparse = types !== undefined && allSparse(types) ? this.#sql.listSparse : undefined;
    const rows =
      (sparse === undefined
        ? this.#sql.list.all(after, limit)
        : sparse.all(JSON.stringify(types), after, limit)) as { session_id: string }[];
    return Promise.resolve(rows.map((row) => row.session_id));
  }

  onCommit(listener: CommitListener): () => void {
    return this.#listeners.add(listener);
  }

  /**
   * Reports other processes' commits to the file: while a listener is registered, `PRAGMA data_version` is read every
   * `crossProcessPollMs`, and a change is reported as "any session may have advanced" (`undefined`), so live tails
   * catch up from the file within that bound. Off (never called) with `crossProcessPollMs: 0` or `:memory:`.
   */
  onRemoteCommit(listener: RemoteCommitListener): () => void {
    if (this.#pollMs <= 0 || this.#path === ":memory:") return () => {};
    return this.#poll.add(listener);
  }

  stats(): StoreStats {
    return this.#group.stats();
  }

  /** How many session heads are cached (at most `headCacheSessions`). */
  get cachedHeads(): number {
    return this.#heads.size;
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#poll.stop();
      await this.#group.drain();
      this.#db.close();
    })();
    return this.#closing;
  }

  /** `PRAGMA data_version`: it changes when another connection commits to the file. */
  #readVersion(): number {
    return (this.#sql.dataVersion.get() as unknown as [number])[0];
  }

  /** A stored payload's value; `StoreCorrupt` (logged) when it is not JSON. */
  #decode(sessionId: string, seq: number, text: string): unknown {
    try {
      return JSON.parse(text);
    } catch {
      throw this.#corrupt(sessionId, seq, "its payload is not valid JSON");
    }
  }

  /** Logs and returns `StoreCorrupt` for one row. */
  #corrupt(sessionId: string, seq: number, why: string): TerretError {
    const error = rowCorrupt(`the sqlite store "${this.#path}"`, sessionId, seq, why);
    this.#logger?.log("error", error.message, {
      code: error.code,
      store: this.#path,
      session_id: sessionId,
      seq,
    });
    return error;
  }

  #headOf(id: string): number {
    const row = this.#sql.head.get(id) as unknown as [number | null] | undefined;
    return row?.[0] ?? 0;
  }

  #transaction(body: () => void): void {
    this.#sql.begin.run();
    try {
      body();
      this.#sql.commit.run();
    } catch (error) {
      this.#heads.clear();
      if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
      throw error;
    }
  }

  /**
   * The head of a session inside a write transaction. Heads are cached between transactions and trusted only while
   * `PRAGMA data_version` says no other connection committed since (see `#syncVersion`); otherwise read again.
   */
  #headInTransaction(id: string): number {
    let head = this.#heads.get(id);
    if (head === undefined) {
      head = this.#headOf(id);
      this.#remember(id, head);
    }
    return head;
  }

  /** Caches a head as the most recently used, dropping the least recently used beyond the cap. */
  #remember(id: string, head: number): void {
    this.#heads.delete(id);
    this.#heads.set(id, head);
    if (this.#heads.size > this.#maxHeads) this.#heads.delete(this.#heads.keys().next().value!);
  }

  /** Forgets cached heads when another connection has committed since this one last looked. */
  #syncVersion(): void {
    const version = this.#readVersion();
    if (version !== this.#version) {
      this.#heads.clear();
      this.#version = version;
    }
  }

  /** One group, one transaction: heads are read inside it, so seqs cannot collide with another writer. */
  #commit(batch: readonly EventDraft[]): Settled<SessionEvent>[] {
    const outcomes: Settled<SessionEvent>[] = [];
    const committed: SessionEvent[] = [];
    const payloads: string[] = [];
    try {
      this.#transaction(() => {
        this.#syncVersion();
        const heads = new Map<string, number>();
        for (const draft of batch) {
          const head = heads.get(draft.session_id) ?? this.#headInTransaction(draft.session_id);
          heads.set(draft.session_id, head);
          if (draft.expect === "new" && head > 0) {
            outcomes.push({ ok: false, error: sessionExists(draft.session_id) });
            continue;
          }
          if (draft.expect === "existing" && head === 0) {
            outcomes.push({ ok: false, error: sessionNotFound(draft.session_id) });
            continue;
          }
          const seq = head + 1;
          heads.set(draft.session_id, seq);
          const event = envelopeOf(draft, seq);
          committed.push(event);
          payloads.push(draft.payload_json);
          outcomes.push({ ok: true, value: event });
        }
        this.#sql.insertRows(committed, payloads);
        for (const [id, head] of heads) if (head > 0) this.#remember(id, head);
      });
    } catch (error) {
      throw failed(`append to the SQLite session store "${this.#path}"`, error);
    }
    for (const event of committed) this.#listeners.notify(event);
    return outcomes;
  }
}

function failed(action: string, error: unknown): TerretError {
  const message = error instanceof Error ? error.message : String(error);
  return new TerretError("StoreFailed", `Cannot ${action}: ${message}`, { cause: error });
}
