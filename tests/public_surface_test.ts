/**
 * The public surface: each package's `.` keeps to what a plugin author needs, each concept's full surface is on its
 * own subpath, and internals are on none of them.
 */
import assert from "node:assert/strict";
import * as core from "@terret/core";
import * as coreAgents from "@terret/core/agents";
import * as coreApprovals from "@terret/core/approvals";
import * as coreCompaction from "@terret/core/compaction";
import * as coreLlm from "@terret/core/llm";
import * as coreLoop from "@terret/core/loop";
import * as coreMcp from "@terret/core/mcp";
import * as corePrompt from "@terret/core/prompt";
import * as coreRedaction from "@terret/core/redaction";
import * as coreSeams from "@terret/core/seams";
import * as coreSessions from "@terret/core/sessions";
import * as coreSubagents from "@terret/core/subagents";
import * as coreTesting from "@terret/core/testing";
import * as coreTools from "@terret/core/tools";
import * as exec from "@terret/exec";
import * as execFs from "@terret/exec/fs";
import * as execProcess from "@terret/exec/process";
import * as execSandbox from "@terret/exec/sandbox";
import * as execTools from "@terret/exec/tools";

const ENTRIES: Readonly<Record<string, Record<string, unknown>>> = {
  "@terret/core": core,
  "@terret/core/agents": coreAgents,
  "@terret/core/approvals": coreApprovals,
  "@terret/core/compaction": coreCompaction,
  "@terret/core/llm": coreLlm,
  "@terret/core/loop": coreLoop,
  "@terret/core/mcp": coreMcp,
  "@terret/core/prompt": corePrompt,
  "@terret/core/redaction": coreRedaction,
  "@terret/core/seams": coreSeams,
  "@terret/core/sessions": coreSessions,
  "@terret/core/subagents": coreSubagents,
  "@terret/core/testing": coreTesting,
  "@terret/core/tools": coreTools,
  "@terret/exec": exec,
  "@terret/exec/fs": execFs,
  "@terret/exec/process": execProcess,
  "@terret/exec/sandbox": execSandbox,
  "@terret/exec/tools": execTools,
};

/** Implementation details no entry exports. */
const INTERNALS = [
  "SseParser",
  "ChatCompletionsDecoder",
  "encodeMessage",
  "STRUCTURAL_PART_KEYS",
  "STRUCTURAL_TOP_KEYS",
  "canonicalJson",
  "ToolsCollect",
  "PromptCollect",
  "isInside",
];

Deno.test("no entry of core or exec exports an internal", () => {
  const leaks = Object.entries(ENTRIES).flatMap(([entry, module]) =>
    INTERNALS.filter((name) => name in module).map((name) => `${entry}: ${name}`)
  );
  assert.deepStrictEqual(leaks, []);
});

Deno.test("core's and exec's `.` hold the runtime names a plugin author needs, and nothing else", () => {
  assert.deepStrictEqual(Object.keys(core).sort(), [
    "AgentDisposed",
    "AgentLoop",
    "AgentPreStep",
    "AgentRegistry",
    "AgentRequest",
    "AgentStatusChanged",
    "AgentTurnStopping",
    "AgentsKey",
    "ApprovalsKey",
    "ApprovalsService",
    "CORE_ERRORS",
    "CORE_ERROR_CODES",
    "CompactionKey",
    "CompactionService",
    "CompactorKey",
    "CredentialsKey",
    "Llm",
    "LlmRegistry",
    "LlmStream",
    "LoopKey",
    "McpServerState",
    "McpToolsReconciled",
    "PromptAssembler",
    "PromptKey",
    "RedactionKey",
    "SandboxKey",
    "SessionEventAppended",
    "SessionLog",
    "SessionStoreKey",
    "SessionsKey",
    "SubagentsKey",
    "SubagentsService",
    "SubprocessKey",
    "Titler",
    "TitlesKey",
    "ToolAllowList",
    "ToolPolicyKey",
    "ToolRegistry",
    "ToolsExecute",
    "ToolsKey",
    "ToolsPostExecute",
    "ToolsPreExecute",
    "WorkspaceKey",
    "credentialsPlugin",
    "defineTool",
    "jsonlStorePlugin",
    "llmRecorder",
    "llmReplayer",
    "mcpPlugin",
    "memoryStorePlugin",
    "openRouterLlm",
    "redactionPlugin",
    "sessionsPlugin",
    "sqliteStorePlugin",
  ]);
  assert.deepStrictEqual(Object.keys(exec).sort(), [
    "EXEC_ERRORS",
    "EXEC_ERROR_CODES",
    "FsAuthorize",
    "FsKey",
    "ShellKey",
    "TerminalsKey",
    "denoSandboxPlugin",
    "dockerSandboxPlugin",
    "fsPlugin",
    "noneSandboxPlugin",
    "probeSandboxProviders",
    "shellPlugin",
    "stdToolsPlugin",
    "subprocessPlugin",
    "terminalsPlugin",
    "workspacePlugin",
  ]);
});

Deno.test("every name `.` exports is the same value on its concept's subpath", () => {
  const subpaths = Object.entries(ENTRIES).filter(([entry]) => entry.split("/").length === 3);
  const orphans: string[] = [];
  for (const [root, module] of [["@terret/core", core], ["@terret/exec", exec]] as const) {
    for (const [name, value] of Object.entries(module)) {
      if (name.endsWith("ERRORS") || name.endsWith("ERROR_CODES")) continue;
      const home = subpaths.find(([entry, sub]) =>
        entry.startsWith(`${root}/`) && sub[name] === value
      );
      if (home === undefined) orphans.push(`${root}: ${name}`);
    }
  }
  assert.deepStrictEqual(orphans, []);
});
