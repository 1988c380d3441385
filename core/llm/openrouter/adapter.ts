/**
 * The OpenRouter adapter: Chat Completions over `fetch` with streaming server-sent events. It speaks the
 * OpenAI-compatible protocol, so it also serves vLLM, llama.cpp, Ollama and LM Studio through `baseUrl`.
 *
 * @module
 */
import {
  HttpAdapterBase,
  type HttpAdapterOptions,
  type HttpRequestParts,
  type StreamDecoder,
} from "../adapter_base.ts";
import type { LlmCapabilities, LlmRequest } from "../vocabulary.ts";
import { ChatCompletionsDecoder } from "./decode.ts";
import { type EncodeCache, encodeChatRequestJson } from "./encode.ts";

/** OpenRouter's API root. */
export const OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1";

/** What a model is assumed to support when config says nothing: tools, a 128k window, nothing else. */
export const DEFAULT_CAPABILITIES: LlmCapabilities = Object.freeze({
  tools: true,
  vision: false,
  thinking: false,
  caching: false,
  maxContextTokens: 128_000,
});

/** Options of {@linkcode OpenRouterAdapter}. */
export interface OpenRouterAdapterOptions extends HttpAdapterOptions {
  /** The model slug (`anthropic/claude-sonnet-4.5`), used when a request names none. */
  readonly model: string;
  /** The API root; `/chat/completions` is appended (default {@linkcode OPENROUTER_BASE_URL}). */
  readonly baseUrl?: string;
  /** The bearer token; never logged, and redacted from every message the adapter produces. */
  readonly apiKey: string;
  /** Extra request headers (`HTTP-Referer`, `X-Title`, …); they may override the defaults. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Extra body fields (`temperature`, `reasoning`, `provider`, …); a request's own params override them. */
  readonly params?: Readonly<Record<string, unknown>>;
  /** Capability overrides for the configured model. */
  readonly capabilities?: Partial<LlmCapabilities>;
}

/**
 * A model adapter for OpenRouter and other OpenAI-compatible Chat Completions servers.
 *
 * Contract: that of {@linkcode HttpAdapterBase} (never throws for provider failures, retries only before output,
 * aborts promptly); the API key appears in no event, log record or thrown message.
 *
 * @example
 * ```ts ignore
 * import { OpenRouterAdapter } from "@terret/core/llm";
 * const adapter = new OpenRouterAdapter({
 *   model: "openai/gpt-5-mini",
 *   apiKey: Deno.env.get("OPENROUTER_API_KEY")!,
 * });
 * for await (const event of adapter.stream({ messages: [{ role: "user", parts: [{ type: "text", text: "Hi" }] }] })) {
 *   if (event.type === "text_delta") console.log(event.text);
 * }
 * ```
 */
export class OpenRouterAdapter extends HttpAdapterBase {
  /** What the configured model can do. */
  readonly capabilities: LlmCapabilities;
  readonly #url: string;
  readonly #model: string;
  /** The request headers, built once (`fetch` copies them into each request). */
  readonly #requestHeaders: Readonly<Record<string, string>>;
  readonly #params: Readonly<Record<string, unknown>>;
  /** The JSON of the frozen messages and tool schemas sent so far (each step sends the history again). */
  readonly #encoded: EncodeCache = { messages: new WeakMap(), tools: new WeakMap() };

  /**
   * Creates an adapter for one model and endpoint.
   *
   * @param options model, key, endpoint, params and the {@linkcode HttpAdapterOptions}
   * @throws {TypeError} when `model` or `apiKey` is empty
   */
  constructor(options: OpenRouterAdapterOptions) {
    super({ ...options, secrets: [...(options.secrets ?? []), options.apiKey] });
    if (typeof options.model !== "string" || options.model === "") {
      throw new TypeError(
        "Cannot create the OpenRouter adapter: `model` must be a non-empty string",
      );
    }
    if (typeof options.apiKey !== "string" || options.apiKey === "") {
      throw new TypeError(
        "Cannot create the OpenRouter adapter: `apiKey` must be a non-empty string",
      );
    }
    this.#url = `${(options.baseUrl ?? OPENROUTER_BASE_URL).replace(/\/+$/, "")}/chat/completions`;
    this.#model = options.model;
    this.#requestHeaders = Object.freeze({
      "authorization": `Bearer ${options.apiKey}`,
      "content-type": "application/json",
      "accept": "text/event-stream",
      ...options.headers,
    });
    this.#params = options.params ?? {};
    this.capabilities = Object.freeze({ ...DEFAULT_CAPABILITIES, ...options.capabilities });
  }

  /** The configured model slug. */
  get model(): string {
    return this.#model;
  }

  /** The endpoint requests are posted to. */
  get url(): string {
    return this.#url;
  }

  /** Builds the POST to `/chat/completions`. */
  protected buildRequest(request: LlmRequest): HttpRequestParts {
    return {
      url: this.#url,
      method: "POST",
      headers: this.#requestHeaders,
      body: encodeChatRequestJson(
        request,
        { model: this.#model, params: this.#params },
        this.#encoded,
      ),
    };
  }

  /** A Chat Completions chunk decoder. */
  protected createDecoder(): StreamDecoder {
    return new ChatCompletionsDecoder();
  }
}
