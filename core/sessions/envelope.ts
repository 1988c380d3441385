/**
 * The session event envelope and the shapes that travel between the sessions service and a store.
 *
 * @module
 */
import { TerretError } from "../errors.ts";

/**
 * One durable session event, exactly as stored and as sent on the wire.
 *
 * `seq` is per session, starts at 1, is contiguous and never reused; `at` is ISO-8601 UTC; `payload` is plain JSON
 * (valid UTF-8); `parent_id` is the id of the event this one answers or continues, or `null`.
 */
export interface SessionEvent<P = unknown> {
  /** A unique event id (a UUID). */
  readonly id: string;
  /** The session the event belongs to. */
  readonly session_id: string;
  /** The per-session sequence number, from 1, contiguous. */
  readonly seq: number;
  /** When the event was appended, ISO-8601 UTC. */
  readonly at: string;
  /** The durable event type (`user/message`, `tool/result`, …). */
  readonly type: string;
  /** The normalized JSON payload. */
  readonly payload: P;
  /** The id of a related earlier event, or `null`. */
  readonly parent_id: string | null;
}

/** What a caller appends: the store assigns the sequence number. */
export interface AppendInput {
  /** A declared durable event type. */
  readonly type: string;
  /** The payload; normalized (and scrubbed) at the append boundary. */
  readonly payload: unknown;
  /** The id of a related earlier event. */
  readonly parent_id?: string | null;
}

/**
 * An event ready for a store: normalized, scrubbed and validated, everything but `seq`.
 *
 * `expect` says what the store must find before assigning the seq, checked inside the write transaction: `"new"`
 * (the session must not exist yet: its first event) or `"existing"` (the session must exist).
 */
export interface EventDraft {
  readonly id: string;
  readonly session_id: string;
  readonly at: string;
  readonly type: string;
  readonly payload: unknown;
  readonly parent_id: string | null;
  /** The payload's JSON text, encoded once at the boundary. */
  readonly payload_json: string;
  /** The precondition checked in the write transaction. */
  readonly expect: "new" | "existing";
}

/** The session ids Terret accepts: they name files and URL segments, so they are restricted. */
export const SESSION_ID_PATTERN: RegExp = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/**
 * Throws unless `id` is an acceptable session id.
 *
 * @throws {TerretError} `InvalidSessionId`
 */
export function assertSessionId(id: unknown): asserts id is string {
  if (typeof id !== "string" || !SESSION_ID_PATTERN.test(id)) {
    throw new TerretError(
      "InvalidSessionId",
      `Cannot use session id ${JSON.stringify(String(id))}: it must match ${SESSION_ID_PATTERN}`,
    );
  }
}

/** Turns a draft into the stored envelope once the store has assigned `seq`. */
export function envelopeOf(draft: EventDraft, seq: number): SessionEvent {
  return {
    id: draft.id,
    session_id: draft.session_id,
    seq,
    at: draft.at,
    type: draft.type,
    payload: draft.payload,
    parent_id: draft.parent_id,
  };
}
