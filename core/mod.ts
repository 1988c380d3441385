/**
 * Terret's core: the session log and its stores, prompt assembly, tools and policy, agents and the loop, the LLM
 * seam and its OpenAI-compatible adapter, and the seams core consumes from the execution world.
 *
 * @module
 */
export type {
  FinishReason,
  ImagePart,
  LlmAdapter,
  LlmCapabilities,
  LlmRequest,
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
export { AgentDisposed, type AgentDisposedPayload } from "./agents/events.ts";
