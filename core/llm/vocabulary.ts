/**
 * The provider-neutral model vocabulary: messages and their parts, tool schemas, requests, usage, and the stream
 * events every adapter yields.
 *
 * Message parts use the wire's snake_case field names because they are exactly what the session log stores
 * (`assistant/message` parts, `tool/result` payloads): `derive_messages` is a projection, not a translation.
 *
 * @module
 */

/** Plain text. */
export interface TextPart {
  readonly type: "text";
  readonly text: string;
}

/** An image, by URL (including `data:` URLs) or inline base64 data with its media type. */
export interface ImagePart {
  readonly type: "image";
  /** An `https:` or `data:` URL. */
  readonly url?: string;
  /** Base64 bytes, when not given by URL. */
  readonly data?: string;
  /** The media type of `data` (`image/png`, …). */
  readonly media_type?: string;
}

/** Model reasoning, kept as a first-class part so it can be replayed (with its provider signature). */
export interface ThinkingPart {
  readonly type: "thinking";
  readonly text: string;
  /** The provider's opaque signature or encrypted reasoning, replayed verbatim when present. */
  readonly signature?: string;
}

/** A tool call the model made. `args` is the parsed JSON object of its arguments. */
export interface ToolCallPart {
  readonly type: "tool_call";
  /** The provider's call id, echoed by the matching result. */
  readonly id: string;
  readonly name: string;
  readonly args: Readonly<Record<string, unknown>>;
}

/** The result of one tool call, addressed to the model. */
export interface ToolResultPart {
  readonly type: "tool_result";
  /** The id of the call it answers. */
  readonly id: string;
  readonly name: string;
  /** Text, or text and image parts. */
  readonly content: string | readonly (TextPart | ImagePart)[];
  readonly is_error: boolean;
}

/** Any message part. */
export type Part = TextPart | ImagePart | ThinkingPart | ToolCallPart | ToolResultPart;

/** Who a message is from. System instructions travel in {@linkcode LlmRequest.system}, not as messages. */
export type Role = "user" | "assistant" | "tool";

/**
 * One message of model history.
 *
 * `user` messages carry text and image parts; `assistant` messages carry text, thinking and tool-call parts;
 * `tool` messages carry exactly one tool-result part.
 */
export interface Message {
  readonly role: Role;
  readonly parts: readonly Part[];
}

/** A tool offered to the model: its name, description and JSON Schema for the arguments object. */
export interface ToolSchema {
  readonly name: string;
  readonly description: string;
  readonly parameters: Readonly<Record<string, unknown>>;
}

/** The model roles a deployment maps to models (config rows `llm.<role>`). */
export type ModelRole = "main" | "titler" | "compactor" | "subagent";

/** One model request, provider-neutral. */
export interface LlmRequest {
  /** The assembled system prompt (byte-stable across steps for prompt caching). */
  readonly system?: string;
  /** The model history, as projected from the session log. */
  readonly messages: readonly Message[];
  /** The tools offered on this step. */
  readonly tools?: readonly ToolSchema[];
  /** Overrides the adapter's configured model. */
  readonly model?: string;
  /** Extra provider parameters (temperature, max tokens, …), merged over the adapter's configured params. */
  readonly params?: Readonly<Record<string, unknown>>;
}

/** Token usage and cost of one request, as stored in `step/end` (wire field names). */
export interface Usage {
  readonly input_tokens: number;
  readonly output_tokens: number;
  /** Prompt tokens served from the provider's cache, when reported. */
  readonly cached_tokens?: number;
  /** Cost in the provider's billing unit (USD credits on OpenRouter), when reported. */
  readonly cost?: number;
}

/** Why a model stopped. Unknown provider reasons map to `"other"` (the raw value is kept on the event). */
export type FinishReason = "stop" | "tool_calls" | "length" | "content_filter" | "error" | "other";

/** A failure the adapter reports as data at the end of a stream. */
export interface StreamFailure {
  /**
   * What failed: `http` (a non-success status), `network` (connect or mid-stream transport failure), `provider`
   * (an error chunk inside a 200 stream), `protocol` (bytes the adapter could not understand), `aborted`.
   */
  readonly kind: "http" | "network" | "provider" | "protocol" | "aborted";
  readonly message: string;
  /** The HTTP status or provider error code, when there is one. */
  readonly status?: number;
  /** Whether retrying the whole request could succeed. */
  readonly retryable: boolean;
}

/**
 * What an adapter's stream yields, in order: `message_start`, then any interleaving of text, thinking and tool-call
 * events, then `usage` (when reported) and exactly one of `message_stop` or `error`, which always ends the stream.
 *
 * An `error` may come without a preceding `message_start` when the request failed before any response was
 * received (a refused connection, an HTTP error status). A `thinking_delta` may carry `signature` (with `text`
 * possibly empty): it is the complete opaque replay value of the thinking so far, and a later one replaces an
 * earlier one, so a consumer keeps the last signature it saw for the thinking part.
 */
export type StreamEvent =
  | { readonly type: "message_start"; readonly id?: string; readonly model?: string }
  | { readonly type: "text_delta"; readonly text: string }
  | { readonly type: "thinking_delta"; readonly text: string; readonly signature?: string }
  | {
    readonly type: "tool_call_start";
    readonly index: number;
    readonly id: string;
    readonly name: string;
  }
  | { readonly type: "tool_call_delta"; readonly index: number; readonly argsDelta: string }
  | {
    readonly type: "tool_call_end";
    readonly index: number;
    readonly id: string;
    readonly name: string;
    /** The parsed arguments; `undefined` with `argsError` set when the model sent invalid JSON. */
    readonly args: Readonly<Record<string, unknown>> | undefined;
    /** Why `args` could not be parsed, with the raw text the model sent. */
    readonly argsError?: { readonly message: string; readonly raw: string };
  }
  | { readonly type: "usage"; readonly usage: Usage }
  | {
    readonly type: "message_stop";
    readonly finishReason: FinishReason;
    readonly rawFinishReason?: string;
  }
  | { readonly type: "error"; readonly error: StreamFailure };

/** What a model can do, as far as the adapter knows. */
export interface LlmCapabilities {
  readonly tools: boolean;
  readonly vision: boolean;
  readonly thinking: boolean;
  readonly caching: boolean;
  /** The context window in tokens (a conservative default when unknown). */
  readonly maxContextTokens: number;
}

/**
 * The HTTP exchange an HTTP adapter performs, as a function: `fetch` is one. Record-and-replay middleware substitutes
 * its own to capture or serve the raw bytes while the adapter's real encoding and parsing run unchanged.
 *
 * Contract: resolves with the response (any status) or rejects for a transport failure; honours `request.signal`.
 */
export type HttpTransport = (request: Request) => Promise<Response>;

/** Options of {@linkcode LlmAdapter.stream}. */
export interface LlmStreamOptions {
  /** Aborting ends the stream promptly with an `error` of kind `aborted`. */
  readonly signal?: AbortSignal;
  /** Replaces the HTTP transport of an HTTP adapter for this request (ignored by adapters that make no HTTP). */
  readonly transport?: HttpTransport;
}

/**
 * A model adapter.
 *
 * Contract: `stream` never throws and never rejects for provider or transport failures: it ends the iteration with
 * an `error` event. Aborting `signal` closes the underlying connection promptly and ends the stream with an
 * `error` of kind `aborted`. `countTokens` is an estimate and must not perform I/O.
 */
export interface LlmAdapter {
  readonly capabilities: LlmCapabilities;
  /** Why every request fails at once (no API key, …), when the adapter knows before trying; read by `/readyz`. */
  readonly unavailable?: string;
  /** Estimates the prompt tokens of a request. */
  countTokens(request: LlmRequest): number;
  /** Streams one model response. */
  stream(request: LlmRequest, options?: LlmStreamOptions): AsyncIterable<StreamEvent>;
}
