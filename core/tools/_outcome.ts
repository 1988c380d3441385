/**
 * Outcomes of the tool pipeline: what a handler or listener returned, checked and turned into `{content,
 * is_error}`, and the model-facing messages of the failures. Internal to the registry.
 *
 * @module
 */
import type { ImagePart, TextPart } from "../llm/vocabulary.ts";
import type { SchemaIssue } from "./json_schema.ts";
import type { ToolContent, ToolOutcome } from "./tool.ts";

/** Turns what a handler returned into an outcome. */
export function toOutcome(name: string, value: unknown): ToolOutcome {
  if (value === undefined || value === null) return { content: "", is_error: false };
  if (typeof value === "string") return { content: value, is_error: false };
  if (Array.isArray(value)) return partsOutcome(name, value, false);
  if (isPlainObject(value) && "content" in value) {
    const isError = value.is_error ?? false;
    if (typeof isError !== "boolean") {
      return failure(`Tool "${name}" returned an invalid result: is_error must be a boolean`);
    }
    const details = isPlainObject(value.details) ? { details: value.details } : {};
    if (typeof value.content === "string") {
      return { content: value.content, is_error: isError, ...details };
    }
    if (Array.isArray(value.content)) {
      return { ...partsOutcome(name, value.content, isError), ...details };
    }
  }
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    json = undefined;
  }
  return { content: json ?? String(value), is_error: false };
}

/** An outcome from content parts, or an error naming the first part that is not text or an image. */
function partsOutcome(name: string, parts: unknown[], isError: boolean): ToolOutcome {
  const bad = parts.findIndex((part) => !isContentPart(part));
  if (bad >= 0) {
    return failure(
      `Tool "${name}" returned an invalid result: part ${bad} is not a text or image part`,
    );
  }
  return { content: parts as (TextPart | ImagePart)[], is_error: isError };
}

/** True for a text part or an image part (by data or URL). */
function isContentPart(part: unknown): boolean {
  if (!isPlainObject(part)) return false;
  if (part.type === "text") return typeof part.text === "string";
  if (part.type !== "image") return false;
  return (typeof part.data === "string" || typeof part.url === "string") &&
    (part.media_type === undefined || typeof part.media_type === "string");
}

/** Checks what a listener chain returned; a malformed value is a listener bug, reported as an error result. */
export function checkOutcome(value: unknown, stage: string): ToolOutcome {
  if (isPlainObject(value) && typeof value.is_error === "boolean") {
    const details = isPlainObject(value.details) ? { details: value.details } : {};
    if (typeof value.content === "string") {
      return { content: value.content, is_error: value.is_error, ...details };
    }
    if (Array.isArray(value.content) && value.content.every(isContentPart)) {
      return {
        content: value.content as (TextPart | ImagePart)[],
        is_error: value.is_error,
        ...details,
      };
    }
  }
  throw new TypeError(`a ${stage} listener returned something other than {content, is_error}`);
}

/** The model-facing message for arguments that fail the tool's schema. */
export function invalidArguments(name: string, issues: readonly SchemaIssue[]): string {
  const listed = issues.slice(0, 10).map((issue) =>
    `${issue.path.length === 0 ? "(arguments)" : issue.path.join(".")}: ${issue.message}`
  );
  if (issues.length > 10) listed.push(`and ${issues.length - 10} more`);
  return `Invalid arguments for tool "${name}": ${listed.join("; ")}. Call the tool again with ` +
    "arguments matching its schema.";
}

/** The outcome of a cancelled call, quoting the abort reason. */
export function cancelled(name: string, signal: AbortSignal, started: boolean): ToolOutcome {
  const reason = signal.reason instanceof Error
    ? signal.reason.message
    : typeof signal.reason === "string"
    ? signal.reason
    : "cancelled";
  return failure(
    started
      ? `The call to "${name}" was cancelled before it finished (${reason}); it may have had partial effects.`
      : `The call to "${name}" was cancelled before it started (${reason}).`,
  );
}

/** An error outcome with a model-facing message. */
export function failure(content: string): ToolOutcome {
  return { content, is_error: true };
}

/** Content whose text is well-formed UTF-16 (lone surrogates replaced), so the log accepts it. */
export function wellFormed(content: ToolContent): ToolContent {
  if (typeof content === "string") return content.toWellFormed();
  return content.map((part) =>
    part.type === "text" && !part.text.isWellFormed()
      ? { ...part, text: part.text.toWellFormed() }
      : part
  );
}

/** True for a plain object (a JSON object), not an array, class instance or null. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
