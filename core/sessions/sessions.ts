/**
 * The contract of the `sessions` service (the append-only session log): what every implementation offers, its
 * options, and its service key. `SessionLog` is the implementation over a `SessionStore`.
 *
 * @module
 */
import {
  type Context,
  defineService,
  type Disposer,
  type EventDefinition,
  type ServiceKey,
} from "@terret/hames";
import type { Message } from "../llm/vocabulary.ts";
import type { Projection } from "./derive_messages.ts";
import type { AppendInput, SessionEvent } from "./envelope.ts";
import type { NormalizedPayload, Scrubber } from "./normalize_payload.ts";
import type { EventJson, StoreListOptions, StoreReadOptions } from "./store.ts";
import type { UsageRollup } from "./usage.ts";

/** Options carrying only a signal. */
export interface SignalOptions {
  readonly signal?: AbortSignal;
}

/** Options for {@linkcode Sessions.create}. */
export interface CreateOptions extends SignalOptions {
  /** The new session's id (default: a random UUID); must match `SESSION_ID_PATTERN`. */
  readonly session_id?: string;
  /** Caller data stored in the `session/created` payload. */
  readonly meta?: Readonly<Record<string, unknown>>;
}

/** Options for {@linkcode Sessions.stream}. */
export interface StreamOptions extends SignalOptions {
  /** The first seq yielded (default 1). */
  readonly from_seq?: number;
  /**
   * `streamJson` only: JSON bytes per store page (default 256 KiB; at least one event), where the store reads by
   * bytes. What a stream holds besides its live buffer.
   */
  readonly page_bytes?: number;
}

/** Options for {@linkcode Sessions.fork}. */
export interface ForkOptions extends SignalOptions {
  /** The last source seq copied. */
  readonly boundary_seq: number;
  /** The fork's id (default: a random UUID). */
  readonly session_id?: string;
}

/** Options for {@linkcode Sessions.deriveMessages} and {@linkcode Sessions.assertInvariant}. */
export interface DeriveFromLogOptions extends SignalOptions {
  /** Project only events up to this seq (default: the head). */
  readonly upto?: number;
}

/** What {@linkcode Sessions.assertInvariant} found. */
export interface InvariantReport {
  /** True when the digests match. */
  readonly ok: boolean;
  readonly outbound_digest: string;
  readonly derived_digest: string;
}

/** Options for {@linkcode Sessions.registerScrubber}. */
export interface ScrubberOptions {
  /**
   * The replacement text the scrubber writes in place of what it removes (`-REDACTED-`). Declaring it lets
   * consumers recognise redacted values: the loop refuses to re-execute, on resume, a tool call whose logged name or
   * arguments carry a marker, since the call can no longer be reconstructed.
   */
  readonly marker?: string;
  /**
   * For streamed text: the length of the longest prefix of `text` (a run not appended yet) that can be appended
   * now without cutting in two anything this scrubber replaces. Without it, a streaming producer appends each run
   * whole when it ends. Contract: pure and fast (it runs per streamed delta); `text.length` when nothing is held.
   */
  readonly safePrefix?: (text: string) => number;
}

/** Options for {@linkcode Sessions.registerEventType}. */
export interface EventTypeOptions {
  /** How the type projects into model context, or `null` when it is never model-visible. */
  readonly projection: Projection | null;
}

/**
 * The session log service (key `sessions`).
 *
 * Contract: `append` and `create` refuse, with a `TerretError` and before anything reaches the store, an unknown
 * or reserved type (`UnknownEventType`, `ReservedEventType`), a payload that is not JSON or not valid UTF-8 or
 * breaks its type's schema (`InvalidPayload`), or one over the size cap (`PayloadTooLarge`). A resolved append is
 * durable and has been emitted as `session/event`. The signal is checked before an append is queued; once queued
 * it completes. Registrations (`registerScrubber`, `registerEventType`) are effects of the `owner` context.
 */
export interface Sessions {
  /** Creates a session, appending its `session/created` (seq 1); `SessionExists` when the id is taken. */
  create(options?: CreateOptions): Promise<SessionEvent>;
  /** Appends one event; `SessionNotFound` for an unknown session. */
  append(sessionId: string, input: AppendInput, options?: SignalOptions): Promise<SessionEvent>;
  /** Reads events ascending by seq. */
  read(sessionId: string, options?: StoreReadOptions): Promise<SessionEvent[]>;
  /** The highest seq (0 for an unknown session). */
  head(sessionId: string, options?: SignalOptions): Promise<number>;
  /**
   * Every session id, sorted. With `types`, the sessions holding an event of one of those types, or more (see
   * {@linkcode StoreListOptions}): confirm each with a read. With `after` and `limit`, one page of them, at about
   * the page's cost: pass a page's last id as the next `after` until a page comes back shorter than `limit`.
   */
  list(options?: StoreListOptions): Promise<string[]>;
  /**
   * Replays from `from_seq`, then tails live: no gap, no duplicate; ends when `signal` aborts. Pull-based: the
   * store is read a page at a time as the consumer pulls, and live commits wait in a bounded buffer; a consumer
   * that falls behind it loses nothing (the buffer is dropped and the stream catches up from the store). A seq the
   * store cannot return (a missing or undecodable row) ends the stream with `StoreCorrupt` naming the seq.
   */
  stream(sessionId: string, options?: StreamOptions): AsyncIterable<SessionEvent>;
  /**
   * {@linkcode Sessions.stream} as envelope JSON text, in batches (a store page, or the live events committed since
   * the last pull): stored events come as the store holds them (no parse, no re-serialization, pages sized by bytes
   * where the store offers `readJson`), and each live event is serialized once for every stream that tails it.
   * Batches are never empty; together they are the seqs from `from_seq` in order, with no gap and no duplicate.
   */
  streamJson(sessionId: string, options?: StreamOptions): AsyncIterable<readonly EventJson[]>;
  /** Copies events up to `boundary_seq` into a new session, followed by `session/forked`; returns that event. */
  fork(sourceId: string, options: ForkOptions): Promise<SessionEvent>;
  /** The rollup of every `step/end` usage and every utility call's (compaction, title); unknown steps counted. */
  usage(sessionId: string, options?: SignalOptions): Promise<UsageRollup>;
  /** The model history projected from the stored log. */
  deriveMessages(sessionId: string, options?: DeriveFromLogOptions): Promise<Message[]>;
  /**
   * Drops what the service holds in memory for the session (its cached derived history, which grows with the
   * session until compaction) and emits `sessions/released`, on which every session projection drops the session
   * too: the log is untouched, and the next use reads it again. The agents registry calls it when an agent leaves
   * memory, so an evicted agent's history and per-session state do not stay resident.
   */
  release(sessionId: string): void;
  /**
   * Checks an outbound message list against `deriveMessages` from the log (digests of canonical JSON). On a
   * mismatch it throws `LogInvariantViolation` in development and test, and in production logs and emits
   * `sessions/invariant_violated`; either way the report says what was compared. A list that is the very history
   * the service's cache derived from the persisted events (the same frozen messages, in order: what
   * `deriveMessages` returned, when nothing was committed since) is proven by identity without reading the store
   * again; any other list is compared with a fresh `deriveMessages`.
   */
  assertInvariant(
    outbound: readonly Message[],
    sessionId: string,
    options?: DeriveFromLogOptions,
  ): Promise<InvariantReport>;
  /** Normalizes a payload exactly as an append of `type` would (scrubbers and cap included). */
  normalize(type: string, payload: unknown): NormalizedPayload;
  /** Adds a scrubber (and the marker it writes) for as long as `owner` lives. */
  registerScrubber(owner: Context, scrubber: Scrubber, options?: ScrubberOptions): Disposer;
  /**
   * True while any scrubber is registered: a streaming producer must then cut a run of text only where
   * {@linkcode Sessions.safePrefix} allows, since a scrubber only sees one payload at a time and a secret split
   * across two appends would pass it.
   */
  readonly scrubbing: boolean;
  /**
   * How much of a streamed run of text (`text`, not appended yet) can be appended now: `text.length` without
   * scrubbers, else the least of the scrubbers' `safePrefix` answers (0 when one declared none, so the run is
   * appended whole at its end). A producer appending the prefix and holding the rest never cuts a secret in two.
   */
  safePrefix(text: string): number;
  /** The markers the registered scrubbers declared, in registration order (duplicates removed). */
  redactionMarkers(): readonly string[];
  /** Adds a durable event type (and its projection) for as long as `owner` lives. */
  registerEventType(owner: Context, type: EventDefinition, options: EventTypeOptions): Disposer;
}

/** The sessions service key. */
export const SessionsKey: ServiceKey<Sessions> = defineService<Sessions>(
  "sessions",
  "The append-only session log: append, read, stream, fork, usage, derive_messages and the invariant",
);
