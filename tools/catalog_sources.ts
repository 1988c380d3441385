/**
 * The declarations the catalogs are generated from: every package's exported events and plugins. A package that
 * declares events or plugins adds its lists here.
 *
 * @module
 */
import type { EventDefinition, PluginLike } from "@terret/hames";
import { AgentDisposed } from "@terret/core";
import {
  denoSandboxPlugin,
  dockerSandboxPlugin,
  FsAuthorize,
  fsPlugin,
  noneSandboxPlugin,
  workspacePlugin,
} from "@terret/exec";

/** Events declared outside the kernel. */
export const CATALOG_EVENTS: readonly EventDefinition[] = [AgentDisposed, FsAuthorize];

/** Plugins that can appear in a config row. */
export const CATALOG_PLUGINS: readonly PluginLike[] = [
  workspacePlugin,
  noneSandboxPlugin,
  fsPlugin,
  dockerSandboxPlugin,
  denoSandboxPlugin,
];
