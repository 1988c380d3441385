/**
 * Exact fast checks of the built-in durable payload schemas, for the append boundary's hot path. Each is
 * equivalent to its event's zod schema on a normalized payload (plain frozen JSON: no `undefined`, finite numbers,
 * plain objects); `fast_checks_test.ts` proves it by comparing both on generated payloads. A payload a check refuses
 * goes to zod, which words the error (`schemaIssues`). Internal to the sessions service and the agents that check
 * content before queueing it.
 *
 * @module
 */
import type { EventDefinition } from "@terret/hames";
import {
  ApprovalRequested,
  ApprovalResolved,
  AssistantChunk,
  AssistantMessage,
  ContextInjected,
  InputQueued,
  PolicyUpdated,
  SessionCompacted,
  SessionCreated,
  SessionTitled,
  StepEnd,
  StepStart,
  ToolCall,
  ToolResult,
  TurnEnd,
  TurnStart,
  UserMessage,
} from "./events.ts";

/** A predicate over a normalized payload: true exactly when the event's schema accepts it. */
export type FastCheck = (payload: unknown) => boolean;

type Json = Record<string, unknown>;

/** `z.looseObject(…)`'s own test: an object that is not an array. */
function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `z.record(z.string(), z.unknown())` on normalized input: a plain object (normalized objects all are). */
function isRecord(value: unknown): value is Json {
  if (!isObject(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function isOptionalString(value: unknown): boolean {
  return value === undefined || typeof value === "string";
}

function isOptionalInt(value: unknown, min: number): boolean {
  return value === undefined || (Number.isSafeInteger(value) && (value as number) >= min);
}

function isOptionalNumber(value: unknown): boolean {
  return value === undefined || typeof value === "number";
}

function isTextPart(part: Json): boolean {
  return part.type === "text" && typeof part.text === "string";
}

function isImagePart(part: Json): boolean {
  return part.type === "image" && isOptionalString(part.url) && isOptionalString(part.data) &&
    isOptionalString(part.media_type);
}

/** `content`: a string, or an array of text and image parts. */
function isContent(value: unknown): boolean {
  if (typeof value === "string") return true;
  if (!Array.isArray(value)) return false;
  for (const part of value) {
    if (!isObject(part) || !(isTextPart(part) || isImagePart(part))) return false;
  }
  return true;
}

/** An assistant message part: text, thinking or a tool call. */
function isAssistantPart(part: unknown): boolean {
  if (!isObject(part)) return false;
  switch (part.type) {
    case "text":
      return typeof part.text === "string";
    case "thinking":
      return typeof part.text === "string" && isOptionalString(part.signature);
    case "tool_call":
      return typeof part.id === "string" && typeof part.name === "string" && isRecord(part.args);
    default:
      return false;
  }
}

function isUsage(value: unknown): boolean {
  return isObject(value) && typeof value.input_tokens === "number" &&
    typeof value.output_tokens === "number" && isOptionalNumber(value.cached_tokens) &&
    isOptionalNumber(value.cost);
}

function isCall(value: unknown): boolean {
  return isObject(value) && typeof value.id === "string" && typeof value.name === "string" &&
    isRecord(value.args);
}

/** An optional `queued_seq`: absent, or a positive integer. */
function isQueuedSeq(value: unknown): boolean {
  return value === undefined || (Number.isSafeInteger(value) && (value as number) > 0);
}

const TURN_STATUSES: ReadonlySet<unknown> = new Set([
  "completed",
  "cancelled",
  "failed",
  "rejected",
]);

/** The fast checks by event definition (identity: a plugin's type can never take a built-in's check). */
export const FAST_CHECKS: ReadonlyMap<EventDefinition, FastCheck> = new Map<
  EventDefinition,
  FastCheck
>([
  [SessionCreated, (p) => isObject(p) && (p.meta === undefined || isRecord(p.meta))],
  [SessionTitled, (p) => isObject(p) && typeof p.title === "string"],
  [
    SessionCompacted,
    (p) =>
      isObject(p) && typeof p.summary === "string" && isOptionalInt(p.through_seq, 0) &&
      isOptionalInt(p.kept_from_seq, 1) && isOptionalInt(p.summarized_messages, 0),
  ],
  [TurnStart, isRecord],
  [TurnEnd, (p) => isObject(p) && TURN_STATUSES.has(p.status)],
  [StepStart, isRecord],
  [StepEnd, (p) => isObject(p) && isUsage(p.usage) && typeof p.finish_reason === "string"],
  [UserMessage, (p) => isObject(p) && isContent(p.content) && isQueuedSeq(p.queued_seq)],
  [ContextInjected, (p) => isObject(p) && isContent(p.content) && isQueuedSeq(p.queued_seq)],
  [
    InputQueued,
    (p) =>
      isObject(p) && (p.kind === "message" || p.kind === "steer") && isContent(p.content) &&
      typeof p.wake === "boolean",
  ],
  [
    AssistantChunk,
    (p) =>
      isObject(p) && (p.kind === "text" || p.kind === "thinking") && typeof p.text === "string",
  ],
  [
    AssistantMessage,
    (p) => isObject(p) && Array.isArray(p.parts) && p.parts.every(isAssistantPart),
  ],
  [ToolCall, isCall],
  [
    ToolResult,
    (p) =>
      isObject(p) && typeof p.id === "string" && typeof p.name === "string" &&
      isContent(p.content) && typeof p.is_error === "boolean",
  ],
  [ApprovalRequested, (p) => isObject(p) && typeof p.request_id === "string" && isCall(p.call)],
  [
    ApprovalResolved,
    (p) =>
      isObject(p) && typeof p.request_id === "string" &&
      (p.decision === "allow" || p.decision === "deny") && isOptionalString(p.reason),
  ],
  [
    PolicyUpdated,
    (p) =>
      isObject(p) && Array.isArray(p.allow) && p.allow.every((x) => typeof x === "string") &&
      (p.ceiling === undefined || typeof p.ceiling === "boolean"),
  ],
] as [EventDefinition, FastCheck][]);

/**
 * The schema failures of a normalized payload for `def`, worded for an error message (`payload.content: …; …`), or
 * `undefined` when the payload passes. A built-in type's exact fast check is tried first; zod has the last word and
 * words the failures.
 */
export function schemaIssues(def: EventDefinition, payload: unknown): string | undefined {
  if (FAST_CHECKS.get(def)?.(payload) === true) return undefined;
  const checked = def.payload.safeParse(payload);
  if (checked.success) return undefined;
  return checked.error.issues
    .map((issue) => `${["payload", ...issue.path.map(String)].join(".")}: ${issue.message}`)
    .join("; ");
}
