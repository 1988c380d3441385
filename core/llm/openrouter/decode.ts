/**
 * Decoding of Chat Completions stream chunks (as OpenRouter and other OpenAI-compatible servers send them) into
 * provider-neutral stream events.
 *
 * @module
 */
import type { StreamDecoder } from "../adapter_base.ts";
import { toolCallEnd } from "../tool_call_end.ts";
import type { FinishReason, StreamEvent, StreamFailure, Usage } from "../vocabulary.ts";

interface ToolState {
  id: string;
  name: string;
  args: string;
  started: boolean;
  ended: boolean;
}

type Json = Record<string, unknown>;

const FINISH: Readonly<Record<string, FinishReason>> = {
  stop: "stop",
  length: "length",
  tool_calls: "tool_calls",
  function_call: "tool_calls",
  content_filter: "content_filter",
  error: "error",
};

/**
 * Decodes one Chat Completions stream into stream events.
 *
 * - The first chunk yields `message_start` (id and model of the generation).
 * - `delta.content` (and `delta.refusal`) yield `text_delta`; empty strings and `null` are skipped.
 * - `delta.reasoning` (or `reasoning_content`) yields `thinking_delta`; `delta.reasoning_details` blocks are merged
 *   in arrival order (pieces of one block concatenated: `text`, `summary`, `data`) and, when thinking gives way to text, a tool call or the
 *   finish, a `thinking_delta` with empty text carries them as `signature`: the JSON text of every block of the
 *   message so far (cumulative, so the last signature is the whole replay value).
 * - Tool calls are assembled by `index`: `tool_call_start` comes with the first argument fragment, each fragment
 *   yields `tool_call_delta`, and the first `finish_reason` ends every open call (`tool_call_end`, arguments parsed).
 * - `usage` is taken from whichever chunk carries it (the last one wins); a repeated `finish_reason` is ignored.
 * - `[DONE]` (or the end of the body after a finish reason) yields `usage` then `message_stop`.
 * - A chunk with `error` (or `finish_reason: "error"`) yields an `error` of kind `provider`.
 */
export class ChatCompletionsDecoder implements StreamDecoder {
  #started = false;
  #messageId: string | undefined;
  readonly #tools = new Map<number, ToolState>();
  #lastToolIndex = 0;
  #finish: { reason: FinishReason; raw: string | undefined } | undefined;
  #usage: Usage | undefined;
  readonly #details: Json[] = [];
  #detailsPending = false;

  /** Handles one server-sent event; see the class description. */
  message(data: string, out: StreamEvent[], event?: string): boolean {
    if (data === "[DONE]") return this.#finalize(out);
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return fail(out, "protocol", `invalid JSON in a data line (${reason}): ${clip(data)}`, false);
    }
    if (typeof chunk !== "object" || chunk === null || Array.isArray(chunk)) {
      return fail(out, "protocol", `a data line is not a JSON object: ${clip(data)}`, false);
    }
    return this.chunk(chunk as Json, out, event);
  }

  /** Handles one parsed chunk (what `message` does after `JSON.parse`). */
  chunk(json: Readonly<Record<string, unknown>>, out: StreamEvent[], event?: string): boolean {
    if (event === "error" || json.error !== undefined && json.error !== null) {
      return providerError(out, json.error ?? json);
    }
    if (!this.#started) this.#start(json, out);
    const choices = json.choices;
    if (Array.isArray(choices) && choices.length > 0) {
      const choice = choices[0] as Json;
      const delta = choice.delta as Json | undefined;
      if (typeof delta === "object" && delta !== null) this.#delta(delta, out);
      const finish = choice.finish_reason;
      if (typeof finish === "string" && this.#finish === undefined) {
        if (finish === "error") {
          return fail(
            out,
            "provider",
            'the provider ended the stream with finish reason "error"',
            true,
          );
        }
        const native = choice.native_finish_reason;
        this.#finish = {
          reason: FINISH[finish] ?? "other",
          raw: typeof native === "string" ? native : finish,
        };
        this.#closeParts(out);
      }
    }
    const usage = json.usage;
    if (typeof usage === "object" && usage !== null) this.#usage = toUsage(usage as Json);
    return false;
  }

  /** The body ended without `[DONE]`: finishes normally after a finish reason, else reports a truncation. */
  end(out: StreamEvent[]): void {
    if (this.#finish !== undefined) {
      this.#finalize(out);
      return;
    }
    const what = this.#started
      ? "the connection closed before the response finished"
      : "the response ended before any data";
    fail(out, "network", what, true);
  }

  #start(json: Json, out: StreamEvent[]): void {
    this.#started = true;
    const id = typeof json.id === "string" && json.id !== "" ? json.id : undefined;
    const model = typeof json.model === "string" && json.model !== "" ? json.model : undefined;
    this.#messageId = id;
    out.push(
      id === undefined
        ? model === undefined ? { type: "message_start" } : { type: "message_start", model }
        : model === undefined
        ? { type: "message_start", id }
        : { type: "message_start", id, model },
    );
  }

  #delta(delta: Json, out: StreamEvent[]): void {
    // One pass over the keys the delta has (usually just role and content) instead of probing for each absent field.
    let content: unknown;
    let reasoning: unknown;
    let details: unknown;
    let refusal: unknown;
    let calls: unknown;
    for (const key in delta) {
      switch (key) {
        case "content":
          content = delta[key];
          break;
        case "reasoning":
          reasoning = delta[key] ?? reasoning;
          break;
        case "reasoning_content":
          reasoning ??= delta[key];
          break;
        case "reasoning_details":
          details = delta[key];
          break;
        case "refusal":
          refusal = delta[key];
          break;
        case "tool_calls":
          calls = delta[key];
          break;
      }
    }
    if (typeof reasoning === "string" || Array.isArray(details)) {
      this.#thinking(reasoning, details, out);
    }
    if (typeof content === "string" && content.length > 0) {
      if (this.#detailsPending) this.#flushSignature(out);
      out.push({ type: "text_delta", text: content });
    }
    if (typeof refusal === "string" && refusal.length > 0) {
      if (this.#detailsPending) this.#flushSignature(out);
      out.push({ type: "text_delta", text: refusal });
    }
    if (Array.isArray(calls)) {
      if (this.#detailsPending) this.#flushSignature(out);
      for (const call of calls) {
        if (typeof call === "object" && call !== null) this.#toolFragment(call as Json, out);
      }
    }
  }

  #thinking(reasoning: unknown, details: unknown, out: StreamEvent[]): void {
    let text = typeof reasoning === "string" ? reasoning : "";
    if (Array.isArray(details)) {
      for (const detail of details) {
        if (typeof detail !== "object" || detail === null) continue;
        const block = detail as Json;
        this.#mergeDetail(block);
        if (typeof reasoning !== "string") {
          const piece = block.type === "reasoning.summary" ? block.summary : block.text;
          if (typeof piece === "string") text += piece;
        }
      }
    }
    if (text.length > 0) out.push({ type: "thinking_delta", text });
  }

  #mergeDetail(block: Json): void {
    this.#detailsPending = true;
    const last = this.#details.at(-1);
    const sameBlock = last !== undefined && last.type === block.type &&
      (block.index === undefined || block.index === last.index);
    if (!sameBlock) {
      this.#details.push({ ...block });
      return;
    }
    for (const key in block) {
      const value = block[key];
      if (value === undefined || value === null) continue;
      if (typeof value === "string" && (key === "text" || key === "summary" || key === "data")) {
        const before = last[key];
        last[key] = typeof before === "string" ? before + value : value;
      } else {
        last[key] = value;
      }
    }
  }

  #flushSignature(out: StreamEvent[]): void {
    this.#detailsPending = false;
    out.push({ type: "thinking_delta", text: "", signature: JSON.stringify(this.#details) });
  }

  #toolFragment(call: Json, out: StreamEvent[]): void {
    const index = typeof call.index === "number" ? call.index : this.#lastToolIndex;
    this.#lastToolIndex = index;
    let tool = this.#tools.get(index);
    if (tool === undefined) {
      tool = { id: "", name: "", args: "", started: false, ended: false };
      this.#tools.set(index, tool);
    }
    if (tool.ended) return;
    if (tool.id === "" && typeof call.id === "string") tool.id = call.id;
    const fn = call.function as Json | undefined;
    if (typeof fn !== "object" || fn === null) return;
    if (typeof fn.name === "string" && !tool.started && fn.name !== tool.name) tool.name += fn.name;
    if (typeof fn.arguments === "string" && fn.arguments.length > 0) {
      if (!tool.started) this.#startTool(index, tool, out);
      tool.args += fn.arguments;
      out.push({ type: "tool_call_delta", index, argsDelta: fn.arguments });
    }
  }

  #startTool(index: number, tool: ToolState, out: StreamEvent[]): void {
    tool.started = true;
    if (tool.id === "") {
      tool.id = this.#messageId === undefined
        ? `call_${index}`
        : `call_${this.#messageId}_${index}`;
    }
    out.push({ type: "tool_call_start", index, id: tool.id, name: tool.name });
  }

  /** Ends thinking and every open tool call, in index order. */
  #closeParts(out: StreamEvent[]): void {
    if (this.#detailsPending) this.#flushSignature(out);
    const indices = [...this.#tools.keys()].sort((a, b) => a - b);
    for (const index of indices) {
      const tool = this.#tools.get(index)!;
      if (tool.ended) continue;
      if (!tool.started) this.#startTool(index, tool, out);
      tool.ended = true;
      out.push(toolCallEnd(index, tool.id, tool.name, tool.args));
    }
  }

  #finalize(out: StreamEvent[]): true {
    if (!this.#started) out.push({ type: "message_start" });
    this.#closeParts(out);
    const finish = this.#finish ?? {
      reason: this.#tools.size > 0 ? "tool_calls" as const : "stop" as const,
      raw: undefined,
    };
    if (this.#usage !== undefined) out.push({ type: "usage", usage: this.#usage });
    out.push(
      finish.raw === undefined
        ? { type: "message_stop", finishReason: finish.reason }
        : { type: "message_stop", finishReason: finish.reason, rawFinishReason: finish.raw },
    );
    return true;
  }
}

function toUsage(usage: Json): Usage {
  const input = numberOr(usage.prompt_tokens, 0);
  const output = numberOr(usage.completion_tokens, 0);
  const details = usage.prompt_tokens_details as Json | undefined | null;
  const cached = typeof details === "object" && details !== null
    ? numberOr(details.cached_tokens, undefined)
    : undefined;
  const cost = numberOr(usage.cost, undefined);
  const result: { -readonly [K in keyof Usage]: Usage[K] } = {
    input_tokens: input,
    output_tokens: output,
  };
  if (cached !== undefined) result.cached_tokens = cached;
  if (cost !== undefined) result.cost = cost;
  return result;
}

function numberOr<T extends number | undefined>(value: unknown, fallback: T): number | T {
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

function providerError(out: StreamEvent[], error: unknown): true {
  const body = typeof error === "object" && error !== null ? error as Json : { message: error };
  const code = body.code;
  const status = typeof code === "number" ? code : numberOr(body.http_status, undefined);
  const metadata = body.metadata as Json | undefined;
  const type = typeof metadata?.error_type === "string"
    ? metadata.error_type
    : typeof body.error_type === "string"
    ? body.error_type
    : undefined;
  const message = typeof body.message === "string" ? body.message : JSON.stringify(body);
  const label = [status ?? (typeof code === "string" ? code : undefined), type]
    .filter((part) => part !== undefined).join(", ");
  const text = `provider error${label === "" ? "" : ` (${label})`}: ${shorten(message)}`;
  return fail(out, "provider", text, isRetryableProviderError(status, type), status);
}

const RETRYABLE_TYPES = new Set([
  "rate_limit_exceeded",
  "provider_overloaded",
  "provider_unavailable",
  "server",
  "timeout",
]);

function isRetryableProviderError(status: number | undefined, type: string | undefined): boolean {
  if (type !== undefined) return RETRYABLE_TYPES.has(type);
  return status === undefined || status === 408 || status === 429 || status >= 500;
}

function fail(
  out: StreamEvent[],
  kind: StreamFailure["kind"],
  detail: string,
  retryable: boolean,
  status?: number,
): true {
  const message = `Cannot complete the model stream: ${detail}`;
  out.push({
    type: "error",
    error: status === undefined
      ? { kind, message, retryable }
      : { kind, message, retryable, status },
  });
  return true;
}

function shorten(text: string): string {
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

function clip(text: string): string {
  return text.length > 200 ? `${JSON.stringify(text.slice(0, 200))}…` : JSON.stringify(text);
}
