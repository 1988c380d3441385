/**
 * Subagents: the `subagents` seam, its service and `Task` tool, the default `agent` provider, and the row's config.
 *
 * Import from `@terret/core/subagents`.
 *
 * @module
 */
export {
  type ChildSpec,
  type SubagentCall,
  type SubagentProvider,
  type SubagentResult,
  type SubagentRunOptions,
  type Subagents,
  SubagentsKey,
  type SubagentStatus,
} from "./subagents.ts";
export {
  GENERAL_PURPOSE,
  type SubagentsConfig,
  subagentsConfig,
  type SubagentType,
  subagentTypeSchema,
} from "./subagents_config.ts";
export { SubagentsService } from "./subagents_service.ts";
export { agentProvider } from "./agent_provider.ts";
export { createTaskTool, type TaskArgs, taskOutput } from "./task_tool.ts";
export {
  type ChildEnd,
  childEnd,
  readChildEnd,
  type SubagentMeta,
  subagentMeta,
} from "./lineage.ts";
