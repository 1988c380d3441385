/**
 * The JSONL session store: one greppable file per session, one event per line, appended with one write per
 * session per group commit. A torn last line (a crash mid-write) is skipped on read and cut off before the next
 * append, so it never corrupts what follows. Reads go through a sparse line index per session (`_jsonl_index.ts`),
 * so a page reads its own lines, not the whole file.
 *
 * @module
 */
import type { Logger } from "@terret/hames";
import { TerretError } from "../errors.ts";
import { join, resolve } from "node:path";
import { assertSessionId, envelopeOf, type EventDraft, type SessionEvent } from "./envelope.ts";
import { GroupCommit, type Settled } from "./_group_commit.ts";
import {
  checkImport,
  checkSignal,
  CommitListeners,
  envelopeJson,
  jsonBounds,
  listPage,
  readBounds,
  sessionExists,
  sessionNotFound,
  storeClosed,
} from "./_store_support.ts";
import { openForRead, recoverTail, syncPath, writeAll } from "./_jsonl_files.ts";
import { EventPage, JsonPage, type LinePage } from "./_jsonl_pages.ts";
import { catchUp, catchUpSync, LineIndex, readWindow } from "./_jsonl_index.ts";
import type {
  CommitListener,
  EventJson,
  SessionStore,
  StoreJsonReadOptions,
  StoreListOptions,
  StoreReadOptions,
  StoreStats,
} from "./store.ts";

/** Options for {@linkcode JsonlSessionStore.open}. */
export interface JsonlStoreOptions {
  /** The directory holding one `<session_id>.jsonl` file per session (created when missing). */
  readonly dir: string;
  /** `fdatasync` each file after each group: survives power loss, not just a crash (default false). */
  readonly fsync?: boolean;
  /** The most events in one group commit (default 1000). */
  readonly maxGroupEvents?: number;
  /** The most payload bytes in one group commit (default 8 MiB). */
  readonly maxGroupBytes?: number;
  /** How many session files stay open for appending (default 128). */
  readonly maxOpenFiles?: number;
  /** Where torn tails and listener failures are reported. */
  readonly logger?: Logger;
}

const LOCK_FILE = ".terret-store.lock";
/**
 * About the most bytes one read of a session file takes at once: a window takes whole index marks while the next one
 * starts within this many bytes of its start, so it may run past it by one mark's lines (256 lines or 256 KiB, or one
 * longer line); it always takes at least one mark's.
 */
const WINDOW_BYTES = 1024 * 1024;
/** How many sessions' line indexes are kept (each holds one number per 256 lines). */
const MAX_INDEXES = 1024;
const encoder = new TextEncoder();

/**
 * A {@linkcode SessionStore} over a directory of JSONL files.
 *
 * One process owns a directory at a time (an exclusive lock on `.terret-store.lock`, released by the OS when the
 * process dies), so seqs are assigned without a race; a second open fails with `StoreLocked`. An event is durable
 * once its line is written (it survives the process being killed; set `fsync` to survive power loss).
 *
 * @example
 * ```ts
 * import { JsonlSessionStore } from "@terret/core/sessions";
 * const dir = await Deno.makeTempDir();
 * const store = JsonlSessionStore.open({ dir });
 * console.log(await store.list()); // []
 * await store.close();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class JsonlSessionStore implements SessionStore {
  readonly kind = "jsonl";
  readonly #dir: string;
  readonly #fsync: boolean;
  readonly #maxOpen: number;
  readonly #logger: Logger | undefined;
  readonly #lock: Deno.FsFile;
  readonly #files = new Map<string, Deno.FsFile>();
  readonly #heads = new Map<string, number>();
  readonly #listeners: CommitListeners;
  readonly #group: GroupCommit<EventDraft, SessionEvent>;
  /** Line indexes of the sessions read lately, least recently used first (see {@linkcode MAX_INDEXES}). */
  readonly #indexes = new Map<string, LineIndex>();
  #closing: Promise<void> | undefined;

  private constructor(dir: string, lock: Deno.FsFile, options: JsonlStoreOptions) {
    this.#dir = dir;
    this.#lock = lock;
    this.#fsync = options.fsync ?? false;
    this.#maxOpen = options.maxOpenFiles ?? 128;
    this.#logger = options.logger;
    this.#listeners = new CommitListeners((error) =>
      this.#logger?.log("error", "A session commit listener failed", { error })
    );
    this.#group = new GroupCommit((batch) => this.#commit(batch), {
      maxItems: options.maxGroupEvents ?? 1000,
      maxBytes: options.maxGroupBytes ?? 8 * 1024 * 1024,
      sizeOf: (draft) => draft.payload_json.length,
    });
  }

  /**
   * Opens (creating) the directory and takes its lock.
   *
   * @throws {TerretError} `StoreLocked` when another open store (in any process) holds the directory
   */
  static open(options: JsonlStoreOptions): JsonlSessionStore {
    const dir = resolve(options.dir);
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const lock = Deno.openSync(join(dir, LOCK_FILE), {
      read: true,
      write: true,
      create: true,
      mode: 0o600,
    });
    if (!lock.tryLockSync(true)) {
      lock.close();
      throw new TerretError(
        "StoreLocked",
        `Cannot open the JSONL session store "${dir}": another store holds its lock`,
        { details: { dir } },
      );
    }
    return new JsonlSessionStore(dir, lock, options);
  }

  /** The directory this store writes. */
  get dir(): string {
    return this.#dir;
  }

  append(draft: EventDraft): Promise<SessionEvent> {
    if (this.#closing !== undefined) return Promise.reject(storeClosed(this.kind));
    return this.#group.submit(draft);
  }

  importSession(events: readonly SessionEvent[]): Promise<void> {
    if (this.#closing !== undefined) return Promise.reject(storeClosed(this.kind));
    const id = checkImport(events);
    const path = this.#path(id);
    if (this.#headOf(id, false) > 0) return Promise.reject(sessionExists(id));
    const temp = join(this.#dir, `.${id}.${crypto.randomUUID()}.tmp`);
    const text = events.map((event) => encodeLine(event, JSON.stringify(event.payload))).join("");
    try {
      Deno.writeFileSync(temp, encoder.encode(text));
      if (this.#fsync) syncPath(temp);
      this.#forget(id);
      Deno.renameSync(temp, path);
    } catch (error) {
      Deno.removeSync(temp, { recursive: true });
      return Promise.reject(error);
    }
    this.#heads.set(id, events.length);
    for (const event of events) this.#listeners.notify(event);
    return Promise.resolve();
  }

  async read(sessionId: string, options: StoreReadOptions = {}): Promise<SessionEvent[]> {
    if (this.#closing !== undefined) throw storeClosed(this.kind);
    const range = readBounds(options);
    const path = this.#path(sessionId);
    if (range.limit === 0) return [];
    const want = options.types === undefined
      ? Math.min(range.limit, range.to - range.from + 1)
      : Number.MAX_SAFE_INTEGER;
    return await this.#page(
      sessionId,
      path,
      range.from,
      want,
      options.signal,
      () => new EventPage(store(path), sessionId, { ...range, types: options.types }),
    );
  }

  /**
   * Reads events as envelope JSON: a stored line is returned as it is when it holds the envelope's fields in order
   * (every line this store writes), else the parsed event is serialized; each line is still parsed once, to check it.
   * A bad line ends the page before it; only a page that would start at it rejects with `StoreCorrupt` (logged).
   */
  async readJson(sessionId: string, options: StoreJsonReadOptions = {}): Promise<EventJson[]> {
    if (this.#closing !== undefined) throw storeClosed(this.kind);
    const bounds = jsonBounds(options);
    const path = this.#path(sessionId);
    if (bounds.limit === 0) return [];
    return await this.#page(
      sessionId,
      path,
      bounds.from,
      bounds.limit,
      options.signal,
      () => new JsonPage(store(path), sessionId, bounds),
    );
  }

  /**
   * Fills a page from the session's lines from seq `from`, reading window by window of whole lines through the
   * session's line index (so a read costs the lines it needs, not the file). An index that no longer matches the file
   * (which only a hand edit of a live store's file does) is rebuilt: when the file is shorter than it, or when a read
   * through it finds a bad line, the read runs once more on an index built afresh, and only a bad line found through
   * that one is `StoreCorrupt` (logged).
   */
  async #page<T>(
    sessionId: string,
    path: string,
    from: number,
    want: number,
    signal: AbortSignal | undefined,
    newPage: () => LinePage<T>,
  ): Promise<T> {
    for (let attempt = 0;; attempt++) {
      const file = openForRead(path);
      if (file === undefined) return newPage().result;
      try {
        const { index, fresh } = await this.#indexOf(sessionId, file, attempt > 0, signal);
        const page = newPage();
        try {
          for (let seq = from; !page.done;) {
            const window = index.window(seq, want - (seq - from), WINDOW_BYTES);
            if (window === undefined) break;
            page.take(await readWindow(file, window, store(path)), window.first);
            checkSignal(signal);
            seq = window.first + window.count;
          }
        } catch (error) {
          if (!fresh && isCorrupt(error)) continue;
          throw error;
        }
        return page.result;
      } catch (error) {
        if (isCorrupt(error)) {
          this.#logger?.log("error", error.message, { code: error.code, ...error.details });
        }
        throw error;
      } finally {
        file.close();
      }
    }
  }

  /**
   * The session's line index, caught up with `file` (the session file as this read opened it): the cached one when it
   * still ends where the file does, else the cached one extended (the file grew by hand or holds a torn tail), else
   * one built afresh (none cached, `rebuild`, or the file is shorter than the index). `fresh` says it was built from
   * `file` by this call. While it catches up it is out of the cache, so commits leave it alone; it goes back in after
   * a last synchronous catch-up, so no commit falls between.
   */
  async #indexOf(
    sessionId: string,
    file: Deno.FsFile,
    rebuild: boolean,
    signal: AbortSignal | undefined,
  ): Promise<{ index: LineIndex; fresh: boolean }> {
    const size = file.statSync().size;
    const cached = rebuild ? undefined : this.#indexes.get(sessionId);
    this.#indexes.delete(sessionId);
    if (cached !== undefined && cached.end === size) {
      this.#indexes.set(sessionId, cached);
      return { index: cached, fresh: false };
    }
    const fresh = cached === undefined || cached.end > size;
    const index = fresh ? new LineIndex() : cached;
    await catchUp(file, index, size, signal);
    catchUpSync(file, index);
    this.#indexes.delete(sessionId);
    this.#indexes.set(sessionId, index);
    while (this.#indexes.size > MAX_INDEXES) {
      this.#indexes.delete(this.#indexes.keys().next().value!);
    }
    return { index, fresh };
  }

  head(sessionId: string): Promise<number> {
    if (this.#closing !== undefined) return Promise.reject(storeClosed(this.kind));
    try {
      return Promise.resolve(this.#headOf(sessionId, false));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Every session; with `types`, every session too (a superset: the files keep no index of types). A page reads the
   * directory's names, then checks heads in id order from `after`, only until `limit` sessions with events are found.
   */
  async list(options: StoreListOptions = {}): Promise<string[]> {
    if (this.#closing !== undefined) throw storeClosed(this.kind);
    const { after, limit = Number.MAX_SAFE_INTEGER } = listPage(options);
    const names: string[] = [];
    for await (const entry of Deno.readDir(this.#dir)) {
      if (entry.isFile && entry.name.endsWith(".jsonl") && !entry.name.startsWith(".")) {
        const id = entry.name.slice(0, -".jsonl".length);
        if (after === undefined || id > after) names.push(id);
      }
    }
    names.sort();
    const ids: string[] = [];
    for (const id of names) {
      if (ids.length >= limit) break;
      if (this.#headOf(id, false) > 0) ids.push(id);
    }
    return ids;
  }

  onCommit(listener: CommitListener): () => void {
    return this.#listeners.add(listener);
  }

  stats(): StoreStats {
    return this.#group.stats();
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.#group.drain();
      for (const file of this.#files.values()) file.close();
      this.#files.clear();
      this.#lock.unlockSync();
      this.#lock.close();
    })();
    return this.#closing;
  }

  #path(id: string): string {
    assertSessionId(id);
    return join(this.#dir, `${id}.jsonl`);
  }

  /** One group: per session, one write of all its lines; a failed write is cut back off. */
  #commit(batch: readonly EventDraft[]): Settled<SessionEvent>[] {
    const outcomes: Settled<SessionEvent>[] = new Array(batch.length);
    const bySession = new Map<string, number[]>();
    batch.forEach((draft, i) => {
      const list = bySession.get(draft.session_id);
      if (list === undefined) bySession.set(draft.session_id, [i]);
      else list.push(i);
    });
    const committed: SessionEvent[] = [];
    for (const [id, indexes] of bySession) {
      try {
        this.#commitSession(id, indexes.map((i) => batch[i]!), outcomes, indexes, committed);
      } catch (error) {
        for (const i of indexes) outcomes[i] ??= { ok: false, error };
      }
    }
    for (const event of committed) this.#listeners.notify(event);
    return outcomes;
  }

  #commitSession(
    id: string,
    drafts: readonly EventDraft[],
    outcomes: Settled<SessionEvent>[],
    indexes: readonly number[],
    committed: SessionEvent[],
  ): void {
    let head = this.#headOf(id, drafts.some((draft) => draft.expect === "new"));
    const events: SessionEvent[] = [];
    let text = "";
    drafts.forEach((draft, k) => {
      if (draft.expect === "new" && head > 0) {
        outcomes[indexes[k]!] = { ok: false, error: sessionExists(id) };
      } else if (draft.expect === "existing" && head === 0) {
        outcomes[indexes[k]!] = { ok: false, error: sessionNotFound(id) };
      } else {
        head++;
        const event = envelopeOf(draft, head);
        events.push(event);
        text += encodeLine(event, draft.payload_json);
        outcomes[indexes[k]!] = { ok: true, value: event };
      }
    });
    if (events.length === 0) return;
    const file = this.#file(id);
    const size = file.seekSync(0, Deno.SeekMode.End);
    const bytes = encoder.encode(text);
    try {
      writeAll(file, bytes);
      if (this.#fsync) file.syncDataSync();
    } catch (error) {
      file.truncateSync(size);
      for (const event of events) {
        const i = indexes[drafts.findIndex((draft) => draft.id === event.id)]!;
        outcomes[i] = { ok: false, error };
      }
      return;
    }
    this.#heads.set(id, head);
    const index = this.#indexes.get(id);
    if (index?.end === size) index.add(bytes);
    else if (index !== undefined) this.#indexes.delete(id);
    committed.push(...events);
  }

  /** The head of a session, recovering it (and cutting a torn tail) from the file on first touch. */
  #headOf(id: string, create: boolean): number {
    const known = this.#heads.get(id);
    if (known !== undefined && (known > 0 || !create || this.#files.has(id))) return known;
    const path = this.#path(id);
    let file: Deno.FsFile;
    try {
      file = Deno.openSync(path, { read: true, write: true });
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      if (!create) return 0;
      file = Deno.openSync(path, { read: true, write: true, createNew: true });
    }
    this.#remember(id, file);
    const head = recoverTail(file, path, this.#logger);
    this.#heads.set(id, head);
    return head;
  }

  #file(id: string): Deno.FsFile {
    const file = this.#files.get(id);
    if (file !== undefined) {
      this.#files.delete(id);
      this.#files.set(id, file);
      return file;
    }
    this.#heads.delete(id);
    this.#headOf(id, true);
    return this.#files.get(id)!;
  }

  #remember(id: string, file: Deno.FsFile): void {
    this.#files.get(id)?.close();
    this.#files.delete(id);
    this.#files.set(id, file);
    while (this.#files.size > this.#maxOpen) {
      const [oldest, handle] = this.#files.entries().next().value!;
      handle.close();
      this.#files.delete(oldest);
    }
  }

  #forget(id: string): void {
    this.#indexes.delete(id);
    this.#files.get(id)?.close();
    this.#files.delete(id);
    this.#heads.delete(id);
  }
}

/** One line: the envelope in field order, the payload as encoded at the boundary. */
function encodeLine(event: SessionEvent, payloadJson: string): string {
  return `${envelopeJson(event, payloadJson)}\n`;
}

function store(path: string): string {
  return `the jsonl store "${path}"`;
}

function isCorrupt(error: unknown): error is TerretError {
  return error instanceof TerretError && error.code === "StoreCorrupt";
}
