/**
 * The declarations the catalogs are generated from: every package's exported events and plugins. A package that
 * declares events or plugins adds its lists here.
 *
 * @module
 */
import type { EventDefinition, PluginLike } from "@terret/hames";
import {
  AgentDisposed,
  jsonlStorePlugin,
  memoryStorePlugin,
  SESSION_EVENT_TYPES,
  SESSION_LIVE_EVENTS,
  sessionsPlugin,
  sqliteStorePlugin,
} from "@terret/core";
import {
  noneSandboxPlugin,
  shellPlugin,
  subprocessPlugin,
  terminalsPlugin,
  workspacePlugin,
} from "@terret/exec";

/** Events declared outside the kernel. */
export const CATALOG_EVENTS: readonly EventDefinition[] = [
  AgentDisposed,
  ...SESSION_EVENT_TYPES,
  ...SESSION_LIVE_EVENTS,
];

/** Plugins that can appear in a config row. */
export const CATALOG_PLUGINS: readonly PluginLike[] = [
  workspacePlugin,
  noneSandboxPlugin,
  sessionsPlugin,
  memoryStorePlugin,
  jsonlStorePlugin,
  sqliteStorePlugin,
  subprocessPlugin,
  shellPlugin,
  terminalsPlugin,
];
