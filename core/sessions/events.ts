/**
 * The durable session event types fixed in DESIGN.md, declared as kernel events (their payload schemas are the
 * minimum fields clients rely on; extra fields are allowed), and the live events the sessions service emits.
 *
 * Durable types are never dispatched on the bus: they are the log's vocabulary. Every append, once durable, is
 * announced on the bus as one `session/event` carrying the envelope.
 *
 * @module
 */
import { defineEvent, type EmitEvent, type EventDefinition } from "@terret/hames";
import { z } from "zod";
import type { SessionEvent } from "./envelope.ts";
import type { ImagePart, Part, TextPart, Usage } from "../llm/vocabulary.ts";

const OWNER = "@terret/core";

const textPart: z.ZodType = z.looseObject({ type: z.literal("text"), text: z.string() });
const imagePart: z.ZodType = z.looseObject({
  type: z.literal("image"),
  url: z.string().optional(),
  data: z.string().optional(),
  media_type: z.string().optional(),
});
const thinkingPart: z.ZodType = z.looseObject({
  type: z.literal("thinking"),
  text: z.string(),
  signature: z.string().optional(),
});
const toolCallPart: z.ZodType = z.looseObject({
  type: z.literal("tool_call"),
  id: z.string(),
  name: z.string(),
  args: z.record(z.string(), z.unknown()),
});
const content: z.ZodType = z.union([z.string(), z.array(z.union([textPart, imagePart]))]);
const usage: z.ZodType = z.looseObject({
  input_tokens: z.number(),
  output_tokens: z.number(),
  cached_tokens: z.number().optional(),
  cost: z.number().optional(),
});

function durable<P>(name: string, description: string, payload: z.ZodType): EmitEvent<P> {
  return defineEvent(name, {
    mode: "emit",
    durable: true,
    owner: OWNER,
    description,
    payload: payload as z.ZodType<P>,
  });
}

/** Message content: a string, or text and image parts. */
export type Content = string | readonly (TextPart | ImagePart)[];

/** `session/created`: the first event of every session (seq 1). */
export const SessionCreated: EmitEvent<{ meta?: Record<string, unknown> | undefined }> = durable(
  "session/created",
  "The first event of a session (seq 1), written by sessions.create; `meta` is caller-supplied data.",
  z.looseObject({ meta: z.record(z.string(), z.unknown()).optional() }),
);

/** `session/forked`: written right after the copied prefix of a fork. */
export const SessionForked: EmitEvent<{ source_session_id: string; boundary_seq: number }> =
  durable(
    "session/forked",
    "Lineage of a fork: the events before it were copied from `source_session_id` up to `boundary_seq`.",
    z.looseObject({ source_session_id: z.string(), boundary_seq: z.number().int() }),
  );

/** `session/titled`: the session's title. */
export const SessionTitled: EmitEvent<{ title: string }> = durable(
  "session/titled",
  "The session was given a title.",
  z.looseObject({ title: z.string() }),
);

/** `session/compacted`: a summary that replaces the model history projected before `kept_from_seq`. */
export const SessionCompacted: EmitEvent<{ summary: string }> = durable(
  "session/compacted",
  "In derived model context, `summary` (a user message) replaces the first `summarized_messages` messages " +
    "(those projected from events up to `through_seq`); the messages of events from `kept_from_seq` on are kept. " +
    "`usage` is the summary call's own. Without `summarized_messages` it replaces the whole history before it.",
  z.looseObject({
    summary: z.string(),
    through_seq: z.number().int().min(0).optional(),
    kept_from_seq: z.number().int().min(1).optional(),
    summarized_messages: z.number().int().min(0).optional(),
  }),
);

/** `turn/start`. */
export const TurnStart: EmitEvent<Record<string, unknown>> = durable(
  "turn/start",
  "A turn opened.",
  z.record(z.string(), z.unknown()),
);

/** `turn/end`. */
export const TurnEnd: EmitEvent<{ status: string; error?: unknown }> = durable(
  "turn/end",
  "A turn closed with its status.",
  z.looseObject({
    status: z.enum(["completed", "cancelled", "failed", "rejected"]),
    error: z.unknown().optional(),
  }),
);

/** `step/start`. */
export const StepStart: EmitEvent<Record<string, unknown>> = durable(
  "step/start",
  "A step (one model request and its tool calls) opened.",
  z.record(z.string(), z.unknown()),
);

/** `step/end`: carries the request's usage. */
export const StepEnd: EmitEvent<{ usage: Usage; finish_reason: string }> = durable(
  "step/end",
  "A step closed; `usage` is what the provider reported for its request.",
  z.looseObject({ usage, finish_reason: z.string() }),
);

const queuedSeq = z.number().int().positive().optional();

/** `user/message`: model-visible user input. */
export const UserMessage: EmitEvent<{ content: Content; queued_seq?: number | undefined }> =
  durable(
    "user/message",
    "User input; projected as a user message. `queued_seq` names the `input/queued` it claims, when it was queued durably.",
    z.looseObject({ content, queued_seq: queuedSeq }),
  );

/** `context/injected`: model-visible context injected between steps (steers, reminders). */
export const ContextInjected: EmitEvent<{ content: Content; queued_seq?: number | undefined }> =
  durable(
    "context/injected",
    "Context injected at a step boundary; projected as a user message. `queued_seq` names the `input/queued` it claims, when it was queued durably.",
    z.looseObject({ content, queued_seq: queuedSeq }),
  );

/** Payload of {@linkcode InputQueued}. */
export interface InputQueuedPayload {
  /** `message` (claimed as `user/message`) or `steer` (claimed as `context/injected`). */
  readonly kind: "message" | "steer";
  readonly content: Content;
  /** Whether it wakes an idle agent (always true for a message). */
  readonly wake: boolean;
}

/**
 * `input/queued`: an acknowledged `message` or `steer` made durable before a step claims it. Never projected; the
 * claiming `user/message` / `context/injected` carries its seq as `queued_seq`, and input no event claims is queued
 * again when the agent is next made resident (after a restart or an eviction).
 */
export const InputQueued: EmitEvent<InputQueuedPayload> = durable(
  "input/queued",
  "An acknowledged message or steer, durable before a step claims it; never model-visible. The claiming user/message or context/injected carries its seq as queued_seq.",
  z.looseObject({ kind: z.enum(["message", "steer"]), content, wake: z.boolean() }),
);

/** `assistant/chunk`: a streamed delta (never projected; only the concatenation is contractual). */
export const AssistantChunk: EmitEvent<{ kind: "text" | "thinking"; text: string }> = durable(
  "assistant/chunk",
  "A streamed delta for replay and UI fidelity; never projected into model context.",
  z.looseObject({ kind: z.enum(["text", "thinking"]), text: z.string() }),
);

/** `assistant/message`: the complete assistant message of a step. */
export const AssistantMessage: EmitEvent<{ parts: readonly Part[] }> = durable(
  "assistant/message",
  "The complete assistant message of a step; projected as an assistant message.",
  z.looseObject({ parts: z.array(z.union([textPart, thinkingPart, toolCallPart])) }),
);

/** `tool/call`: a tool call about to run. */
export const ToolCall: EmitEvent<{ id: string; name: string; args: Record<string, unknown> }> =
  durable(
    "tool/call",
    "A tool call entered the pipeline (the durable bookend before execution).",
    z.looseObject({ id: z.string(), name: z.string(), args: z.record(z.string(), z.unknown()) }),
  );

/** `tool/result`: a tool call's result, addressed to the model. */
export const ToolResult: EmitEvent<
  { id: string; name: string; content: Content; is_error: boolean }
> = durable(
  "tool/result",
  "A tool call's result; projected as a tool message.",
  z.looseObject({ id: z.string(), name: z.string(), content, is_error: z.boolean() }),
);

/** `approval/requested`: a tool call parked until a verdict is recorded. */
export const ApprovalRequested: EmitEvent<{
  request_id: string;
  call: { id: string; name: string; args: Record<string, unknown> };
  reason?: string | undefined;
  deadline_at?: string | undefined;
}> = durable(
  "approval/requested",
  "A tool call is parked until a verdict is recorded (reason: why it is asked; deadline_at: when it expires).",
  z.looseObject({
    request_id: z.string(),
    call: z.looseObject({
      id: z.string(),
      name: z.string(),
      args: z.record(z.string(), z.unknown()),
    }),
    reason: z.string().optional(),
    deadline_at: z.string().optional(),
  }),
);

/** Who answered an approval request. */
export type ApprovalAnswerer = {
  kind: "client" | "acp" | "console" | "rule" | "timeout" | "unattended";
  id?: string | undefined;
};

/** `approval/resolved`: the verdict on a parked call; the first one recorded wins. */
export const ApprovalResolved: EmitEvent<{
  request_id: string;
  decision: "allow" | "deny";
  by?: ApprovalAnswerer | undefined;
  reason?: string | undefined;
  rule?: string | undefined;
}> = durable(
  "approval/resolved",
  "A verdict on a parked tool call (by: who answered; rule: the session rule the answer added).",
  z.looseObject({
    request_id: z.string(),
    decision: z.enum(["allow", "deny"]),
    by: z.looseObject({
      kind: z.enum(["client", "acp", "console", "rule", "timeout", "unattended"]),
      id: z.string().optional(),
    }).optional(),
    reason: z.string().optional(),
    rule: z.string().optional(),
  }),
);

/** `policy/updated`: the session's live allow list. */
export const PolicyUpdated: EmitEvent<{ allow: string[]; ceiling?: boolean }> = durable(
  "policy/updated",
  "The session's active allow-list patterns (it can only narrow the floor); `ceiling: true` also bounds every " +
    "later policy/updated of the session (a subagent's share of its parent's tools).",
  z.looseObject({ allow: z.array(z.string()), ceiling: z.boolean().optional() }),
);

/** Every durable event type DESIGN.md fixes, in its order. */
export const SESSION_EVENT_TYPES: readonly EmitEvent<unknown>[] = Object.freeze([
  SessionCreated,
  SessionForked,
  SessionTitled,
  SessionCompacted,
  TurnStart,
  TurnEnd,
  StepStart,
  StepEnd,
  UserMessage,
  ContextInjected,
  AssistantChunk,
  AssistantMessage,
  ToolCall,
  ToolResult,
  ApprovalRequested,
  ApprovalResolved,
  PolicyUpdated,
  InputQueued,
] as EmitEvent<unknown>[]);

/** The envelope schema (`session/event` payload). */
export const sessionEventSchema: z.ZodType<SessionEvent> = z.object({
  id: z.string(),
  session_id: z.string(),
  seq: z.number().int().positive(),
  at: z.string(),
  type: z.string(),
  payload: z.unknown(),
  parent_id: z.string().nullable(),
}) as z.ZodType<SessionEvent>;

/** `session/event`: every durable append, announced on the bus once it is durable, in seq order per session. */
export const SessionEventAppended: EmitEvent<SessionEvent> = defineEvent("session/event", {
  mode: "emit",
  owner: OWNER,
  description:
    "A durable event was appended (emitted after it is durable, in seq order per session); the one feed " +
    "transcripts, interfaces and telemetry consume.",
  payload: sessionEventSchema,
});

/** Payload of {@linkcode InvariantViolated}. */
export interface InvariantViolatedPayload {
  readonly session_id: string;
  /** The last seq the derivation covered. */
  readonly upto: number | null;
  readonly outbound_digest: string;
  readonly derived_digest: string;
  /** The index of the first message that differs (or the shorter length). */
  readonly first_difference: number;
  readonly severity: "critical";
}

/** `sessions/invariant_violated`: production's report of a model request the log cannot reconstruct. */
export const InvariantViolated: EmitEvent<InvariantViolatedPayload> = defineEvent(
  "sessions/invariant_violated",
  {
    mode: "emit",
    owner: OWNER,
    description:
      "High severity: an outbound model request differs from derive_messages replayed from the store " +
      "(production mode; development and test throw LogInvariantViolation instead).",
    payload: z.object({
      session_id: z.string(),
      upto: z.number().int().nullable(),
      outbound_digest: z.string(),
      derived_digest: z.string(),
      first_difference: z.number().int(),
      severity: z.literal("critical"),
    }),
  },
);

/** Payload of {@linkcode SessionReleased}. */
export interface SessionReleasedPayload {
  readonly session_id: string;
}

/**
 * `sessions/released`: a session left memory (`Sessions.release`, called when its agent is evicted, disposed or
 * stopped). Whatever a service caches per session may be dropped: the log is untouched, and the next use reads it
 * again. Every {@linkcode SessionProjection} drops the session on it.
 */
export const SessionReleased: EmitEvent<SessionReleasedPayload> = defineEvent("sessions/released", {
  mode: "emit",
  owner: OWNER,
  description:
    "A session left memory (its agent was evicted, disposed or stopped): per-session caches of it may be dropped; " +
    "the next use reads the log again.",
  payload: z.object({ session_id: z.string() }),
});

/** The live (non-durable) events the sessions service emits. */
export const SESSION_LIVE_EVENTS: readonly EventDefinition[] = Object.freeze([
  SessionEventAppended,
  InvariantViolated,
  SessionReleased,
] as EventDefinition[]);
