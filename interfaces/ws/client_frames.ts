/**
 * The client frames of socket protocol v1 (docs/protocol.md §5): a closed set, parsed and validated strictly, with
 * the exact refusal each bad input gets.
 *
 * @module
 */
import type { Content } from "@terret/core/sessions";

/** What a client frame may carry as `ref`: echoed in its answer. */
export type FrameRef = string | number;

/** A validated client frame. */
export type ClientFrame =
  | { readonly type: "subscribe"; readonly ref: FrameRef | null; readonly from_seq: number }
  | { readonly type: "message"; readonly ref: FrameRef | null; readonly content: Content }
  | {
    readonly type: "steer";
    readonly ref: FrameRef | null;
    readonly content: Content;
    readonly wake: boolean;
  }
  | { readonly type: "cancel"; readonly ref: FrameRef | null; readonly reason: string | undefined }
  | {
    readonly type: "set_policy";
    readonly ref: FrameRef | null;
    readonly allow: readonly string[];
  }
  | {
    readonly type: "approve";
    readonly ref: FrameRef | null;
    readonly request_id: string;
    readonly decision: "allow" | "deny";
    readonly reason: string | undefined;
    /** Also add a session rule derived from the call (`Bash(npm test:*)`; docs/protocol.md). */
    readonly remember: boolean;
  }
  | {
    readonly type: "set_persona";
    readonly ref: FrameRef | null;
    readonly content: string;
    readonly replace: boolean;
  }
  | {
    readonly type: "compact";
    readonly ref: FrameRef | null;
    readonly instructions: string | undefined;
  }
  | { readonly type: "dispose"; readonly ref: FrameRef | null };

/** The error codes of the protocol (docs/protocol.md §5, "Errors"). */
export type ErrorCode =
  | "invalid_json"
  | "unknown_type"
  | "invalid_field"
  | "already_subscribed"
  | "from_seq_ahead"
  | "binary_not_supported"
  | "rate_limited"
  | "not_supported"
  | "unknown_request"
  | "already_resolved"
  | "cannot_remember"
  | "log_unreadable"
  | "agent_busy"
  | "unavailable"
  | "quota_exceeded"
  | "internal";

/** A refused frame: the answer the client gets. */
export interface FrameRefusal {
  readonly ref: FrameRef | null;
  readonly code: ErrorCode;
  readonly message: string;
}

/** The client frame types, in the order the protocol lists them. */
export const CLIENT_FRAME_TYPES: readonly ClientFrame["type"][] = Object.freeze([
  "subscribe",
  "message",
  "steer",
  "cancel",
  "set_policy",
  "approve",
  "set_persona",
  "compact",
  "dispose",
]);

/** Most allow-list patterns one `set_policy` may carry. */
export const MAX_POLICY_PATTERNS = 256;
/** Longest allow-list pattern. */
export const MAX_PATTERN_LENGTH = 256;
/** Longest `reason`. */
export const MAX_REASON_LENGTH = 1024;
/** Longest `set_persona` content, in characters. */
export const MAX_PERSONA_LENGTH = 65_536;
/** Longest `compact` instructions, in characters. */
export const MAX_COMPACT_INSTRUCTIONS = 4096;
/** Longest string `ref`. */
export const MAX_REF_LENGTH = 128;

const FIELDS: Readonly<Record<ClientFrame["type"], readonly string[]>> = {
  subscribe: ["type", "ref", "from_seq"],
  message: ["type", "ref", "content"],
  steer: ["type", "ref", "content", "wake"],
  cancel: ["type", "ref", "reason"],
  set_policy: ["type", "ref", "allow"],
  approve: ["type", "ref", "request_id", "decision", "reason", "remember"],
  set_persona: ["type", "ref", "content", "replace"],
  compact: ["type", "ref", "instructions"],
  dispose: ["type", "ref"],
};

class Refused extends Error {
  constructor(readonly code: ErrorCode, message: string) {
    super(message);
  }
}

/**
 * Parses one text frame.
 *
 * @returns the validated frame, or the refusal to answer with (never throws for client input)
 */
export function parseClientFrame(text: string): ClientFrame | FrameRefusal {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return refusal(null, "invalid_json", "Cannot read the frame: it is not valid JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return refusal(null, "invalid_json", "Cannot read the frame: it must be a JSON object");
  }
  const frame = value as Record<string, unknown>;
  const ref = frame.ref ?? null;
  if (
    ref !== null &&
    !(typeof ref === "string" && ref.length <= MAX_REF_LENGTH) &&
    !(typeof ref === "number" && Number.isSafeInteger(ref))
  ) {
    return refusal(
      null,
      "invalid_field",
      `Cannot read the frame: "ref" must be a string of at most ${MAX_REF_LENGTH} characters or a safe integer`,
    );
  }
  const type = frame.type;
  if (!(CLIENT_FRAME_TYPES as readonly unknown[]).includes(type)) {
    const expected = `(expected one of ${CLIENT_FRAME_TYPES.join(", ")})`;
    return refusal(
      ref as FrameRef | null,
      "unknown_type",
      type === undefined
        ? `Cannot read the frame: it has no "type" ${expected}`
        : `Cannot read the frame: unknown type ${JSON.stringify(type)} ${expected}`,
    );
  }
  const kind = type as ClientFrame["type"];
  try {
    for (const key of Object.keys(frame)) {
      if (!FIELDS[kind].includes(key)) throw invalid(`unknown field "${key}"`);
    }
    return readFrame(kind, frame, ref as FrameRef | null);
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    return refusal(
      ref as FrameRef | null,
      error.code,
      `Cannot read the "${kind}" frame: ${error.message}`,
    );
  }
}

/** True when `value` is a refusal rather than a frame. */
export function isRefusal(value: ClientFrame | FrameRefusal): value is FrameRefusal {
  return "code" in value;
}

function readFrame(
  kind: ClientFrame["type"],
  frame: Record<string, unknown>,
  ref: FrameRef | null,
): ClientFrame {
  switch (kind) {
    case "subscribe": {
      const from = required(frame, "from_seq");
      if (typeof from !== "number" || !Number.isSafeInteger(from) || from < 1) {
        throw invalid(`"from_seq" must be an integer >= 1, got ${JSON.stringify(from)}`);
      }
      return { type: kind, ref, from_seq: from };
    }
    case "message":
      return { type: kind, ref, content: readContent(required(frame, "content")) };
    case "steer": {
      const wake = frame.wake ?? false;
      if (typeof wake !== "boolean") {
        throw invalid(`"wake" must be a boolean, got ${JSON.stringify(wake)}`);
      }
      return { type: kind, ref, content: readContent(required(frame, "content")), wake };
    }
    case "cancel":
      return { type: kind, ref, reason: readReason(frame.reason) };
    case "set_policy": {
      const allow = required(frame, "allow");
      if (!Array.isArray(allow) || allow.length > MAX_POLICY_PATTERNS) {
        throw invalid(`"allow" must be an array of at most ${MAX_POLICY_PATTERNS} patterns`);
      }
      allow.forEach((pattern, index) => {
        if (
          typeof pattern !== "string" || pattern.length === 0 ||
          pattern.length > MAX_PATTERN_LENGTH
        ) {
          throw invalid(
            `"allow[${index}]" must be a non-empty string of at most ${MAX_PATTERN_LENGTH} characters`,
          );
        }
      });
      return { type: kind, ref, allow: allow as string[] };
    }
    case "approve": {
      const requestId = required(frame, "request_id");
      if (typeof requestId !== "string" || requestId.length === 0 || requestId.length > 256) {
        throw invalid(`"request_id" must be a non-empty string of at most 256 characters`);
      }
      const decision = required(frame, "decision");
      if (decision !== "allow" && decision !== "deny") {
        throw invalid(`"decision" must be "allow" or "deny", got ${JSON.stringify(decision)}`);
      }
      const remember = frame.remember ?? false;
      if (typeof remember !== "boolean") {
        throw invalid(`"remember" must be a boolean, got ${JSON.stringify(remember)}`);
      }
      return {
        type: kind,
        ref,
        request_id: requestId,
        decision,
        reason: readReason(frame.reason),
        remember,
      };
    }
    case "set_persona": {
      const content = required(frame, "content");
      if (typeof content !== "string" || content.length > MAX_PERSONA_LENGTH) {
        throw invalid(`"content" must be a string of at most ${MAX_PERSONA_LENGTH} characters`);
      }
      const replace = frame.replace ?? false;
      if (typeof replace !== "boolean") {
        throw invalid(`"replace" must be a boolean, got ${JSON.stringify(replace)}`);
      }
      if (content === "" && !replace) {
        throw invalid(
          `"content" must not be empty unless "replace" is true (which clears the persona)`,
        );
      }
      return { type: kind, ref, content, replace };
    }
    case "compact": {
      const instructions = frame.instructions;
      if (
        instructions !== undefined &&
        (typeof instructions !== "string" || instructions.length > MAX_COMPACT_INSTRUCTIONS)
      ) {
        throw invalid(
          `"instructions" must be a string of at most ${MAX_COMPACT_INSTRUCTIONS} characters`,
        );
      }
      return { type: kind, ref, instructions };
    }
    case "dispose":
      return { type: kind, ref };
  }
}

function required(frame: Record<string, unknown>, key: string): unknown {
  if (!(key in frame)) throw invalid(`"${key}" is missing`);
  return frame[key];
}

function readReason(reason: unknown): string | undefined {
  if (reason === undefined) return undefined;
  if (typeof reason !== "string" || reason.length > MAX_REASON_LENGTH) {
    throw invalid(`"reason" must be a string of at most ${MAX_REASON_LENGTH} characters`);
  }
  return reason;
}

function readContent(content: unknown): Content {
  if (typeof content === "string" && content.length > 0) return content;
  if (!Array.isArray(content) || content.length === 0) {
    throw invalid(`"content" must be a non-empty string or a non-empty array of content parts`);
  }
  content.forEach((part, index) => {
    const at = `content[${index}]`;
    if (typeof part !== "object" || part === null || Array.isArray(part)) {
      throw invalid(`"${at}" must be an object`);
    }
    const fields = part as Record<string, unknown>;
    if (fields.type === "text") {
      if (typeof fields.text !== "string") throw invalid(`"${at}.text" must be a string`);
      only(fields, ["type", "text"], at);
    } else if (fields.type === "image") {
      only(fields, ["type", "url", "data", "media_type"], at);
      for (const key of ["url", "data", "media_type"]) {
        if (key in fields && typeof fields[key] !== "string") {
          throw invalid(`"${at}.${key}" must be a string`);
        }
      }
      const byUrl = "url" in fields && !("data" in fields);
      const byData = "data" in fields && "media_type" in fields && !("url" in fields);
      if (!byUrl && !byData) {
        throw invalid(`"${at}" must have a "url", or "data" and "media_type"`);
      }
    } else {
      throw invalid(`"${at}.type" must be "text" or "image"`);
    }
  });
  return content as Content;
}

function only(fields: Record<string, unknown>, allowed: readonly string[], at: string): void {
  for (const key of Object.keys(fields)) {
    if (!allowed.includes(key)) throw invalid(`unknown field "${at}.${key}"`);
  }
}

function invalid(message: string): Refused {
  return new Refused("invalid_field", message);
}

function refusal(ref: FrameRef | null, code: ErrorCode, message: string): FrameRefusal {
  return { ref, code, message };
}
