/**
 * The session log: durable session events and their envelopes, the stores (memory, JSONL, SQLite), the `sessions` service and its plugin, message derivation, digests and usage roll-ups.
 *
 * Import from `@terret/core/sessions`.
 *
 * @module
 */
export {
  type AppendInput,
  assertSessionId,
  type EventDraft,
  SESSION_ID_PATTERN,
  type SessionEvent,
} from "./envelope.ts";
export {
  type ApprovalAnswerer,
  ApprovalRequested,
  ApprovalResolved,
  AssistantChunk,
  AssistantMessage,
  type Content,
  ContextInjected,
  InputQueued,
  type InputQueuedPayload,
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
  SessionReleased,
  type SessionReleasedPayload,
  SessionTitled,
  StepEnd,
  StepStart,
  ToolCall,
  ToolResult,
  TurnEnd,
  TurnStart,
  UserMessage,
} from "./events.ts";
export {
  DEFAULT_MAX_PAYLOAD_BYTES,
  MAX_PAYLOAD_DEPTH,
  type NormalizedPayload,
  type NormalizeOptions,
  normalizePayload,
  type Scrubber,
} from "./normalize_payload.ts";
export {
  BUILTIN_PROJECTIONS,
  deriveMessages,
  type DeriveOptions,
  type Projection,
} from "./derive_messages.ts";
export { digestMessages, firstDifference } from "./digest.ts";
export { rollupUsage, USAGE_EVENT_TYPES, type UsageRollup } from "./usage.ts";
export { READ_BACK_WINDOW, readBack, type ReadBackOptions } from "./read_back.ts";
export {
  type CommitListener,
  type EventJson,
  type RemoteCommitListener,
  type SessionStore,
  SessionStoreKey,
  type StoreJsonReadOptions,
  type StoreListOptions,
  type StoreReadOptions,
  type StoreStats,
} from "./store.ts";
export { MemorySessionStore, memoryStoreConfig, memoryStorePlugin } from "./memory_store.ts";
export { JsonlSessionStore, type JsonlStoreOptions } from "./jsonl_store.ts";
export { type JsonlStoreConfig, jsonlStoreConfig, jsonlStorePlugin } from "./jsonl_store_plugin.ts";
export { SqliteSessionStore, type SqliteStoreOptions } from "./sqlite_store.ts";
export {
  type SqliteStoreConfig,
  sqliteStoreConfig,
  sqliteStorePath,
  sqliteStorePlugin,
} from "./sqlite_store_plugin.ts";
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
} from "./sessions.ts";
export { SessionLog, type SessionLogOptions } from "./session_log.ts";
export { type SessionsConfig, sessionsConfig, sessionsPlugin } from "./sessions_plugin.ts";
export { SessionProjection, type SessionProjectionOptions } from "./session_projection.ts";
