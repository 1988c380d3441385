/**
 * MCP servers as tool sources: the `terret-mcp` plugin, its config, the connection and transports, and the roster that reconciles a server's tools and resources into the registries.
 *
 * Import from `@terret/core/mcp`.
 *
 * @module
 */
export {
  type McpHttpTarget,
  type McpRestartConfig,
  type McpSandboxProvider,
  type McpServerConfig,
  mcpServerConfig,
  type McpStdioTarget,
  type McpToolOverride,
  SERVER_NAME_PATTERN,
} from "./config.ts";
export { mcpPlugin } from "./mcp_plugin.ts";
export { mcpConfinement, stdioRowOpener, type StdioRowOpenerOptions } from "./confinement.ts";
export {
  McpServerState,
  type McpServerStatePayload,
  McpToolsReconciled,
  type McpToolsReconciledPayload,
} from "./events.ts";
export { McpToolSource, type McpToolSourceOptions } from "./tool_source.ts";
export {
  MCP_CLIENT_INFO,
  McpConnection,
  type McpConnectionOptions,
  type McpConnectionState,
  type OpenedTransport,
  type StateDetail,
} from "./connection.ts";
export { type StdioTransportOptions, SubprocessStdioTransport } from "./stdio_transport.ts";
export { httpOpener, type HttpTarget, stdioOpener, type StdioTarget } from "./transports.ts";
export {
  type McpCallResult,
  type McpContentBlock,
  type StructuredContentCheck,
  toToolOutcome,
} from "./content.ts";
export {
  type McpToolSpec,
  type ReconcileReport,
  type RegisterTool,
  ToolRoster,
  type ToolRosterOptions,
} from "./roster.ts";
export {
  MCP_RESOURCE_PRIORITY,
  type McpPromptSection,
  type RegisterSection,
  ResourceSections,
} from "./resources.ts";
export { MAX_TOOL_NAME_LENGTH, sanitiseMcpToolName } from "./names.ts";
