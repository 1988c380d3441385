/**
 * The declarations the catalogs are generated from, discovered from what every package exports: each exported
 * event (or list of events), each exported plugin and each exported error code table. Declaring an event or a plugin and exporting it from its
 * package's `mod.ts` or one of its subpath entries is all it takes to appear in `docs/events.md` and `docs/config-catalog.md`.
 *
 * @module
 */
import * as hames from "@terret/hames";
import {
  type ErrorCodes,
  type EventDefinition,
  isErrorCodes,
  isEventDefinition,
  isServiceClass,
  type PluginLike,
} from "@terret/hames";
import * as core from "@terret/core";
import * as coreAgents from "@terret/core/agents";
import * as coreLlm from "@terret/core/llm";
import * as coreLoop from "@terret/core/loop";
import * as coreMcp from "@terret/core/mcp";
import * as corePrompt from "@terret/core/prompt";
import * as coreRedaction from "@terret/core/redaction";
import * as coreSeams from "@terret/core/seams";
import * as coreSessions from "@terret/core/sessions";
import * as coreSubagents from "@terret/core/subagents";
import * as coreTools from "@terret/core/tools";
import * as exec from "@terret/exec";
import * as execFs from "@terret/exec/fs";
import * as execProcess from "@terret/exec/process";
import * as execSandbox from "@terret/exec/sandbox";
import * as execTools from "@terret/exec/tools";
import * as ws from "@terret/ws";
import * as acp from "@terret/acp";
import * as terret from "@terret/terret";

/** Every public entry: each package's `.` and each of its subpaths. */
const modules: readonly Record<string, unknown>[] = [
  hames,
  core,
  coreSeams,
  coreSessions,
  coreTools,
  corePrompt,
  coreAgents,
  coreLoop,
  coreLlm,
  coreRedaction,
  coreMcp,
  coreSubagents,
  exec,
  execFs,
  execSandbox,
  execProcess,
  execTools,
  ws,
  acp,
  terret,
];

/** Every exported event, each once, outside the kernel's own list. */
export const CATALOG_EVENTS: readonly EventDefinition[] = unique(
  modules.flatMap((module) =>
    Object.values(module).flatMap((value) =>
      isEventDefinition(value)
        ? [value]
        : Array.isArray(value) && value.length > 0 && value.every(isEventDefinition)
        ? value
        : []
    )
  ),
);

/** Every exported plugin that can appear in a config row. */
export const CATALOG_PLUGINS: readonly PluginLike[] = unique(
  modules.flatMap((module) => Object.values(module).filter(isPlugin)),
);

/** Every exported error code table. */
export const CATALOG_ERRORS: readonly ErrorCodes<string>[] = unique(
  modules.flatMap((module) => Object.values(module).filter(isErrorCodes)),
);

function isPlugin(value: unknown): value is PluginLike {
  if (isServiceClass(value)) return true;
  const candidate = value as { name?: unknown; apply?: unknown } | null;
  return typeof candidate === "object" && candidate !== null &&
    typeof candidate.name === "string" &&
    typeof candidate.apply === "function";
}

function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}
