/**
 * The declarations the catalogs are generated from: every package's exported events and plugins. A package that
 * declares events or plugins adds its lists here.
 *
 * @module
 */
import type { EventDefinition, PluginLike } from "@terret/hames";
import { LLM_EVENTS, llmRecorder, LlmRegistry, llmReplayer, openRouterLlm } from "@terret/core";

/** Events declared outside the kernel. */
export const CATALOG_EVENTS: readonly EventDefinition[] = [...LLM_EVENTS];

/** Plugins that can appear in a config row. */
export const CATALOG_PLUGINS: readonly PluginLike[] = [
  LlmRegistry as PluginLike,
  openRouterLlm as PluginLike,
  llmRecorder as PluginLike,
  llmReplayer as PluginLike,
];
