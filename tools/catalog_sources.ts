/**
 * The declarations the catalogs are generated from, discovered from what every package exports: each exported
 * event (or list of events) and each exported plugin. Declaring an event or a plugin and exporting it from its
 * package's `mod.ts` is all it takes to appear in `docs/events.md` and `docs/config-catalog.md`.
 *
 * @module
 */
import * as hames from "@terret/hames";
import {
  type EventDefinition,
  isEventDefinition,
  isServiceClass,
  type PluginLike,
} from "@terret/hames";
import * as core from "@terret/core";
import * as exec from "@terret/exec";
import * as ws from "@terret/ws";

const modules: readonly Record<string, unknown>[] = [hames, core, exec, ws];

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
