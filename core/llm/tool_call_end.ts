/**
 * The end of a streamed tool call: its accumulated argument text parsed into the `tool_call_end` event every
 * adapter (and the scripted test adapter) yields. Internal to the LLM layer.
 *
 * @module
 */
import type { StreamEvent } from "./vocabulary.ts";

/**
 * The `tool_call_end` event for a call whose arguments arrived as `raw`: empty text is no arguments (`{}`); text
 * that is not JSON, or JSON that is not an object, leaves `args` undefined and says why in `argsError` (with the raw
 * text), so the loop can answer the model instead of running the tool.
 */
export function toolCallEnd(index: number, id: string, name: string, raw: string): StreamEvent {
  const base = { type: "tool_call_end" as const, index, id, name };
  if (raw.trim() === "") return { ...base, args: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { ...base, args: undefined, argsError: { message: `Invalid JSON: ${reason}`, raw } };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return {
      ...base,
      args: undefined,
      argsError: { message: "The arguments are not a JSON object", raw },
    };
  }
  return { ...base, args: parsed as Record<string, unknown> };
}
