/**
 * The first-party plugins rows can name without declaring a module: statically imported, so a compiled `trt` needs
 * no dynamic import to find them. Adding a first-party plugin is one entry here; enabling its row in
 * `bundles/base.yml` is deleting its `disabled: true` line.
 *
 * @module
 */
import type { PluginLike } from "@terret/hames";
import {
  AgentLoop,
  AgentRegistry,
  ApprovalsService,
  CompactionService,
  credentialsPlugin,
  jsonlStorePlugin,
  llmRecorder,
  LlmRegistry,
  llmReplayer,
  mcpPlugin,
  memoryStorePlugin,
  openRouterLlm,
  PromptAssembler,
  redactionPlugin,
  sessionsPlugin,
  sqliteStorePlugin,
  SubagentsService,
  TelemetryService,
  Titler,
  ToolAllowList,
  ToolRegistry,
} from "@terret/core";
import { postgresStorePlugin } from "@terret/core/postgres";
import {
  bwrapSandboxPlugin,
  denoSandboxPlugin,
  dockerSandboxPlugin,
  fsPlugin,
  jobsPlugin,
  noneSandboxPlugin,
  shellPlugin,
  stdToolsPlugin,
  subprocessPlugin,
  terminalsPlugin,
  workspacePlugin,
} from "@terret/exec";
import { WsInterface } from "@terret/ws";
import { acpPlugin, acpSubagentsPlugin } from "@terret/acp";

/**
 * Every built-in plugin: the core (the session stores `terret-store-sqlite`, `terret-store-postgres` (the fleet's),
 * `terret-store-jsonl` and `terret-store-memory`, `terret-sessions`, the model registry `terret-llm`, the adapter `terret-llm-openrouter`, the
 * cassette `terret-llm-recorder` and `terret-llm-replayer`, `terret-tools`, the allow list `terret-tools-allow`,
 * `terret-prompt`, redaction `terret-redaction`, credentials `terret-credentials`, `terret-agents`, the default
 * driver `terret-loop` and the MCP client `terret-mcp`, one `mcp.<server>` row per server), the execution world
 * (`workspace`, `fs`, the sandbox providers `sandbox-docker`, `sandbox-deno`, `sandbox-bwrap` and `sandbox-none`, `subprocess`,
 * `shell`, `terminals`, `jobs`) and the standard tools (`terret-tools-std`) and the WebSocket event stream (`terret-ws`).
 * And durable approvals, `terret-approvals` (`approvals`), and subagents with the `Task` tool, `terret-subagents`
 * (`subagents`), with the ACP-client provider `terret-subagents-acp` (`subagents.acp`), and OpenTelemetry,
 * `terret-telemetry` (`telemetry`).
 */
export const BUILTIN_PLUGINS: readonly PluginLike[] = Object.freeze([
  sqliteStorePlugin,
  postgresStorePlugin,
  jsonlStorePlugin,
  memoryStorePlugin,
  sessionsPlugin,
  LlmRegistry,
  openRouterLlm,
  llmRecorder,
  llmReplayer,
  ToolRegistry,
  ToolAllowList,
  ApprovalsService,
  PromptAssembler,
  AgentRegistry,
  AgentLoop,
  CompactionService,
  Titler,
  SubagentsService,
  mcpPlugin,
  workspacePlugin,
  fsPlugin,
  dockerSandboxPlugin,
  denoSandboxPlugin,
  bwrapSandboxPlugin,
  noneSandboxPlugin,
  subprocessPlugin,
  shellPlugin,
  terminalsPlugin,
  jobsPlugin,
  stdToolsPlugin,
  redactionPlugin,
  credentialsPlugin,
  TelemetryService,
  WsInterface,
  acpSubagentsPlugin,
  acpPlugin,
]);
