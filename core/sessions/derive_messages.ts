/**
 * `derive_messages`: the provider-neutral model history projected from a session's events, the only path by
 * which context reaches an adapter.
 *
 * @module
 */
import type { Message, Part } from "../llm/vocabulary.ts";
import type { SessionEvent } from "./envelope.ts";

/**
 * Projects one durable event into the model history being built, in place.
 *
 * Contract: deterministic and pure in `(event, history)`: it may push, replace or remove messages of `history`
 * (a compaction replaces everything before it) and must not read anything else, keep state, or throw for a
 * payload that passed the event type's schema. Events are projected in seq order.
 */
export type Projection = (event: SessionEvent, history: Message[]) => void;

function contentParts(content: unknown): readonly Part[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content as readonly Part[];
}

function payloadOf(event: SessionEvent): Record<string, unknown> {
  return event.payload as Record<string, unknown>;
}

/** The projections of the fixed durable types; chunks and bookkeeping events are never projected. */
export const BUILTIN_PROJECTIONS: ReadonlyMap<string, Projection> = new Map<string, Projection>([
  ["user/message", (event, history) => {
    history.push({ role: "user", parts: contentParts(payloadOf(event).content) });
  }],
  ["context/injected", (event, history) => {
    history.push({ role: "user", parts: contentParts(payloadOf(event).content) });
  }],
  ["assistant/message", (event, history) => {
    history.push({ role: "assistant", parts: payloadOf(event).parts as readonly Part[] });
  }],
  ["tool/result", (event, history) => {
    const { id, name, content, is_error } = payloadOf(event);
    history.push({
      role: "tool",
      parts: [{
        type: "tool_result",
        id: id as string,
        name: name as string,
        content: content as string,
        is_error: is_error as boolean,
      }],
    });
  }],
  ["session/compacted", (event, history) => {
    history.length = 0;
    history.push({
      role: "user",
      parts: [{ type: "text", text: payloadOf(event).summary as string }],
    });
  }],
]);

/** Options for {@linkcode deriveMessages}. */
export interface DeriveOptions {
  /** Project only events with `seq <= upto`. */
  readonly upto?: number;
  /** The projections by event type (default {@linkcode BUILTIN_PROJECTIONS}); other types are skipped. */
  readonly projections?: ReadonlyMap<string, Projection>;
}

/**
 * Projects model history from a session's events (in seq order).
 *
 * @param events the session's events, ascending by seq
 * @param options `upto` and the projection table
 * @returns a fresh list of messages (parts may share the events' frozen payload objects)
 *
 * @example
 * ```ts
 * import { deriveMessages } from "@terret/core/sessions";
 * const at = "2026-01-01T00:00:00.000Z";
 * const messages = deriveMessages([
 *   { id: "a", session_id: "s", seq: 1, at, type: "user/message", payload: { content: "hi" }, parent_id: null },
 *   { id: "b", session_id: "s", seq: 2, at, type: "assistant/chunk", payload: { kind: "text", text: "he" }, parent_id: null },
 * ]);
 * console.log(messages); // [{ role: "user", parts: [{ type: "text", text: "hi" }] }]
 * ```
 */
export function deriveMessages(
  events: Iterable<SessionEvent>,
  options: DeriveOptions = {},
): Message[] {
  const projections = options.projections ?? BUILTIN_PROJECTIONS;
  const upto = options.upto ?? Number.POSITIVE_INFINITY;
  const history: Message[] = [];
  for (const event of events) {
    if (event.seq > upto) break;
    projections.get(event.type)?.(event, history);
  }
  return history;
}
