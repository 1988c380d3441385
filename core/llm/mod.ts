/**
 * The model seam: the provider-neutral vocabulary and its schemas, the `llm` registry and its `llm/stream` waterfall, retry policy, the shared HTTP adapter base, the OpenRouter adapter, and cassette record and replay.
 *
 * Import from `@terret/core/llm`.
 *
 * @module
 */
export {
  type FinishReason,
  type HttpTransport,
  type ImagePart,
  type LlmAdapter,
  type LlmCapabilities,
  type LlmRequest,
  type LlmStreamOptions,
  type Message,
  type ModelRole,
  type Part,
  type Role,
  type StreamEvent,
  type StreamFailure,
  type TextPart,
  type ThinkingPart,
  type ToolCallPart,
  type ToolResultPart,
  type ToolSchema,
  type Usage,
} from "./vocabulary.ts";
export { LlmRequestSchema, MessageSchema, ModelRoleSchema, PartSchema } from "./schemas.ts";
export { LLM_EVENTS, LlmStream, type LlmStreamPayload } from "./events.ts";
export { Llm, type LlmRegistration, LlmRegistry, type LlmRequestOptions } from "./llm_registry.ts";
export {
  backoffDelay,
  DEFAULT_RETRY_POLICY,
  isRetryableStatus,
  parseRetryAfter,
  REAL_TIMING,
  type RetryPolicy,
  type Timing,
} from "./retry.ts";
export { estimateTokens, type TokenEstimateCache } from "./token_estimate.ts";
export { SseDecoder, type SseTextParser } from "./sse.ts";
export { type SseListener } from "./sse_parser.ts";
export {
  HttpAdapterBase,
  type HttpAdapterOptions,
  type HttpRequestParts,
  type StreamDecoder,
} from "./adapter_base.ts";
export {
  DEFAULT_CAPABILITIES,
  OPENROUTER_BASE_URL,
  OpenRouterAdapter,
  type OpenRouterAdapterOptions,
} from "./openrouter/adapter.ts";
export { type ChatMessage, encodeChatRequest, type EncodeOptions } from "./openrouter/encode.ts";
export {
  type OpenRouterConfig,
  OpenRouterConfigSchema,
  openRouterKey,
  openRouterLlm,
  openRouterOptions,
} from "./openrouter/plugin.ts";
export {
  type Cassette,
  type CassetteExchange,
  type CassetteHeader,
  cassetteHeader,
  type CassetteInteraction,
  exchangeBytes,
  formatInteraction,
  jsonDifference,
  parseCassette,
  readCassette,
  requestKey,
} from "./cassette/cassette.ts";
export {
  CassetteWriter,
  type ExchangeDraft,
  finishExchanges,
  llmRecorder,
  type RecorderConfig,
  RecorderConfigSchema,
  recordingTransport,
} from "./cassette/recorder.ts";
export {
  CassettePlayer,
  type CassettePlayerOptions,
  llmReplayer,
  type ReplayerConfig,
  ReplayerConfigSchema,
  type ReplayMatch,
  replayTransport,
} from "./cassette/replayer.ts";
export {
  fallbackTitle,
  TITLE_INSTRUCTIONS,
  type TitleOptions,
  Titler,
  type Titles,
  type TitlesConfig,
  titlesConfig,
  TitlesKey,
} from "./titler.ts";
export { type UtilityAnswer, utilityCall, type UtilityCallOptions } from "./utility_call.ts";
