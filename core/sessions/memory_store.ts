/**
 * The in-memory session store: the faithful reference implementation of the `session_store` seam, for tests and
 * throwaway sessions. Nothing survives the process.
 *
 * @module
 */
import { type Context, definePlugin, type Plugin } from "@terret/hames";
import { z } from "zod";
import { envelopeOf, type EventDraft, type SessionEvent } from "./envelope.ts";
import {
  checkImport,
  checkSignal,
  CommitListeners,
  envelopeJson,
  jsonBounds,
  type ListPage,
  listPage,
  readBounds,
  reporter,
  sessionExists,
  sessionNotFound,
  storeClosed,
} from "./_store_support.ts";
import {
  type CommitListener,
  type EventJson,
  type SessionStore,
  SessionStoreKey,
  type StoreJsonReadOptions,
  type StoreListOptions,
  type StoreReadOptions,
  type StoreStats,
} from "./store.ts";

/**
 * A {@linkcode SessionStore} in memory. Events are frozen and shared with readers.
 *
 * @example
 * ```ts
 * import { MemorySessionStore } from "@terret/core/sessions";
 * const store = new MemorySessionStore();
 * const draft = { id: "e1", session_id: "s1", at: new Date().toISOString(), type: "session/created",
 *   payload: {}, payload_json: "{}", parent_id: null, expect: "new" as const };
 * console.log((await store.append(draft)).seq); // 1
 * ```
 */
export class MemorySessionStore implements SessionStore {
  readonly kind = "memory";
  readonly #sessions = new Map<string, SessionEvent[]>();
  /** Each event's envelope JSON by seq - 1: built at append, or on first read for imported events. */
  readonly #json = new Map<string, (string | undefined)[]>();
  readonly #listeners: CommitListeners;
  #closed = false;
  #events = 0;

  /** @param options `report` receives what a throwing commit listener threw */
  constructor(options: { readonly report?: (error: unknown) => void } = {}) {
    this.#listeners = new CommitListeners(options.report ?? (() => {}));
  }

  append(draft: EventDraft): Promise<SessionEvent> {
    if (this.#closed) return Promise.reject(storeClosed(this.kind));
    const events = this.#sessions.get(draft.session_id);
    if (draft.expect === "new" && events !== undefined) {
      return Promise.reject(sessionExists(draft.session_id));
    }
    if (draft.expect === "existing" && events === undefined) {
      return Promise.reject(sessionNotFound(draft.session_id));
    }
    const list = events ?? [];
    const event = Object.freeze(envelopeOf(draft, list.length + 1));
    list.push(event);
    this.#sessions.set(draft.session_id, list);
    const json = this.#json.get(draft.session_id) ?? [];
    json.push(envelopeJson(event, draft.payload_json));
    this.#json.set(draft.session_id, json);
    this.#events++;
    this.#listeners.notify(event);
    return Promise.resolve(event);
  }

  importSession(events: readonly SessionEvent[]): Promise<void> {
    if (this.#closed) return Promise.reject(storeClosed(this.kind));
    const id = checkImport(events);
    if (this.#sessions.has(id)) return Promise.reject(sessionExists(id));
    const frozen = events.map((event) => Object.freeze({ ...event }));
    this.#sessions.set(id, frozen);
    this.#json.set(id, new Array<string | undefined>(frozen.length));
    this.#events += frozen.length;
    for (const event of frozen) this.#listeners.notify(event);
    return Promise.resolve();
  }

  // deno-lint-ignore require-await
  async read(sessionId: string, options: StoreReadOptions = {}): Promise<SessionEvent[]> {
    if (this.#closed) throw storeClosed(this.kind);
    checkSignal(options.signal);
    const { from, to, limit } = readBounds(options);
    const types = options.types === undefined ? undefined : new Set(options.types);
    const out: SessionEvent[] = [];
    const events = this.#sessions.get(sessionId) ?? [];
    for (let i = from - 1; i < events.length && i < to && out.length < limit; i++) {
      const event = events[i]!;
      if (types === undefined || types.has(event.type)) out.push(event);
    }
    return out;
  }

  /**
   * Reads events as envelope JSON: each event is serialized once (at append, from the payload as encoded at the
   * boundary; an imported event on its first read) and the text is shared by every later read.
   */
  readJson(sessionId: string, options: StoreJsonReadOptions = {}): Promise<EventJson[]> {
    if (this.#closed) return Promise.reject(storeClosed(this.kind));
    try {
      checkSignal(options.signal);
      const { from, maxBytes, limit } = jsonBounds(options);
      const events = this.#sessions.get(sessionId) ?? [];
      const json = this.#json.get(sessionId) ?? [];
      const out: EventJson[] = [];
      let bytes = 0;
      for (let i = from - 1; i < events.length && out.length < limit && bytes < maxBytes; i++) {
        const text = json[i] ??= JSON.stringify(events[i]);
        out.push({ seq: i + 1, json: text });
        bytes += text.length;
      }
      return Promise.resolve(out);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  head(sessionId: string): Promise<number> {
    if (this.#closed) return Promise.reject(storeClosed(this.kind));
    return Promise.resolve(this.#sessions.get(sessionId)?.length ?? 0);
  }

  list(options: StoreListOptions = {}): Promise<string[]> {
    if (this.#closed) return Promise.reject(storeClosed(this.kind));
    let page: ListPage;
    try {
      page = listPage(options);
    } catch (error) {
      return Promise.reject(error);
    }
    const { after, limit } = page;
    const types = options.types;
    const ids: string[] = [];
    for (const [id, events] of this.#sessions) {
      if (after !== undefined && id <= after) continue;
      if (types === undefined || events.some((event) => types.includes(event.type))) ids.push(id);
    }
    ids.sort();
    return Promise.resolve(limit === undefined ? ids : ids.slice(0, limit));
  }

  onCommit(listener: CommitListener): () => void {
    return this.#listeners.add(listener);
  }

  stats(): StoreStats {
    return {
      groups: this.#events,
      events: this.#events,
      max_group_events: this.#events > 0 ? 1 : 0,
      max_block_ms: 0,
      total_block_ms: 0,
    };
  }

  close(): Promise<void> {
    this.#closed = true;
    return Promise.resolve();
  }
}

/** The memory store's config: none. */
export const memoryStoreConfig: z.ZodType<Record<string, never>> = z.object({}).strict() as never;

/** Mounts a {@linkcode MemorySessionStore} as `session_store` (config row `sessions.store`). */
export const memoryStorePlugin: Plugin<Record<string, never>> = definePlugin({
  name: "terret-store-memory",
  description: "Session store in memory (tests, throwaway sessions); nothing survives the process.",
  provides: [SessionStoreKey],
  config: memoryStoreConfig,
  permissions: () => ({}),
  apply(ctx: Context): void {
    const store = new MemorySessionStore({ report: reporter(ctx) });
    ctx.effect(() => () => store.close(), "close memory store");
    ctx.provide(SessionStoreKey, store);
  },
});
