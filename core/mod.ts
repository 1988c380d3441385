/**
 * Terret's core: the model seam (provider-neutral vocabulary, the `llm` registry and its `llm/stream` waterfall,
 * the shared HTTP adapter base, the OpenRouter adapter, cassette record and replay), and the other core services.
 *
 * @example
 * ```ts ignore
 * import { createContext, Loader } from "@terret/hames";
 * import { Llm, LlmRegistry, openRouterLlm } from "@terret/core";
 *
 * await using ctx = createContext();
 * await new Loader(ctx).load([
 *   { id: "llm", plugin: LlmRegistry },
 *   {
 *     id: "llm.main",
 *     plugin: openRouterLlm,
 *     config: { model: "openai/gpt-5-mini", api_key: Deno.env.get("OPENROUTER_API_KEY") },
 *   },
 * ]);
 * const request = { messages: [{ role: "user" as const, parts: [{ type: "text" as const, text: "Hi" }] }] };
 * for await (const event of ctx.get(Llm).stream(request)) console.log(event);
 * ```
 *
 * @module
 */
/** stub. */
export const X: number = 1;

export type {
  FinishReason,
  HttpTransport,
  ImagePart,
  LlmAdapter,
  LlmCapabilities,
  LlmRequest,
  LlmStreamOptions,
  Message,
  ModelRole,
  Part,
  Role,
  StreamEvent,
  StreamFailure,
  TextPart,
  ThinkingPart,
  ToolCallPart,
  ToolResultPart,
  ToolSchema,
  Usage,
} from "./llm/vocabulary.ts";
export { LlmRequestSchema, MessageSchema, ModelRoleSchema, PartSchema } from "./llm/schemas.ts";
export { LLM_EVENTS, LlmStream, type LlmStreamPayload } from "./llm/events.ts";
export {
  Llm,
  type LlmRegistration,
  LlmRegistry,
  type LlmRequestOptions,
} from "./llm/llm_registry.ts";
export {
  backoffDelay,
  DEFAULT_RETRY_POLICY,
  isRetryableStatus,
  parseRetryAfter,
  REAL_TIMING,
  type RetryPolicy,
  type Timing,
} from "./llm/retry.ts";
export { estimateTokens } from "./llm/token_estimate.ts";
export { SseDecoder, type SseTextParser } from "./llm/sse.ts";
export { type SseListener, SseParser } from "./llm/sse_parser.ts";
export {
  HttpAdapterBase,
  type HttpAdapterOptions,
  type StreamDecoder,
} from "./llm/adapter_base.ts";
export {
  DEFAULT_CAPABILITIES,
  OPENROUTER_BASE_URL,
  OpenRouterAdapter,
  type OpenRouterAdapterOptions,
} from "./llm/openrouter/adapter.ts";
export { ChatCompletionsDecoder, type ReasoningDetail } from "./llm/openrouter/decode.ts";
export {
  type ChatMessage,
  encodeChatRequest,
  encodeMessage,
  type EncodeOptions,
} from "./llm/openrouter/encode.ts";
export {
  type OpenRouterConfig,
  OpenRouterConfigSchema,
  openRouterLlm,
  openRouterOptions,
} from "./llm/openrouter/plugin.ts";
export {
  canonicalJson,
  type Cassette,
  type CassetteExchange,
  type CassetteHeader,
  cassetteHeader,
  type CassetteInteraction,
  exchangeBytes,
  firstDifference,
  formatInteraction,
  parseCassette,
  readCassette,
  requestKey,
} from "./llm/cassette/cassette.ts";
export {
  CassetteWriter,
  type ExchangeDraft,
  finishExchanges,
  llmRecorder,
  type RecorderConfig,
  RecorderConfigSchema,
  recordingTransport,
} from "./llm/cassette/recorder.ts";
export {
  CassettePlayer,
  type CassettePlayerOptions,
  llmReplayer,
  type ReplayerConfig,
  ReplayerConfigSchema,
  type ReplayMatch,
  replayTransport,
} from "./llm/cassette/replayer.ts";
