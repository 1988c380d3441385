/**
 * Terret's core, the names a plugin author needs: the service keys, the main contracts, the events plugins listen
 * to, and the plugins a host mounts. Each concept has its own entry with its full surface:
 * `@terret/core/sessions`, `/tools`, `/llm`, `/mcp`, `/compaction`, `/agents`, `/loop`, `/prompt`, `/redaction`,
 * `/approvals`, `/subagents`, `/seams` (the seams exec implements) and `/testing` (fakes and builders for tests).
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
 * for await (const event of ctx.get(Llm).stream(request)) console.log(event.type);
 * ```
 *
 * @module
 */
export { CORE_ERROR_CODES, CORE_ERRORS, type CoreErrorCode } from "./errors.ts";
export {
  type Sandbox,
  SandboxKey,
  type Subprocess,
  SubprocessKey,
  type Workspace,
  WorkspaceKey,
} from "./seams/mod.ts";
export {
  Llm,
  type LlmAdapter,
  llmRecorder,
  LlmRegistry,
  llmReplayer,
  type LlmRequest,
  LlmStream,
  type Message,
  openRouterLlm,
  type Part,
  type StreamEvent,
  type ToolSchema,
  type Usage,
} from "./llm/mod.ts";
export {
  jsonlStorePlugin,
  memoryStorePlugin,
  type SessionEvent,
  SessionEventAppended,
  SessionLog,
  type Sessions,
  SessionsKey,
  sessionsPlugin,
  type SessionStore,
  SessionStoreKey,
  sqliteStorePlugin,
} from "./sessions/mod.ts";
export {
  defineTool,
  ToolAllowList,
  type ToolDefinition,
  type ToolOutcome,
  type ToolPolicy,
  ToolPolicyKey,
  ToolRegistry,
  type Tools,
  ToolsExecute,
  ToolsKey,
  ToolsPostExecute,
  ToolsPreExecute,
} from "./tools/mod.ts";
export { type Prompt, PromptAssembler, PromptKey, type PromptSection } from "./prompt/mod.ts";
export {
  type Agent,
  AgentDisposed,
  AgentRegistry,
  type Agents,
  AgentsKey,
  AgentStatusChanged,
  type Driver,
  LoopKey,
} from "./agents/mod.ts";
export { AgentLoop, AgentPreStep, AgentRequest, AgentTurnStopping } from "./loop/mod.ts";
export {
  type Credentials,
  CredentialsKey,
  credentialsPlugin,
  type Redaction,
  RedactionKey,
  redactionPlugin,
} from "./redaction/mod.ts";
export { mcpPlugin, McpServerState, McpToolsReconciled } from "./mcp/mod.ts";
export {
  type Compaction,
  CompactionKey,
  CompactionService,
  type Compactor,
  CompactorKey,
} from "./compaction/mod.ts";
export { Titler, type Titles, TitlesKey } from "./llm/mod.ts";
export {
  type Subagents,
  SubagentsKey,
  SubagentsService,
  type SubagentType,
} from "./subagents/mod.ts";
export {
  type Approvals,
  ApprovalsKey,
  ApprovalsService,
  type ApprovalState,
} from "./approvals/mod.ts";
