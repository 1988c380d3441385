/**
 * The output cap: the one place a tool result's size is bounded before it reaches the log and the model.
 *
 * @module
 */
import type { ImagePart, TextPart } from "../llm/vocabulary.ts";
import type { ToolContent } from "./tool.ts";

/** The default cap, in UTF-8 bytes (the `tools` row's `max_output_bytes`). */
export const DEFAULT_MAX_OUTPUT_BYTES = 65_536;

/** The smallest cap accepted: room for the truncation marker and some output. */
export const MIN_MAX_OUTPUT_BYTES = 1_024;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The truncation marker appended to cut text: it says how much was kept of how much, so a model knows to narrow
 * its request.
 */
export function truncationMarker(keptBytes: number, totalBytes: number): string {
  return `\n\n[output truncated: showing the first ${keptBytes} of ${totalBytes} bytes; ` +
    `narrow the request to see the rest]`;
}

/**
 * Caps content at `maxBytes` UTF-8 bytes, marker included.
 *
 * Text is cut at a character boundary and ends with {@linkcode truncationMarker}. For parts, text and image bytes
 * (an image's `data` or `url`) share the budget in order: the part that crosses it is cut (text) or replaced by a
 * text note (image), and every part after it is dropped, counted in the final note.
 *
 * @param content the content to cap
 * @param maxBytes the cap, at least {@linkcode MIN_MAX_OUTPUT_BYTES}
 * @returns `content` itself when it fits, else the capped copy
 * @throws {RangeError} when `maxBytes` is below the minimum
 *
 * @example
 * ```ts
 * import { capContent } from "@terret/core/tools";
 * const capped = capContent("x".repeat(5000), 1024) as string;
 * console.log(new TextEncoder().encode(capped).length <= 1024); // true
 * ```
 */
export function capContent(content: ToolContent, maxBytes: number): ToolContent {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < MIN_MAX_OUTPUT_BYTES) {
    throw new RangeError(
      `Cannot cap tool output at ${maxBytes} bytes: the cap must be an integer of at least ${MIN_MAX_OUTPUT_BYTES}`,
    );
  }
  if (typeof content === "string") return capText(content, maxBytes);
  return capParts(content, maxBytes);
}

function capText(text: string, maxBytes: number): string {
  if (text.length <= maxBytes / 3) return text;
  const bytes = encoder.encode(text);
  if (bytes.length <= maxBytes) return text;
  const room = maxBytes - byteLength(truncationMarker(maxBytes, bytes.length));
  const kept = cutUtf8(bytes, room);
  return decoder.decode(kept) + truncationMarker(kept.length, bytes.length);
}

function capParts(parts: readonly (TextPart | ImagePart)[], maxBytes: number): ToolContent {
  const sizes = parts.map(partBytes);
  const total = sizes.reduce((sum, size) => sum + size, 0);
  if (total <= maxBytes) return parts;
  const note = (dropped: number): string =>
    `[output truncated: ${total} bytes exceed the ${maxBytes}-byte cap; ${dropped} later part(s) omitted]`;
  const reserve = byteLength(note(parts.length)) + byteLength(truncationMarker(maxBytes, total));
  const budget = maxBytes - reserve;
  const out: (TextPart | ImagePart)[] = [];
  let used = 0;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    const size = sizes[i]!;
    if (used + size <= budget) {
      out.push(part);
      used += size;
      continue;
    }
    if (part.type === "text") {
      const bytes = encoder.encode(part.text);
      const kept = cutUtf8(bytes, Math.max(0, budget - used));
      out.push({
        type: "text",
        text: decoder.decode(kept) + truncationMarker(kept.length, bytes.length),
      });
    } else {
      out.push({ type: "text", text: `[image omitted: ${size} bytes do not fit the output cap]` });
    }
    const dropped = parts.length - i - 1;
    if (dropped > 0) out.push({ type: "text", text: note(dropped) });
    return out;
  }
  return out;
}

function partBytes(part: TextPart | ImagePart): number {
  if (part.type === "text") return byteLength(part.text);
  return byteLength(part.data ?? "") + byteLength(part.url ?? "") +
    byteLength(part.media_type ?? "");
}

/** The UTF-8 length of `text`. */
export function byteLength(text: string): number {
  if (text.length * 3 <= 1024) {
    let ascii = true;
    for (let i = 0; i < text.length && ascii; i++) ascii = text.charCodeAt(i) < 0x80;
    if (ascii) return text.length;
  }
  return encoder.encode(text).length;
}

/** The longest prefix of `bytes` of at most `limit` bytes that ends on a character boundary. */
function cutUtf8(bytes: Uint8Array, limit: number): Uint8Array {
  if (bytes.length <= limit) return bytes;
  let end = Math.max(0, limit);
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end);
}
