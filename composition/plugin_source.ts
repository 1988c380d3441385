/**
 * Plugin sources: where the code behind a row's plugin name comes from. Three kinds: built-in (statically
 * imported by the meta package, so compiled binaries need no dynamic import), a bundle's own module (trusted as
 * part of the bundle), and a profile `plugins:` entry, which runs code named by config and so needs
 * `--allow-config-code` when it is a file path or URL.
 *
 * @module
 */
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { isServiceClass, type PluginLike, pluginName } from "@terret/hames";
import { TerretError } from "./errors.ts";

/** Where a plugin's code comes from. */
export interface PluginSource {
  /** The plugin name rows use. */
  readonly name: string;
  /** Who declared it, for messages: `built-in`, `bundle base (/…/base.yml)`, `profile (/…/profile.yml line 4)`. */
  readonly declaredBy: string;
  /** The specifier as written (absent for built-ins). */
  readonly specifier?: string;
  /** The module to import: an absolute URL, or a bare specifier resolved by the host's import map. */
  readonly module?: string;
  /** The export holding the plugin (`default` unless the specifier ends in `#name`). */
  readonly exportName?: string;
  /** Why loading it needs `--allow-config-code`, when it does. */
  readonly consent?: string;
  /** The built-in plugin itself. */
  readonly builtin?: PluginLike;
  /** A local directory the host must be able to read to import the module. */
  readonly readScope?: string;
}

/** True for a specifier that names a file: relative, absolute, `~`, a Windows drive or a `file:` URL. */
export function isPathShaped(specifier: string): boolean {
  return /^(\.{1,2}(\/|\\|$)|\/|~|[A-Za-z]:[\\/]|file:)/.test(specifier) ||
    specifier.includes("\\");
}

/** True for a URL-shaped specifier (`https:`, `npm:`, `jsr:`, `data:` …), `file:` included. */
export function isUrlShaped(specifier: string): boolean {
  return /^[a-z][a-z0-9+.-]+:/i.test(specifier) && !/^[A-Za-z]:[\\/]/.test(specifier);
}

/**
 * Describes a module specifier declared by a bundle or a profile.
 *
 * @param base the URL of the declaring file; relative specifiers resolve against it
 * @param consent why the module needs consent, if it does (a profile's path or URL entry, or a bundle found by
 *   path)
 */
export function moduleSource(
  name: string,
  specifier: string,
  base: URL,
  declaredBy: string,
  consent?: string,
): PluginSource {
  const hash = specifier.lastIndexOf("#");
  const target = hash > 0 ? specifier.slice(0, hash) : specifier;
  const exportName = hash > 0 ? specifier.slice(hash + 1) : "default";
  const local = isPathShaped(target) && !target.startsWith("~");
  const module = local ? new URL(target, base).href : target;
  const readScope = module.startsWith("file:") ? dirname(fileURLToPath(module)) : undefined;
  return {
    name,
    declaredBy,
    specifier,
    module,
    exportName,
    ...(consent === undefined ? {} : { consent }),
    ...(readScope === undefined ? {} : { readScope }),
  };
}

/**
 * Loads a plugin from its source.
 *
 * @param allowConfigCode the operator's consent to run code named by config
 * @throws {TerretError} `ConfigCodeRefused` for a consent-gated source without consent (nothing is imported),
 *   `PluginLoadFailed` when the module cannot be imported or does not export the named plugin
 */
export async function loadPlugin(
  source: PluginSource,
  allowConfigCode: boolean,
): Promise<PluginLike> {
  if (source.builtin !== undefined) return source.builtin;
  const origin = `"${source.specifier}" (declared by ${source.declaredBy})`;
  if (source.consent !== undefined && !allowConfigCode) {
    throw new TerretError(
      "ConfigCodeRefused",
      `Cannot load plugin "${source.name}" from ${origin}: ${source.consent}, which runs code named by config; pass --allow-config-code to allow it`,
      { details: { plugin: source.name, specifier: source.specifier } },
    );
  }
  let namespace: Record<string, unknown>;
  try {
    namespace = await import(source.module!);
  } catch (error) {
    throw new TerretError(
      "PluginLoadFailed",
      `Cannot load plugin "${source.name}" from ${origin}: ${
        (error as Error).message.split("\n")[0]
      }`,
      { cause: error, details: { plugin: source.name } },
    );
  }
  const value = namespace[source.exportName!];
  if (!isPluginLike(value)) {
    throw new TerretError(
      "PluginLoadFailed",
      `Cannot load plugin "${source.name}" from ${origin}: the module has no plugin export "${source.exportName}"`,
      { details: { plugin: source.name } },
    );
  }
  if (pluginName(value) !== source.name) {
    throw new TerretError(
      "PluginLoadFailed",
      `Cannot load plugin "${source.name}" from ${origin}: the export is plugin "${
        pluginName(value)
      }"`,
      { details: { plugin: source.name } },
    );
  }
  return value;
}

/** True for a functional plugin or a `Service` subclass. */
export function isPluginLike(value: unknown): value is PluginLike {
  if (isServiceClass(value)) return true;
  return typeof value === "object" && value !== null &&
    typeof (value as { name?: unknown }).name === "string" &&
    typeof (value as { apply?: unknown }).apply === "function";
}
