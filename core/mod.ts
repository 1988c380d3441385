/**
 * Terret's core: the session log and its stores, prompt assembly, tools and policy, agents and the loop, the LLM
 * seam (provider-neutral vocabulary, the `llm` registry and its `llm/stream` waterfall, the shared HTTP adapter
 * base, the OpenRouter adapter, cassette record and replay), and the seams core consumes from the execution world.
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
export {
  type Sandbox,
  SandboxKey,
  type WrapOptions,
  type WrappedCommand,
} from "./seams/sandbox.ts";
export {
  type ChildExit,
  type ChildHandle,
  type ExitStatus,
  type ProcessOptions,
  type PtyHandle,
  type PtySpawnOptions,
  type RunOptions,
  type RunResult,
  type SpawnOptions,
  type Subprocess,
  SubprocessKey,
} from "./seams/subprocess.ts";
export { type Workspace, WorkspaceKey } from "./seams/workspace.ts";
export {
  AGENT_EVENTS,
  AgentDisposed,
  type AgentDisposedPayload,
  type AgentStatus,
  AgentStatusChanged,
  type AgentStatusChangedPayload,
} from "./agents/events.ts";
export type { Agent, IdleOptions, InjectOptions } from "./agents/agent.ts";
export {
  AGENT_SHUTDOWN,
  type Driver,
  LoopKey,
  type OpenTurn,
  TURN_CANCELLED,
  type TurnOutcome,
  type TurnRun,
} from "./agents/driver.ts";
export { Inbox } from "./agents/inbox.ts";
export { findOpenTurn } from "./agents/open_turn.ts";
export {
  AgentRegistry,
  type Agents,
  type AgentsConfig,
  agentsConfig,
  AgentsKey,
  assertAgentId,
  type CreateAgentOptions,
  type DisposeAgentOptions,
  type EnsureAgentOptions,
} from "./agents/agent_registry.ts";
export {
  AgentPreStep,
  AgentRequest,
  type AgentRequestPayload,
  AgentTurnStopping,
  type InputItem,
  LOOP_EVENTS,
  type PreStepPayload,
  type PreStepResult,
  type TurnStatus,
  type TurnStoppingPayload,
  type TurnStoppingResult,
} from "./loop/events.ts";
export { AgentLoop, type LoopConfig, loopConfig } from "./loop/loop.ts";
export { carriesMarker } from "./loop/redaction.ts";
export {
  type AppendInput,
  assertSessionId,
  type EventDraft,
  SESSION_ID_PATTERN,
  type SessionEvent,
} from "./sessions/envelope.ts";
export {
  ApprovalRequested,
  ApprovalResolved,
  AssistantChunk,
  AssistantMessage,
  type Content,
  ContextInjected,
  InvariantViolated,
  type InvariantViolatedPayload,
  PolicyUpdated,
  SESSION_EVENT_TYPES,
  SESSION_LIVE_EVENTS,
  SessionCompacted,
  SessionCreated,
  SessionEventAppended,
  sessionEventSchema,
  SessionForked,
  SessionTitled,
  StepEnd,
  StepStart,
  ToolCall,
  ToolResult,
  TurnEnd,
  TurnStart,
  UserMessage,
} from "./sessions/events.ts";
export {
  DEFAULT_MAX_PAYLOAD_BYTES,
  MAX_PAYLOAD_DEPTH,
  type NormalizedPayload,
  type NormalizeOptions,
  normalizePayload,
  type Scrubber,
  STRUCTURAL_PART_KEYS,
  STRUCTURAL_TOP_KEYS,
} from "./sessions/normalize_payload.ts";
export {
  BUILTIN_PROJECTIONS,
  deriveMessages,
  type DeriveOptions,
  type Projection,
} from "./sessions/derive_messages.ts";
export { canonicalJson, digestMessages, firstDifference } from "./sessions/digest.ts";
export { rollupUsage, type UsageRollup } from "./sessions/usage.ts";
export {
  type CommitListener,
  type SessionStore,
  SessionStoreKey,
  type StoreReadOptions,
  type StoreStats,
} from "./sessions/store.ts";
export {
  MemorySessionStore,
  memoryStoreConfig,
  memoryStorePlugin,
} from "./sessions/memory_store.ts";
export {
  JsonlSessionStore,
  type JsonlStoreConfig,
  jsonlStoreConfig,
  type JsonlStoreOptions,
  jsonlStorePlugin,
} from "./sessions/jsonl_store.ts";
export {
  SqliteSessionStore,
  type SqliteStoreConfig,
  sqliteStoreConfig,
  type SqliteStoreOptions,
  sqliteStorePath,
  sqliteStorePlugin,
} from "./sessions/sqlite_store.ts";
export {
  type CreateOptions,
  type DeriveFromLogOptions,
  type EventTypeOptions,
  type ForkOptions,
  type InvariantReport,
  type ScrubberOptions,
  type Sessions,
  SessionsKey,
  type SignalOptions,
  type StreamOptions,
} from "./sessions/sessions.ts";
export { SessionLog, type SessionLogOptions } from "./sessions/session_log.ts";
export { type SessionsConfig, sessionsConfig, sessionsPlugin } from "./sessions/sessions_plugin.ts";
export { SessionProjection, type SessionProjectionOptions } from "./sessions/session_projection.ts";
export {
  defineTool,
  mcpToolName,
  parseMcpToolName,
  TOOL_NAME_PATTERN,
  type ToolApproval,
  type ToolConcurrency,
  type ToolContent,
  type ToolDefinition,
  type ToolHandler,
  type ToolInfo,
  type ToolOutcome,
  type ToolOutput,
  type ToolResultPayload,
  type ToolRun,
} from "./tools/tool.ts";
export { type JsonSchema, type SchemaIssue, validateJsonSchema } from "./tools/json_schema.ts";
export { fnmatch, fnmatchToRegExp, PatternSet } from "./tools/fnmatch.ts";
export {
  type PreExecuteResult,
  TOOL_EVENTS,
  type ToolCollector,
  type ToolCompletion,
  type ToolExecution,
  type ToolInvocation,
  ToolsCollect,
  ToolsExecute,
  ToolsPostExecute,
  ToolsPreExecute,
} from "./tools/events.ts";
export {
  capContent,
  DEFAULT_MAX_OUTPUT_BYTES,
  MIN_MAX_OUTPUT_BYTES,
  truncationMarker,
} from "./tools/output_cap.ts";
export {
  agentDenial,
  type AllowListConfig,
  allowListConfig,
  type DenialReason,
  floorDenial,
  narrowTools,
  noPolicyDenial,
  type PolicyCheckOptions,
  type PolicyVerdict,
  sessionDenial,
  ToolAllowList,
  type ToolPolicy,
  ToolPolicyKey,
} from "./tools/allow_list.ts";
export {
  type ExecuteOptions,
  type OfferedOptions,
  type ToolCallRequest,
  ToolRegistry,
  type Tools,
  type ToolsConfig,
  toolsConfig,
  ToolsKey,
  type VisibleOptions,
} from "./tools/tool_registry.ts";
export {
  PersonaAmended,
  type PersonaAmendedPayload,
  PROMPT_EVENTS,
  PromptCollect,
  type SectionCollector,
} from "./prompt/events.ts";
export {
  AMENDMENTS_HEADING,
  amendPersona,
  type AmendPersonaOptions,
  NO_PERSONA,
  PERSONA_AMENDMENTS_PRIORITY,
  PERSONA_META_KEY,
  PERSONA_PRIORITY,
  personaFromLog,
  type PersonaState,
} from "./prompt/persona.ts";
export {
  type AssembleOptions,
  MIN_SECTION_PRIORITY,
  type Prompt,
  PromptAssembler,
  type PromptConfig,
  promptConfig,
  type PromptEnv,
  type PromptInput,
  PromptKey,
  type PromptSection,
  SECTION_SEPARATOR,
} from "./prompt/prompt_assembler.ts";
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
  type HttpRequestParts,
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
  openRouterKey,
  openRouterLlm,
  openRouterOptions,
} from "./llm/openrouter/plugin.ts";
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
export {
  checkToken,
  DEFAULT_REDACTION_TOKEN,
  isRedacted,
  MAX_TOKEN_LENGTH,
  Redactor,
  type RedactorOptions,
  tokenIsToolName,
} from "./redaction/redactor.ts";
export {
  DEFAULT_REDACTION_PATTERNS,
  type Redaction,
  type RedactionConfig,
  redactionConfig,
  RedactionKey,
  redactionPlugin,
  redactionToken,
} from "./redaction/redaction_plugin.ts";
export {
  type Credentials,
  type CredentialsConfig,
  credentialsConfig,
  CredentialsKey,
  type CredentialSource,
  credentialsPlugin,
  credentialStorePath,
} from "./redaction/credentials.ts";
export { CREDENTIALS_KEY_ENV, CredentialStore } from "./redaction/credential_store.ts";
export {
  isSecretKeyName,
  isSecretSchema,
  SECRET_META,
  secretField,
  type SecretValue,
  secretValues,
} from "./redaction/secret_fields.ts";
export {
  type McpHttpTarget,
  type McpRestartConfig,
  type McpServerConfig,
  mcpServerConfig,
  type McpStdioTarget,
  type McpToolOverride,
  SERVER_NAME_PATTERN,
} from "./mcp/config.ts";
export { mcpPlugin } from "./mcp/mcp_plugin.ts";
export {
  McpServerState,
  type McpServerStatePayload,
  McpToolsReconciled,
  type McpToolsReconciledPayload,
} from "./mcp/events.ts";
export { McpToolSource, type McpToolSourceOptions } from "./mcp/tool_source.ts";
export {
  MCP_CLIENT_INFO,
  McpConnection,
  type McpConnectionOptions,
  type McpConnectionState,
  type OpenedTransport,
  type StateDetail,
} from "./mcp/connection.ts";
export { type StdioTransportOptions, SubprocessStdioTransport } from "./mcp/stdio_transport.ts";
export { httpOpener, type HttpTarget, stdioOpener, type StdioTarget } from "./mcp/transports.ts";
export {
  type McpCallResult,
  type McpContentBlock,
  type StructuredContentCheck,
  toToolOutcome,
} from "./mcp/content.ts";
export {
  type McpToolSpec,
  type ReconcileReport,
  type RegisterTool,
  ToolRoster,
  type ToolRosterOptions,
} from "./mcp/roster.ts";
export {
  MCP_RESOURCE_PRIORITY,
  type McpPromptSection,
  type RegisterSection,
  ResourceSections,
} from "./mcp/resources.ts";
export { MAX_TOOL_NAME_LENGTH, sanitiseMcpToolName } from "./mcp/names.ts";
