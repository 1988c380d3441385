/**
 * Tools and policy: `defineTool`, the `tools` registry and its execution pipeline events, the allow list, JSON Schema checks, glob patterns and output caps.
 *
 * Import from `@terret/core/tools`.
 *
 * @module
 */
export {
  defineTool,
  mcpToolName,
  parseMcpToolName,
  TOOL_KINDS,
  TOOL_NAME_PATTERN,
  type ToolApproval,
  type ToolConcurrency,
  type ToolContent,
  type ToolDefinition,
  type ToolHandler,
  type ToolInfo,
  type ToolKind,
  type ToolOutcome,
  type ToolOutput,
  type ToolResultPayload,
  type ToolRun,
} from "./tool.ts";
export { type JsonSchema, type SchemaIssue, validateJsonSchema } from "./json_schema.ts";
export { fnmatch, fnmatchToRegExp, PatternSet } from "./fnmatch.ts";
export {
  type PreExecuteResult,
  TOOL_EVENTS,
  type ToolCompletion,
  type ToolExecution,
  type ToolInvocation,
  ToolsExecute,
  ToolsPostExecute,
  ToolsPreExecute,
} from "./events.ts";
export {
  capContent,
  DEFAULT_MAX_OUTPUT_BYTES,
  MIN_MAX_OUTPUT_BYTES,
  truncationMarker,
} from "./output_cap.ts";
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
} from "./allow_list.ts";
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
} from "./tool_registry.ts";
export {
  type ApprovalGate,
  ApprovalGateKey,
  type GateCall,
  type GateVerdict,
  noApprovalsDenial,
  type ReviewOptions,
} from "./approval_gate.ts";
