/**
 * The `sessions` service's implementation over a store (the contract is in `sessions.ts`). Appends pass the append
 * boundary (normalization, scrubbers, schema) before the store makes them durable; every durable append is announced
 * as `session/event`; reads, live streams, forks, usage and `derive_messages` all come from the store.
 *
 * @module
 */
import type { Context, Disposer, EventDefinition } from "@terret/hames";
import { CORE_ERRORS, TerretError } from "../errors.ts";
import type { Message } from "../llm/vocabulary.ts";
import { BUILTIN_PROJECTIONS, deriveMessages, type Projection } from "./derive_messages.ts";
import { createHash } from "node:crypto";
import { canonicalJson, firstDifference } from "./digest.ts";
import {
  type AppendInput,
  assertSessionId,
  envelopeOf,
  type EventDraft,
  type SessionEvent,
} from "./envelope.ts";
import {
  InvariantViolated,
  SESSION_EVENT_TYPES,
  SessionEventAppended,
  SessionReleased,
} from "./events.ts";
import { LiveFeeds } from "./_live_feeds.ts";
import type { TailSource } from "./_replay_tail.ts";
import { schemaIssues } from "./_fast_checks.ts";
import { FoldCache } from "./_fold_cache.ts";
import { HistoryCache } from "./_history_cache.ts";
import { IsoClock } from "./_iso_clock.ts";
import {
  DEFAULT_MAX_PAYLOAD_BYTES,
  type NormalizedPayload,
  type Scrubber,
} from "./normalize_payload.ts";
import { ScrubberSet } from "./_scrubber_set.ts";
import type { EventJson, SessionStore, StoreListOptions, StoreReadOptions } from "./store.ts";
import { USAGE_EVENT_TYPES, type UsageRollup, UsageTally } from "./usage.ts";
import type {
  CreateOptions,
  DeriveFromLogOptions,
  EventTypeOptions,
  ForkOptions,
  InvariantReport,
  ScrubberOptions,
  Sessions,
  SignalOptions,
  StreamOptions,
} from "./sessions.ts";

/** Options for {@linkcode SessionLog}. */
export interface SessionLogOptions {
  /** The payload size cap in UTF-8 bytes of JSON (default 16 MiB). */
  readonly maxPayloadBytes?: number;
  /** Events a slow stream may buffer before it catches up from the store instead (default 10,000). */
  readonly streamBufferLimit?: number;
  /** Sessions whose derived history is cached for `deriveMessages` (default 1,024). */
  readonly historyCacheSessions?: number;
  /**
   * Sessions whose usage rollup is cached for `usage` (default 10,000): a few numbers each, so a session's usage
   * costs the events since it was last asked for instead of every step it ever took.
   */
  readonly usageCacheSessions?: number;
}

const RESERVED = new Set(["session/created", "session/forked"]);
/** Events per store page of a stream. */
const REPLAY_PAGE = 1000;
/** JSON bytes per store page of a JSON stream (stores with `readJson`). */
const REPLAY_PAGE_BYTES = 256 * 1024;

/**
 * The {@linkcode Sessions} implementation over a {@linkcode SessionStore}.
 *
 * @example
 * ```ts
 * import { createContext } from "@terret/hames";
 * import { MemorySessionStore } from "@terret/core/sessions";
 * import { SessionLog } from "@terret/core";
 * await using ctx = createContext({ mode: "test" });
 * const log = new SessionLog(ctx, new MemorySessionStore());
 * const { session_id } = await log.create();
 * await log.append(session_id, { type: "user/message", payload: { content: "hi" } });
 * console.log(await log.deriveMessages(session_id)); // [{ role: "user", parts: [{ type: "text", text: "hi" }] }]
 * ```
 */
export class SessionLog implements Sessions {
  readonly #ctx: Context;
  readonly #store: SessionStore;
  readonly #maxBytes: number;
  readonly #scrubbers = new ScrubberSet();
  readonly #types = new Map<string, EventDefinition>();
  readonly #projections = new Map<string, Projection>(BUILTIN_PROJECTIONS);
  readonly #feeds: LiveFeeds;
  readonly #histories: HistoryCache;
  readonly #usages: FoldCache<UsageTally>;
  /** The last `at` written and its millisecond. */
  readonly #clock = new IsoClock();
  /** The envelope JSON of committed events, serialized once for every JSON stream that tails them. */
  readonly #json = new WeakMap<SessionEvent, EventJson>();
  /** Canonical JSON of the (deeply frozen) messages the history cache produced, computed once each. */
  readonly #canonical = new WeakMap<Message, string>();

  /**
   * @param ctx the context `session/event` and `sessions/invariant_violated` are emitted on (its mode decides
   *   whether an invariant violation throws); the service unsubscribes from the store when it is disposed
   * @param store the store to write
   */
  constructor(ctx: Context, store: SessionStore, options: SessionLogOptions = {}) {
    this.#ctx = ctx;
    this.#store = store;
    this.#maxBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    this.#feeds = new LiveFeeds(store, options.streamBufferLimit ?? 10_000);
    for (const def of SESSION_EVENT_TYPES) this.#types.set(def.name, def);
    const head = (id: string, signal: AbortSignal | undefined): Promise<number> =>
      store.head(id, signal === undefined ? {} : { signal });
    this.#histories = new HistoryCache(this.#projections, {
      head,
      read: (id, from, to, signal) =>
        store.read(id, {
          from_seq: from,
          to_seq: to,
          types: [...this.#projections.keys()],
          ...(signal === undefined ? {} : { signal }),
        }),
    }, cacheSize("historyCacheSessions", options.historyCacheSessions ?? 1024));
    this.#usages = new FoldCache<UsageTally>({
      empty: () => new UsageTally(),
      fold: (tally, event) => tally.add(event),
    }, {
      head,
      read: (id, from, to, signal) =>
        store.read(id, {
          from_seq: from,
          to_seq: to,
          types: USAGE_EVENT_TYPES,
          ...(signal === undefined ? {} : { signal }),
        }),
    }, cacheSize("usageCacheSessions", options.usageCacheSessions ?? 10_000));
    ctx.effect(() => {
      const off = store.onCommit((event) => this.#committed(event));
      return () => {
        off();
        this.#feeds.close();
      };
    }, "sessions: commit feed");
  }

  async create(options: CreateOptions = {}): Promise<SessionEvent> {
    const id = options.session_id ?? crypto.randomUUID();
    assertSessionId(id);
    options.signal?.throwIfAborted();
    const payload = options.meta === undefined ? {} : { meta: options.meta };
    return await this.#store.append(this.#draft(id, "session/created", payload, null, "new"));
  }

  append(
    sessionId: string,
    input: AppendInput,
    options: SignalOptions = {},
  ): Promise<SessionEvent> {
    try {
      return this.#store.append(this.#appendDraft(sessionId, input, options));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #appendDraft(sessionId: string, input: AppendInput, options: SignalOptions): EventDraft {
    assertSessionId(sessionId);
    options.signal?.throwIfAborted();
    if (RESERVED.has(input.type)) {
      throw new TerretError(
        "ReservedEventType",
        `Cannot append "${input.type}" to session "${sessionId}": only ${
          input.type === "session/created" ? "create" : "fork"
        } writes it`,
      );
    }
    const parent = input.parent_id ?? null;
    if (
      parent !== null && (typeof parent !== "string" || parent.length === 0 || parent.length > 256)
    ) {
      throw new TypeError(
        `Cannot append to session "${sessionId}": parent_id must be a non-empty string or null`,
      );
    }
    return this.#draft(sessionId, input.type, input.payload, parent, "existing");
  }

  read(sessionId: string, options: StoreReadOptions = {}): Promise<SessionEvent[]> {
    assertSessionId(sessionId);
    return this.#store.read(sessionId, options);
  }

  head(sessionId: string, options: SignalOptions = {}): Promise<number> {
    assertSessionId(sessionId);
    return this.#store.head(sessionId, options);
  }

  list(options: StoreListOptions = {}): Promise<string[]> {
    return this.#store.list(options);
  }

  stream(sessionId: string, options: StreamOptions = {}): AsyncIterable<SessionEvent> {
    const from = this.#streamStart(sessionId, options);
    return flatten(this.#feeds.tail(sessionId, from, options.signal, {
      page: (next, signal) => this.#page(sessionId, next, signal),
      item: (event) => event,
      seq: (event) => event.seq,
    }));
  }

  streamJson(sessionId: string, options: StreamOptions = {}): AsyncIterable<readonly EventJson[]> {
    const from = this.#streamStart(sessionId, options);
    const bytes = options.page_bytes;
    if (bytes !== undefined && (!Number.isSafeInteger(bytes) || bytes < 1)) {
      throw new RangeError(
        `Cannot stream session "${sessionId}": page_bytes must be a positive integer, got ${bytes}`,
      );
    }
    const store = this.#store;
    const page: TailSource<EventJson>["page"] = store.readJson === undefined
      ? async (next, signal) =>
        (await this.#page(sessionId, next, signal)).map((event) => this.#jsonOf(event))
      : (next, signal) =>
        store.readJson!(sessionId, {
          from_seq: next,
          max_bytes: options.page_bytes ?? REPLAY_PAGE_BYTES,
          limit: REPLAY_PAGE,
          ...maybeSignal(signal),
        });
    return this.#feeds.tail(sessionId, from, options.signal, {
      page,
      item: (event) => this.#jsonOf(event),
      seq: (item) => item.seq,
    });
  }

  /**
   * One page of a stream from `read`. A page that would run into a bad row ends before it (the events before the
   * hole are delivered); the next page, starting at the row, rejects with the store's `StoreCorrupt`.
   */
  async #page(
    sessionId: string,
    from: number,
    signal: AbortSignal | undefined,
  ): Promise<SessionEvent[]> {
    const options = { from_seq: from, limit: REPLAY_PAGE, ...maybeSignal(signal) };
    try {
      return await this.#store.read(sessionId, options);
    } catch (error) {
      const seq = CORE_ERRORS.is(error, "StoreCorrupt") ? error.details?.seq : undefined;
      if (typeof seq !== "number" || seq <= from) throw error;
      return await this.#store.read(sessionId, { ...options, to_seq: seq - 1 });
    }
  }

  #streamStart(sessionId: string, options: StreamOptions): number {
    assertSessionId(sessionId);
    const from = options.from_seq ?? 1;
    if (!Number.isSafeInteger(from) || from < 1) {
      throw new RangeError(
        `Cannot stream session "${sessionId}": from_seq must be a positive integer, got ${from}`,
      );
    }
    return from;
  }

  /** An event's envelope JSON, serialized once per event object. */
  #jsonOf(event: SessionEvent): EventJson {
    let json = this.#json.get(event);
    if (json === undefined) {
      json = { seq: event.seq, json: JSON.stringify(event) };
      this.#json.set(event, json);
    }
    return json;
  }

  async fork(sourceId: string, options: ForkOptions): Promise<SessionEvent> {
    assertSessionId(sourceId);
    const boundary = options.boundary_seq;
    const id = options.session_id ?? crypto.randomUUID();
    assertSessionId(id);
    const events = await this.#store.read(sourceId, { to_seq: boundary, ...signalOf(options) });
    if (!Number.isSafeInteger(boundary) || boundary < 1 || events.length !== boundary) {
      throw new TerretError(
        "InvalidBoundary",
        `Cannot fork session "${sourceId}" at seq ${boundary}: it has ${events.length} events up to there`,
        { details: { session_id: sourceId, boundary_seq: boundary } },
      );
    }
    const ids = new Map(events.map((event) => [event.id, crypto.randomUUID()]));
    const copies = events.map((event): SessionEvent => ({
      ...event,
      id: ids.get(event.id)!,
      session_id: id,
      parent_id: event.parent_id === null ? null : ids.get(event.parent_id) ?? event.parent_id,
    }));
    const lineage = this.#draft(
      id,
      "session/forked",
      { source_session_id: sourceId, boundary_seq: boundary },
      events[boundary - 1]!.id,
      "new",
    );
    const forked = envelopeOf(lineage, boundary + 1);
    options.signal?.throwIfAborted();
    await this.#store.importSession([...copies, forked]);
    return forked;
  }

  /**
   * The session's usage rollup, served from a per-session cache that only durable commits and reads from the store
   * advance (as `deriveMessages` is): the store's head is read on every call and only the events not yet added are
   * read, so the result is exactly `rollupUsage` of the stored events.
   */
  usage(sessionId: string, options: SignalOptions = {}): Promise<UsageRollup> {
    try {
      assertSessionId(sessionId);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#usages.current(sessionId, options.signal, (tally) => tally.rollup());
  }

  /**
   * The model history projected from the stored log. Without `upto` it is served from a per-session cache that only
   * durable commits and reads from the store advance (see `HistoryCache`): the store's head is read on every call and
   * only the events not yet folded are read, so the result is exactly what a full replay would give.
   */
  async deriveMessages(sessionId: string, options: DeriveFromLogOptions = {}): Promise<Message[]> {
    assertSessionId(sessionId);
    if (options.upto === undefined) return await this.#histories.derive(sessionId, options.signal);
    const events = await this.read(sessionId, {
      types: [...this.#projections.keys()],
      ...(options.upto === undefined ? {} : { to_seq: options.upto }),
      ...signalOf(options),
    });
    return deriveMessages(events, { projections: this.#projections });
  }

  /**
   * Compares the digest of `outbound` with the digest of `derive_messages` replayed from the store.
   *
   * @returns the report (`ok: false` only in production, where a mismatch is reported instead of thrown)
   * @throws {TerretError} `LogInvariantViolation` on a mismatch in development and test mode
   */
  async assertInvariant(
    outbound: readonly Message[],
    sessionId: string,
    options: DeriveFromLogOptions = {},
  ): Promise<InvariantReport> {
    // The outbound list is the cache's own history (the loop's case): the very frozen messages projected from the
    // persisted events the cache covers, so it is their derivation by construction, proven without another head read.
    if (options.upto === undefined && this.#histories.holds(sessionId, outbound)) {
      options.signal?.throwIfAborted();
      return this.#matched(outbound);
    }
    const derived = await this.deriveMessages(sessionId, options);
    // The same (cache-produced, deeply frozen) messages in the same order cannot digest differently: identity is the
    // stronger check, and the report's digests are then computed only if someone reads them.
    if (sameMessages(outbound, derived)) return this.#matched(derived);
    const derivedDigest = this.#digest(derived);
    const outboundDigest = this.#digest(outbound);
    const report = {
      ok: outboundDigest === derivedDigest,
      outbound_digest: outboundDigest,
      derived_digest: derivedDigest,
    };
    if (report.ok) return report;
    const index = firstDifference(outbound, derived);
    const details = {
      session_id: sessionId,
      upto: options.upto ?? null,
      outbound_digest: outboundDigest,
      derived_digest: derivedDigest,
      first_difference: index,
    };
    const message =
      `Cannot send a model request for session "${sessionId}": the outbound messages differ ` +
      `from the log's derivation at message ${index} (outbound ${
        outboundDigest.slice(0, 12)
      }, derived ${derivedDigest.slice(0, 12)})`;
    if (this.#ctx.mode !== "production") {
      throw new TerretError("LogInvariantViolation", message, { details });
    }
    this.#ctx.logger.log("error", message, { code: "LogInvariantViolation", ...details });
    this.#ctx.emit(InvariantViolated, { ...details, severity: "critical" });
    return report;
  }

  /** The report of a match by identity: both digests are the derived one, computed on first read. */
  #matched(derived: readonly Message[]): InvariantReport {
    let digest: string | undefined;
    const get = (): string => digest ??= this.#digest(derived);
    return {
      ok: true,
      get outbound_digest(): string {
        return get();
      },
      get derived_digest(): string {
        return get();
      },
    };
  }

  /** `digestMessages(messages)`, reusing the canonical JSON of messages the history cache produced. */
  #digest(messages: readonly Message[]): string {
    const parts: string[] = [];
    for (const message of messages) {
      if (!this.#histories.owns(message)) {
        parts.push(canonicalJson(message));
        continue;
      }
      let text = this.#canonical.get(message);
      if (text === undefined) this.#canonical.set(message, text = canonicalJson(message));
      parts.push(text);
    }
    return createHash("sha256").update(`[${parts.join(",")}]`).digest("hex");
  }

  release(sessionId: string): void {
    this.#histories.forget(sessionId);
    this.#ctx.emit(SessionReleased, { session_id: sessionId });
  }

  /** How many sessions' derived histories are cached (at most `historyCacheSessions`). */
  get cachedHistories(): number {
    return this.#histories.size;
  }

  normalize(type: string, payload: unknown): NormalizedPayload {
    return this.#scrubbers.normalize(type, payload, this.#maxBytes);
  }

  get scrubbing(): boolean {
    return this.#scrubbers.scrubbing;
  }

  safePrefix(text: string): number {
    return this.#scrubbers.safePrefix(text);
  }

  redactionMarkers(): readonly string[] {
    return this.#scrubbers.markers();
  }

  registerScrubber(owner: Context, scrubber: Scrubber, options: ScrubberOptions = {}): Disposer {
    return this.#scrubbers.register(owner, scrubber, options);
  }

  registerEventType(owner: Context, type: EventDefinition, options: EventTypeOptions): Disposer {
    if (!type.durable || type.mode !== "emit") {
      throw new TypeError(
        `Cannot register event type "${type.name}": declare it with mode "emit" and durable: true`,
      );
    }
    if (this.#types.has(type.name)) {
      throw new TypeError(`Cannot register event type "${type.name}": it is already registered`);
    }
    if (options.projection !== null && typeof options.projection !== "function") {
      throw new TypeError(
        `Cannot register event type "${type.name}": projection must be a function or null`,
      );
    }
    return owner.effect(() => {
      this.#types.set(type.name, type);
      if (options.projection !== null) {
        this.#projections.set(type.name, options.projection);
        this.#histories.clear();
      }
      return () => {
        this.#types.delete(type.name);
        if (this.#projections.delete(type.name)) this.#histories.clear();
      };
    }, `sessions: event type ${type.name}`);
  }

  #draft(
    sessionId: string,
    type: string,
    payload: unknown,
    parent: string | null,
    expect: EventDraft["expect"],
  ): EventDraft {
    const def = this.#types.get(type);
    if (def === undefined) {
      throw new TerretError(
        "UnknownEventType",
        `Cannot append ${
          JSON.stringify(String(type))
        } to session "${sessionId}": unknown event type ` +
          "(a plugin adds one with sessions.registerEventType)",
        { details: { type } },
      );
    }
    const normalized = this.normalize(type, payload);
    const issues = schemaIssues(def, normalized.value);
    if (issues !== undefined) {
      throw new TerretError(
        "InvalidPayload",
        `Cannot append "${type}" to session "${sessionId}": the payload breaks its schema: ${issues}`,
        { details: { type } },
      );
    }
    return {
      id: crypto.randomUUID(),
      session_id: sessionId,
      at: this.#now(),
      type,
      payload: normalized.value,
      parent_id: parent,
      payload_json: normalized.json,
      expect,
    };
  }

  /** The current time as ISO-8601 UTC. */
  #now(): string {
    return this.#clock.format(Date.now());
  }

  #committed(event: SessionEvent): void {
    this.#histories.committed(event);
    this.#usages.committed(event);
    this.#ctx.emit(SessionEventAppended, event);
    this.#feeds.push(event);
  }
}

/** A cache size option, checked: a positive integer. */
function cacheSize(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(
      `Cannot create the session log: ${name} must be a positive integer, got ${value}`,
    );
  }
  return value;
}

function signalOf(options: SignalOptions): { signal?: AbortSignal } {
  return options.signal === undefined ? {} : { signal: options.signal };
}

/** True when both lists hold the very same message objects in the same order. */
function sameMessages(a: readonly Message[], b: readonly Message[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

async function* flatten<T>(batches: AsyncIterable<readonly T[]>): AsyncGenerator<T> {
  for await (const batch of batches) yield* batch;
}

function maybeSignal(signal: AbortSignal | undefined): { signal?: AbortSignal } {
  return signal === undefined ? {} : { signal };
}
