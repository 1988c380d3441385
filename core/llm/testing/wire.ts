/**
 * Builders for OpenRouter's wire: SSE transcripts, stream chunks, whole turns, JSON errors, and the example
 * transcripts of PROTOCOLS.md §1.10.
 *
 * @module
 */
import type { ScriptedResponse } from "./fake_openrouter.ts";

/** A scripted SSE response (status 200) for a transcript made with {@linkcode sse} or a turn builder. */
export function sseResponse(
  transcript: string,
  options: Omit<ScriptedResponse, "body"> = {},
): ScriptedResponse {
  return { ...options, body: transcript };
}

/** A scripted OpenRouter-shaped JSON error: `{"error":{"code":status,"message":…}}`. */
export function jsonError(
  status: number,
  message: string,
  options: { readonly headers?: Readonly<Record<string, string>>; readonly metadata?: unknown } =
    {},
): ScriptedResponse {
  const error = options.metadata === undefined
    ? { code: status, message }
    : { code: status, message, metadata: options.metadata };
  return {
    status,
    headers: { "content-type": "application/json", ...options.headers },
    body: JSON.stringify({ error }),
  };
}

/**
 * An SSE transcript: an object becomes a `data:` event of its JSON, `"[DONE]"` the end marker, a string starting
 * with `:` a comment line (a keepalive), and `{ raw }` is written verbatim. Every event ends with a blank line.
 *
 * @example
 * ```ts
 * import { sse } from "@terret/core/testing";
 * sse(": OPENROUTER PROCESSING", { a: 1 }, "[DONE]");
 * // ": OPENROUTER PROCESSING\n\ndata: {\"a\":1}\n\ndata: [DONE]\n\n"
 * ```
 */
export function sse(...items: readonly (object | string)[]): string {
  return items.map((item) => {
    if (typeof item === "string") {
      if (item === "[DONE]") return "data: [DONE]\n\n";
      if (item.startsWith(":")) return `${item}\n\n`;
      throw new TypeError(`Cannot encode SSE item "${item}": use "[DONE]", ": comment" or { raw }`);
    }
    if ("raw" in item && typeof item.raw === "string") return item.raw;
    return `data: ${JSON.stringify(item)}\n\n`;
  }).join("");
}

/** Identity fields of scripted chunks. */
export interface ChunkOptions {
  /** The generation id (default `gen-1764430000-test`). */
  readonly id?: string;
  /** The model slug (default `test/model`). */
  readonly model?: string;
  /** The upstream provider (default `Test`). */
  readonly provider?: string;
  /** The creation time, epoch seconds. */
  readonly created?: number;
  /** The choice's finish reason (default `null`). */
  readonly finish_reason?: string | null;
  /** The provider's raw finish reason (default `null`). */
  readonly native_finish_reason?: string | null;
}

const DEFAULTS = {
  id: "gen-1764430000-test",
  model: "test/model",
  provider: "Test",
  created: 1764430000,
};

/** The fields that open every chunk, in OpenRouter's order. */
function chunkHeader(options: ChunkOptions): Record<string, unknown> {
  return {
    id: options.id ?? DEFAULTS.id,
    provider: options.provider ?? DEFAULTS.provider,
    model: options.model ?? DEFAULTS.model,
    object: "chat.completion.chunk",
    created: options.created ?? DEFAULTS.created,
  };
}

/** One OpenRouter stream chunk with a single choice carrying `delta`. */
export function chunk(
  delta: Readonly<Record<string, unknown>>,
  options: ChunkOptions = {},
): Record<string, unknown> {
  return {
    ...chunkHeader(options),
    choices: [{
      index: 0,
      delta,
      finish_reason: options.finish_reason ?? null,
      native_finish_reason: options.native_finish_reason ?? null,
    }],
  };
}

/** Usage figures of {@linkcode usageChunk}. */
export interface UsageFigures {
  /** Prompt tokens. */
  readonly prompt_tokens: number;
  /** Completion tokens. */
  readonly completion_tokens: number;
  /** Cost in credits (default 0). */
  readonly cost?: number;
  /** Prompt tokens read from cache (default 0). */
  readonly cached_tokens?: number;
  /** Reasoning tokens (default 0). */
  readonly reasoning_tokens?: number;
}

/** OpenRouter's final usage chunk (empty `choices`). */
export function usageChunk(
  usage: UsageFigures,
  options: ChunkOptions = {},
): Record<string, unknown> {
  return {
    ...chunkHeader(options),
    choices: [],
    usage: {
      prompt_tokens: usage.prompt_tokens,
      completion_tokens: usage.completion_tokens,
      total_tokens: usage.prompt_tokens + usage.completion_tokens,
      cost: usage.cost ?? 0,
      is_byok: false,
      prompt_tokens_details: { cached_tokens: usage.cached_tokens ?? 0 },
      completion_tokens_details: { reasoning_tokens: usage.reasoning_tokens ?? 0 },
    },
  };
}

/** Options of the turn builders. */
export interface TurnOptions extends ChunkOptions {
  /** The usage chunk's figures (default 10 prompt, 5 completion tokens, no cost). */
  readonly usage?: UsageFigures;
  /** Start with a `: OPENROUTER PROCESSING` keepalive (default true). */
  readonly keepalive?: boolean;
}

/** A whole plain text turn: keepalive, one chunk per piece, a `stop` finish, usage, `[DONE]`. */
export function textTurn(pieces: string | readonly string[], options: TurnOptions = {}): string {
  const texts = typeof pieces === "string" ? [pieces] : pieces;
  return sse(
    ...(options.keepalive === false ? [] : [": OPENROUTER PROCESSING"]),
    ...texts.map((text) => chunk({ role: "assistant", content: text }, options)),
    chunk({ role: "assistant", content: "" }, {
      ...options,
      finish_reason: "stop",
      native_finish_reason: "stop",
    }),
    usageChunk(options.usage ?? { prompt_tokens: 10, completion_tokens: 5 }, options),
    "[DONE]",
  );
}

/** One tool call of {@linkcode toolCallTurn}. */
export interface ScriptedToolCall {
  /** The call id. */
  readonly id: string;
  /** The tool name. */
  readonly name: string;
  /** The arguments: an object (sent as JSON) or the raw argument text. */
  readonly args: Readonly<Record<string, unknown>> | string;
  /** Into how many fragments the argument text is split (default 2). */
  readonly fragments?: number;
}

/**
 * A whole tool-calling turn: optional text first, then each call (a header fragment with id and name, then its
 * argument fragments), a `tool_calls` finish, usage, `[DONE]`.
 */
export function toolCallTurn(
  calls: readonly ScriptedToolCall[],
  options: TurnOptions & { readonly text?: string } = {},
): string {
  const items: object[] = [];
  if (options.text !== undefined) {
    items.push(chunk({ role: "assistant", content: options.text }, options));
  }
  calls.forEach((call, index) => {
    const header = {
      index,
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: "" },
    };
    items.push(chunk({ role: "assistant", content: null, tool_calls: [header] }, options));
    const text = typeof call.args === "string" ? call.args : JSON.stringify(call.args);
    const count = Math.max(1, call.fragments ?? 2);
    const size = Math.ceil(text.length / count);
    for (let offset = 0; offset < text.length; offset += size) {
      const fragment = { index, function: { arguments: text.slice(offset, offset + size) } };
      items.push(chunk({ tool_calls: [fragment] }, options));
    }
  });
  items.push(
    chunk({}, { ...options, finish_reason: "tool_calls", native_finish_reason: "tool_calls" }),
  );
  items.push(usageChunk(options.usage ?? { prompt_tokens: 10, completion_tokens: 5 }, options));
  return sse(
    ...(options.keepalive === false ? [] : [": OPENROUTER PROCESSING"]),
    ...items,
    "[DONE]",
  );
}

/**
 * The example transcripts of PROTOCOLS.md §1.10, byte for byte, plus a reasoning turn: what OpenRouter sends for a
 * plain text turn, a parallel two-tool-call turn (fragments interleaved by `index`), a mid-stream error at HTTP 200,
 * and a reasoning turn (`reasoning` deltas, `reasoning_details` with a signature, then text).
 */
export const TRANSCRIPTS: Readonly<{
  plainText: string;
  parallelTools: string;
  midStreamError: string;
  reasoning: string;
}> = Object.freeze({
  plainText: [
    ": OPENROUTER PROCESSING",
    "",
    ": OPENROUTER PROCESSING",
    "",
    'data: {"id":"gen-1764430000-k3Xq","provider":"Anthropic","model":"anthropic/claude-sonnet-4.5","object":"chat.completion.chunk","created":1764430000,"choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null,"native_finish_reason":null}]}',
    "",
    'data: {"id":"gen-1764430000-k3Xq","provider":"Anthropic","model":"anthropic/claude-sonnet-4.5","object":"chat.completion.chunk","created":1764430000,"choices":[{"index":0,"delta":{"role":"assistant","content":" — how can I help?"},"finish_reason":null,"native_finish_reason":null}]}',
    "",
    'data: {"id":"gen-1764430000-k3Xq","provider":"Anthropic","model":"anthropic/claude-sonnet-4.5","object":"chat.completion.chunk","created":1764430000,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop","native_finish_reason":"end_turn"}]}',
    "",
    'data: {"id":"gen-1764430000-k3Xq","provider":"Anthropic","model":"anthropic/claude-sonnet-4.5","object":"chat.completion.chunk","created":1764430000,"choices":[],"usage":{"prompt_tokens":1830,"completion_tokens":9,"total_tokens":1839,"cost":0.005625,"is_byok":false,"prompt_tokens_details":{"cached_tokens":1536,"cache_write_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}',
    "",
    "data: [DONE]",
    "",
    "",
  ].join("\n"),
  parallelTools: [
    ": OPENROUTER PROCESSING",
    "",
    'data: {"id":"gen-1764430100-Pq7w","provider":"OpenAI","model":"openai/gpt-5.2","object":"chat.completion.chunk","created":1764430100,"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_A1","type":"function","function":{"name":"read_file","arguments":""}}]},"finish_reason":null}]}',
    "",
    'data: {"id":"gen-1764430100-Pq7w","provider":"OpenAI","model":"openai/gpt-5.2","object":"chat.completion.chunk","created":1764430100,"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"path\\":\\"src/"}}]},"finish_reason":null}]}',
    "",
    'data: {"id":"gen-1764430100-Pq7w","provider":"OpenAI","model":"openai/gpt-5.2","object":"chat.completion.chunk","created":1764430100,"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_B2","type":"function","function":{"name":"grep","arguments":""}}]},"finish_reason":null}]}',
    "",
    'data: {"id":"gen-1764430100-Pq7w","provider":"OpenAI","model":"openai/gpt-5.2","object":"chat.completion.chunk","created":1764430100,"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"main.ts\\"}"}}]},"finish_reason":null}]}',
    "",
    'data: {"id":"gen-1764430100-Pq7w","provider":"OpenAI","model":"openai/gpt-5.2","object":"chat.completion.chunk","created":1764430100,"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\\"pattern\\":\\"TODO\\",\\"dir\\":\\".\\"}"}}]},"finish_reason":null}]}',
    "",
    'data: {"id":"gen-1764430100-Pq7w","provider":"OpenAI","model":"openai/gpt-5.2","object":"chat.completion.chunk","created":1764430100,"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls","native_finish_reason":"tool_calls"}]}',
    "",
    'data: {"id":"gen-1764430100-Pq7w","provider":"OpenAI","model":"openai/gpt-5.2","object":"chat.completion.chunk","created":1764430100,"choices":[],"usage":{"prompt_tokens":2410,"completion_tokens":41,"total_tokens":2451,"cost":0.00343,"prompt_tokens_details":{"cached_tokens":2048},"completion_tokens_details":{"reasoning_tokens":0}}}',
    "",
    "data: [DONE]",
    "",
    "",
  ].join("\n"),
  midStreamError: [
    ": OPENROUTER PROCESSING",
    "",
    'data: {"id":"gen-1764430200-Zz9e","provider":"DeepInfra","model":"qwen/qwen3-235b-a22b","object":"chat.completion.chunk","created":1764430200,"choices":[{"index":0,"delta":{"role":"assistant","content":"Here is the refactored"},"finish_reason":null}]}',
    "",
    'data: {"id":"gen-1764430200-Zz9e","provider":"DeepInfra","model":"qwen/qwen3-235b-a22b","object":"chat.completion.chunk","created":1764430200,"error":{"code":502,"message":"Provider disconnected unexpectedly","metadata":{"error_type":"provider_unavailable","provider_code":"upstream_disconnect"}},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}',
    "",
    "data: [DONE]",
    "",
    "",
  ].join("\n"),
  reasoning: sse(
    ": OPENROUTER PROCESSING",
    chunk({
      role: "assistant",
      content: "",
      reasoning: "The user wants ",
      reasoning_details: [{
        type: "reasoning.text",
        text: "The user wants ",
        format: "anthropic-claude-v1",
        index: 0,
      }],
    }, { id: "gen-1764430300-Rz1", model: "anthropic/claude-sonnet-4.5", provider: "Anthropic" }),
    chunk({
      role: "assistant",
      content: "",
      reasoning: "a haiku — short.",
      reasoning_details: [{
        type: "reasoning.text",
        text: "a haiku — short.",
        format: "anthropic-claude-v1",
        index: 0,
      }],
    }, { id: "gen-1764430300-Rz1", model: "anthropic/claude-sonnet-4.5", provider: "Anthropic" }),
    chunk({
      role: "assistant",
      content: "",
      reasoning_details: [{
        type: "reasoning.text",
        signature: "EqQBCkYIARgCIkD1sig==",
        format: "anthropic-claude-v1",
        index: 0,
      }],
    }, { id: "gen-1764430300-Rz1", model: "anthropic/claude-sonnet-4.5", provider: "Anthropic" }),
    chunk(
      { role: "assistant", content: "Autumn moonlight —\n" },
      { id: "gen-1764430300-Rz1", model: "anthropic/claude-sonnet-4.5", provider: "Anthropic" },
    ),
    chunk(
      { role: "assistant", content: "a worm digs silently 🌙" },
      { id: "gen-1764430300-Rz1", model: "anthropic/claude-sonnet-4.5", provider: "Anthropic" },
    ),
    chunk({ role: "assistant", content: "" }, {
      id: "gen-1764430300-Rz1",
      model: "anthropic/claude-sonnet-4.5",
      provider: "Anthropic",
      finish_reason: "stop",
      native_finish_reason: "end_turn",
    }),
    usageChunk({
      prompt_tokens: 52,
      completion_tokens: 31,
      cost: 0.000621,
      cached_tokens: 0,
      reasoning_tokens: 12,
    }, { id: "gen-1764430300-Rz1", model: "anthropic/claude-sonnet-4.5", provider: "Anthropic" }),
    "[DONE]",
  ),
});
