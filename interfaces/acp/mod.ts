/**
 * `@terret/acp`: Terret's Agent Client Protocol server. Editors drive Terret agents over newline-delimited JSON-RPC
 * on stdio; each ACP session is a durable Terret session driven by the agent of the same id, and every
 * `session/update` is projected from the session log (docs/acp.md).
 *
 * @example
 * ```ts ignore
 * import * as acp from "@agentclientprotocol/sdk";
 * import { serveAcp } from "@terret/acp";
 *
 * const connection = serveAcp(acp.ndJsonStream(Deno.stdout.writable, Deno.stdin.readable), {
 *   sessions, agents, roots: [Deno.cwd()],
 * });
 * await connection.closed;
 * ```
 *
 * @module
 */
/** The SDK's newline-delimited JSON stream over a byte pair (output first, then input). */
export { ndJsonStream } from "@agentclientprotocol/sdk";
export { type AcpServerOptions, RESOURCE_NOT_FOUND, serveAcp } from "./acp_server.ts";
export { checkCwd, invalidParams, promptContent, withinRoots } from "./session_input.ts";
export { type AcpConfig, acpConfig, AcpConfigKey, acpPlugin } from "./acp_plugin.ts";
export { attachEditorFiles, ClientFileSystem, type EditorFiles, editorFiles } from "./client_fs.ts";
export { attachEditorTerminal, ClientShell, type ClientShellOptions } from "./client_terminal.ts";
export { type EditorSeamOptions, EditorSeams } from "./editor_seams.ts";
export { ClientMcpServers, mcpConfigs, mcpServerName } from "./client_mcp.ts";
export {
  type AcpApprovals,
  type AcpVerdict,
  PERMISSION_OPTIONS,
  permissionRequest,
  verdictOf,
} from "./permissions.ts";
export {
  ACP_MODES,
  type AcpModeId,
  AUTO_EDIT_TOOLS,
  isModeId,
  modePolicy,
  modeState,
  READ_ONLY_TOOLS,
} from "./modes.ts";
export {
  acpClientProvider,
  type AcpSubagentsConfig,
  acpSubagentsConfig,
  acpSubagentsPlugin,
} from "./client_provider.ts";
export { PLAN_TOOL, planEntries } from "./plan.ts";
export { projectEvent, type ProjectionState, projectionState, stopReasonOf } from "./projection.ts";
